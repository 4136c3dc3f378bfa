"""Critical points on integer keys (app/clipbridge/core/critical.py) against stepping the bit pattern one ulp at a time.

DType.next_up/next_down walk the pattern itself (dtypes._step: +-1 on the bits, both zeros to the smallest
subnormal of the direction, the infinities fixed); clipbridge.core.critical computes the same neighbours from signed keys,
vectorized and cached. Every float type's neighbours of a grid of values (zeros, subnormals, the smallest normal,
the extremes, the infinities, values that do not fit the type), in the order _around always listed them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from clipbridge.core import critical
from clipbridge.core.dtypes import ALL, DType
from clipbridge.core.meaning import Bound, Meaning, ScaleBias
from clipbridge.core import drift
from clipbridge.dialects.kit.common import carrier_neighbours

FLOATS = [d for d in ALL if d.is_float]
INTS = [d for d in ALL if not d.is_float]


def _walk(dt: DType, v: object, reach: int) -> list[float]:
    """The value (rounded once) and its neighbours by stepping the pattern: [v, up1, down1, up2, down2, ...]."""
    base = dt.round(v) if dt.is_float else v
    out, up, down = [base], base, base
    for _ in range(reach):
        up, down = dt.next_up(up), dt.next_down(down)
        out += [up, down]
    return out


def _grid(dt: DType) -> list[object]:
    tiny = float(np.finfo(np.float64).tiny) if dt.bits == 64 else float(critical._ml_tiny(dt))
    sub = float(np.asarray(1, dtype=dt.uint_view).view(dt.np_dtype))
    return [0.0, -0.0, sub, -sub, 2 * sub, tiny, -tiny, 1.0, -1.0, 6.0, 0.1, -2.5, float(dt.highest()),
            float(dt.lowest()), math.inf, -math.inf, 1e300, -1e300, Fraction(1, 3), 2**70 + 1]


def _same(a: np.ndarray, b: list[float], dt: DType) -> bool:
    want = dt.array(b)
    return np.array_equal(a.view(dt.uint_view), want.view(dt.uint_view))


@pytest.mark.parametrize("reach", [1, 2, 3])
@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_float_neighbours_match_the_pattern_walk(dt: DType, reach: int) -> None:
    for v in _grid(dt):
        got = critical.bound_points(dt, v, reach)
        assert _same(got, _walk(dt, v, reach), dt), (dt.name, v, got)


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_integer_neighbours_saturate_step_by_step(dt: DType) -> None:
    lo, hi = int(dt.lowest()), int(dt.highest())
    for v in [0, 1, -1, lo, hi, lo + 1, hi - 1, 2.5, -2.5, 1e30, -1e30, Fraction(7, 2)]:
        want = [max(lo, min(hi, int(p))) for p in _walk(dt, v, 2)]
        assert critical.bound_points(dt, v, 2).tolist() == want, (dt.name, v)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_zero_signs_are_cached_apart(dt: DType) -> None:
    """-0.0 == 0.0 (and hashes alike), yet each keeps its own pattern as the centre of its points."""
    neg, pos = critical.bound_points(dt, -0.0), critical.bound_points(dt, 0.0)
    assert np.signbit(neg[:1].astype(np.float64))[0] and not np.signbit(pos[:1].astype(np.float64))[0]


@pytest.mark.parametrize("dt", ALL, ids=lambda d: d.name)
def test_critical_points_are_unique_and_ordered(dt: DType) -> None:
    """Each point once, the dtype's fixed points first, then each bound's neighbours in order."""
    m = Meaning("directml", "CLIP", dt, Bound(dt.round(6.0) if dt.is_float else 6),
                Bound(dt.round(0.1) if dt.is_float else 100), scale_bias=ScaleBias(3.0, 0.5) if dt.is_float else None)
    pts = drift.critical_points(dt, (m,))
    keys = pts.view(dt.uint_view) if dt.is_float else pts
    assert len(set(keys.tolist())) == len(keys)
    fixed = critical.fixed_points(dt)
    fk = fixed.view(dt.uint_view) if dt.is_float else fixed
    firsts = list(dict.fromkeys(fk.tolist()))
    assert keys[:len(firsts)].tolist() == firsts
    assert critical.fixed_points(dt).flags.writeable is False


@pytest.mark.parametrize("dt", [d for d in FLOATS if d.bits == 16], ids=lambda d: d.name)
def test_one_value_path_matches_the_vectorized_keys(dt: DType) -> None:
    """float_around_one (one bound, Python ints) gives float_around's patterns for every 16-bit pattern, NaNs
    and both zeros included."""
    pats = np.arange(1 << 16, dtype=np.uint64).astype(dt.uint_view)
    for reach in (1, 2, 3):
        want = critical.float_around(dt, pats, reach).view(dt.uint_view).reshape(len(pats), -1)
        for p in range(0, 1 << 16, 7 if reach > 1 else 1):
            got = critical.float_around_one(dt, p, reach).view(dt.uint_view)
            assert got.tolist() == want[p].tolist(), (dt.name, hex(p), reach)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_lazy_carrier_neighbours_are_the_bound_points(dt: DType) -> None:
    """carrier_neighbours yields its first point without computing the rest: the same values, signs of zero
    included, as bound_points lists."""
    for v in _grid(dt):
        got = np.asarray(list(carrier_neighbours(v, dt)), dtype=np.float64)
        want = critical.bound_points(dt, v).astype(np.float64)
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (dt.name, v)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
def test_centre_is_the_first_bound_point(dt: DType) -> None:
    """centre (dt.round on Python numbers) equals bound_points' first point, the one-rounding array path: on the
    grid, on every 16-bit value, on the midpoints between neighbours (ties to even) and just off them."""
    values: list[object] = list(_grid(dt))
    if dt.bits == 16:
        pats = np.arange(1 << 16, dtype=np.uint64).astype(dt.uint_view)
        vals = pats.view(dt.np_dtype).astype(np.float64)
        vals = np.sort(vals[np.isfinite(vals)])
        mids = (vals[:-1] + vals[1:]) / 2  # exact in a double
        values += vals.tolist() + mids.tolist() + np.nextafter(mids, np.inf).tolist() \
            + np.nextafter(mids, -np.inf).tolist()
    else:
        rng = np.random.default_rng(28)
        values += (rng.standard_normal(2000) * 10.0 ** rng.integers(-40, 40, 2000)).tolist()
    for v in values:
        got, want = critical.centre(dt, v), critical.bound_points(dt, v)[:1].astype(np.float64)
        assert np.array_equal(np.asarray([got]).view(np.uint64), want.view(np.uint64)), (dt.name, v)
