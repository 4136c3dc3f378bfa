"""The proof of a fix: the written model on B against the original on A, on the same inputs plus generated ones.

Until the whole-model diff (app.diff) is on this branch, the proof is this module's own comparison with the
diff's body shape (verdict, engines, inputs, outputs, first_divergence, nodes) and its rule for equality:
NaN equals NaN, infinities must match exactly, finite values within per-dtype (rtol, atol).
"""

from __future__ import annotations

import numpy as np

SEED = 25  # the generator's fixed seed, reported in the proof
DYNAMIC_DIM = 1
MAX_ELEMENTS = 1 << 22
# Planted at the first positions of every float input: NaN, the infinities, beyond float16's range, FLT_MAX.
SPECIALS = (np.nan, np.inf, -np.inf, 7.0e4, -7.0e4, 3.4028235e38, -3.4028235e38, 0.0, -0.0)
TOLERANCES = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3), "float64": (1e-9, 1e-12)}

Feeds = dict[str, np.ndarray]


def _ulps(v: float, dt: np.dtype) -> list[float]:
    t = dt.type(v)
    return [float(np.nextafter(t, dt.type(-np.inf))), float(t), float(np.nextafter(t, dt.type(np.inf)))]


def generate(specs: list[dict], bounds: list[float], seed: int = SEED) -> list[Feeds]:
    """Two feed sets from the graph inputs' specs ({name, shape, dtype}): clean (seeded normal values) and the
    same with NaN, +-inf, out-of-float16 values and each constant clip bound (and one ULP around it) planted."""
    rng = np.random.default_rng(seed)
    clean: Feeds = {}
    special: Feeds = {}
    for s in specs:
        dims = [d if isinstance(d, int) and d > 0 else DYNAMIC_DIM for d in s["shape"]]
        dt = np.dtype(s["dtype"])
        n = int(np.prod(dims, dtype=np.int64))
        if n > MAX_ELEMENTS:
            raise ValueError(f"graph input {s['name']!r} has {n} elements; give its values in an .npz")
        if dt.kind == "f":
            a = (rng.standard_normal(n) * 4).astype(dt)
            b = a.copy()
            plant = [v for v in (*SPECIALS, *(u for x in bounds for u in _ulps(x, dt))) if dt != np.float16
                     or not np.isfinite(v) or abs(v) <= 65504]
            with np.errstate(over="ignore"):
                b[: min(n, len(plant))] = np.asarray(plant[:n], dtype=np.float64).astype(dt)
        elif dt.kind == "b":
            a = rng.integers(0, 2, n).astype(dt)
            b = a
        else:
            a = rng.integers(-8, 9, n).astype(dt)
            b = a
        clean[s["name"]] = a.reshape(dims)
        special[s["name"]] = b.reshape(dims)
    return [clean, special]


def differing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where b differs from a: NaN equals NaN, infinities exact, finite values within the dtype's tolerance."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.ones(max(a.size, b.size, 1), dtype=bool)
    if a.dtype.kind != "f":
        return a != b
    rtol, atol = TOLERANCES.get(a.dtype.name, (0.0, 0.0))
    x, y = a.astype(np.float64), b.astype(np.float64)
    nx, ny = np.isnan(x), np.isnan(y)
    with np.errstate(invalid="ignore", over="ignore"):
        fin = np.isfinite(x) & np.isfinite(y)
        close = np.abs(x - y) <= atol + rtol * np.abs(x)
    return ~((nx & ny) | (~fin & ~nx & ~ny & (x == y)) | (fin & close))


def body(runs_a: list[dict[str, np.ndarray]], runs_b: list[dict[str, np.ndarray]], engines: list[dict],
         given: bool) -> dict:
    """The diff-shaped proof body from A's and B's outputs over the same feed sets."""
    outputs = []
    for name in runs_a[0]:
        diff = total = 0
        for ra, rb in zip(runs_a, runs_b):
            diff += int(differing(ra[name], rb.get(name, np.array([]))).sum())
            total += int(np.asarray(ra[name]).size)
        outputs.append({"name": name, "differing": diff, "total": total})
    equal = all(o["differing"] == 0 for o in outputs)
    return {"verdict": "equal" if equal else "unexplained", "engines": engines,
            "inputs": {"kind": "given" if given else "generated", "seed": SEED, "sets": len(runs_a)},
            "outputs": outputs, "first_divergence": None, "nodes": []}


def bit_identical(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two runs gave the same bits for every output (NaN payloads included)."""
    return a.keys() == b.keys() and all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes() for k in a)
