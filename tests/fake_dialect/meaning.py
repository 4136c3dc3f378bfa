"""fake.clamp, resolved to a Meaning. The "fake spec" is this package's own docstring text, cited by section:

  1. fake.clamp(x, lo, hi) = max(lo, min(x, hi)): when lo > hi every output is lo.
  2. lo and hi are values of the tensor type: a float number rounds once to f32; an i32 bound must be an integer.
  3. v1 refuses lo > hi; v2 computes it (rule 1).
  4. A NaN input propagates; a NaN bound leaves that side unbounded.
"""

from __future__ import annotations

from clipbridge.core.dtypes import FLOAT32, INT32, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.meaning import Bound, Meaning, NanBound, NanInput, Order, State
from clipbridge.core.suggest import one_of
from clipbridge.dialects.kit.common import typed_scalar_bound

from tests.fake_dialect.spec import NAME, VERSIONS, FakeSpec

SRC = "fake spec (tests/fake_dialect/meaning.py)"
DTYPES: dict[str, DType] = {"f32": FLOAT32, "i32": INT32}
NAME_OF = {dt.name: n for n, dt in DTYPES.items()}


def version_fake(text: str, loc: str = "version") -> str:
    """Section 3: the versions are v1 and v2."""
    key = text.strip().lower()
    if key not in VERSIONS:
        raise SpecError(one_of("Unknown fake version", text, VERSIONS), loc)
    return key


def dtype_fake(name: str, loc: str = "dtype") -> DType:
    """Section 2: the tensor types are f32 and i32."""
    key = name.strip().lower()
    if key not in DTYPES:
        raise SpecError(one_of("Unknown fake dtype", name, DTYPES), loc)
    return DTYPES[key]


def bound_fake(value: object, dt: DType, side: str) -> Bound:
    """Section 2: a bound is a value of T (a float rounds once to f32; an i32 bound must be an integer)."""
    return typed_scalar_bound(value, dt, side, side, "as f32", NAME_OF[dt.name], "fake spec section 2")


def order_fake(version: str, lo: Bound, hi: Bound) -> tuple[Order, str | None]:
    """Sections 1 and 3: lo > hi gives lo (v2); v1 refuses it."""
    if version == "v2":
        return Order.MIN_WINS, None
    crossed = not (lo.is_nan or hi.is_nan) and lo.value > hi.value
    return Order.REJECTED, ("v1 refuses lo > hi" if crossed else None)


def resolve(spec: FakeSpec) -> Meaning:
    """fake.clamp(x, lo, hi) = max(lo, min(x, hi)) (section 1), NaN input propagates, NaN bound ignored (4)."""
    version = version_fake(spec.version)
    dt = dtype_fake(spec.dtype)
    lo, hi = bound_fake(spec.lo, dt, "lo"), bound_fake(spec.hi, dt, "hi")
    order, reason = order_fake(version, lo, hi)
    rules = (f"fake.clamp {version}: max(lo, min(x, hi)) ({SRC} section 1)",
             "lo > hi gives lo" if version == "v2" else "lo > hi is refused")
    return Meaning(NAME, f"fake.clamp ({version})", dt, lo, hi, order=order, nan_input=NanInput.PROPAGATE,
                   nan_bound=NanBound.IGNORE, state=State.REJECTED if reason else State.DEFINED, reason=reason,
                   rules=rules)
