"""The one list of engines (`LINES`: a line per engine module) and its lookups.

The order of LINES is the order of `clipbridge --version`, GET /v1/version and every "choose from" list. An engine
outside this package (a plugin, tests/fake_engine) is one line too: its module's dotted path in the environment
variable CLIPBRIDGE_ENGINES (comma-separated), read after LINES. The environment, not a call, because the server runs
every engine in a fresh interpreter (clipbridge.engines.sandbox), which inherits the environment and nothing else.
`register(RUNTIME)` adds one to this process only (a unit test). Either way before the API or CLI is imported:
their allowed values (pydantic Literals, the OpenAPI enums, help texts) are read from here when they are built.
"""

from __future__ import annotations

import importlib
import os

from clipbridge.engines.runtimes.base import Runtime

# One line per engine: the module under clipbridge.engines.runtimes that exports its RUNTIME.
LINES = (
    "onnx_reference",
    "onnxruntime",
    "openvino",
    "jax",
    "tosa_reference",
    "litert",
    "torch",
    "coreml",
    "onnxruntime_cuda",
    "onnxruntime_tensorrt",
    "openvino_gpu",
)
# The diff's engines when none is named: the two the [diff] extra installs.
DEFAULT_DIFF = ("onnxruntime", "openvino")
PLUGINS_ENV = "CLIPBRIDGE_ENGINES"

_RUNTIMES: dict[str, Runtime] = {}


def _load() -> dict[str, Runtime]:
    if not _RUNTIMES:
        plugins = [p.strip() for p in os.environ.get(PLUGINS_ENV, "").split(",") if p.strip()]
        for module in [f"{__package__}.{line}" for line in LINES] + plugins:
            _RUNTIMES.setdefault((rt := _runtime(module)).name, rt)  # a plugin never replaces a listed engine
    return _RUNTIMES


def _runtime(module: str) -> Runtime:
    try:
        return importlib.import_module(module).RUNTIME
    except (ImportError, AttributeError) as exc:  # the operator's setting: say which, not a bare traceback
        raise RuntimeError(f"the engine registry (LINES or {PLUGINS_ENV}) names {module!r}, which is no engine "
                           f"module (a module exporting RUNTIME): {exc}") from None


def register(runtime: Runtime) -> None:
    """Add (or replace) an engine after the listed ones: the one line a new engine outside this package needs."""
    _load()[runtime.name] = runtime


def unregister(name: str) -> None:
    _load().pop(name, None)


def all_runtimes() -> tuple[Runtime, ...]:
    return tuple(_load().values())


def names(role: str | None = None) -> tuple[str, ...]:
    """Every engine name, or those with `role` ("diff": runs a whole ONNX model; "backend": a dialect's backend)."""
    return tuple(rt.name for rt in _load().values() if role is None or role in rt.roles)


def get(name: str) -> Runtime | None:
    return _load().get(name)


def versions() -> dict[str, str | None]:
    """Each engine's installed version (None: not installed), one entry per engine library: a device entry
    (`onnxruntime:cuda`) runs its base's library, whose version is already listed."""
    return {rt.name: rt.version() for rt in _load().values() if rt.device is None}
