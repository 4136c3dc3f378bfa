"""How every engine run is configured, and the host facts the engines' answers depend on.

Engines pick their arithmetic from the CPU they run on: OpenVINO's CPU plugin defaults INFERENCE_PRECISION_HINT to
bf16 on a CPU with bf16 support and runs a float32 model's convolutions (and the clips fused into them) in bf16;
its bf16 kernels flush subnormals on avx512_bf16 and truncate bounds on AVX2-only CPUs. Every run in app/ goes
through this module, so that the precision is pinned (precision "model", the default) or the engine's deployed
defaults are used on request ("deployed"), and the settings that ran are reported. The optional engines are
imported inside the functions. See docs/host-differences.md.
"""

from __future__ import annotations

import copy
import os
import platform
import threading
from functools import lru_cache
from importlib import metadata
from typing import Any, Literal

from clipbridge.core.ondisk import folder_of
from clipbridge.core.settings import Settings
from clipbridge.engines import threads
from clipbridge.engines.budget import describe

Precision = Literal["model", "deployed"]
PRECISIONS: tuple[str, ...] = ("model", "deployed")
# Where onnxruntime resolves the external data of a model given as bytes (an OnDisk model: clipbridge.core.ondisk).
EXTERNAL_FOLDER = "session.model_external_initializers_file_folder_path"

# The CPU flags (as /proc/cpuinfo spells them) that change an engine's arithmetic.
CPU_FLAGS = ("avx2", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "avx512_fp16", "amx_tile",
             "amx_bf16", "amx_fp16", "f16c")
# oneDNN's ISA tiers, lowest first, as ONEDNN_MAX_CPU_ISA names them (aliases map onto the same tier).
ISA_TIERS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
             "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16")
ISA_ALIASES = {"AVX10_1_512": "AVX512_CORE_FP16", "AVX10_1_512_AMX": "AVX512_CORE_AMX",
               "AVX10_1_512_AMX_FP16": "AVX512_CORE_AMX_FP16"}
# The three behaviours of OpenVINO's CPU plugin on bf16 Clamp, by the ISA its kernels use (measured with
# openvino 2026.4 by capping ONEDNN_MAX_CPU_ISA on an avx512_bf16 CPU; docs/host-differences.md).
BF16_NATIVE = "bf16-native"        # avx512_bf16 (or newer): subnormal bf16 inputs and bounds flush to zero
BF16_AVX512 = "bf16-avx512"        # avx512_core without bf16: no flush, bounds rounded to nearest even
BF16_AVX2 = "bf16-avx2"            # AVX2 or older: no flush, bounds truncated toward zero
BF16_UNKNOWN = "bf16-unknown"      # not x86-64 (or no flags readable): none of the measured variants applies
X86 = ("x86_64", "amd64")
ENGINES = ("onnxruntime", "openvino", "jax", "jaxlib", "torch", "ai-edge-litert", "coremltools", "tosa-tools")
OV_TYPES = {"f32": "f32", "f64": "f32", "f16": "f16", "bf16": "bf16"}  # element type -> hint (f64 runs in f32)
HALF_CAPS = {"f16": "FP16", "bf16": "BF16"}  # the OPTIMIZATION_CAPABILITIES entry each half type needs


def cpu_flags() -> dict[str, bool]:
    """The CPU flags that matter, from /proc/cpuinfo (Linux); empty where they cannot be read."""
    return dict(_cpu_flags())


@lru_cache(maxsize=1)
def _cpu_flags() -> tuple[tuple[str, bool], ...]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    have = set(line.split(":", 1)[1].split())
                    return tuple((f, f in have) for f in CPU_FLAGS)
    except OSError:
        pass
    return ()


def _tier(name: str) -> int | None:
    name = ISA_ALIASES.get(name.strip().upper(), name.strip().upper())
    return ISA_TIERS.index(name) if name in ISA_TIERS else None


def _cap_env() -> str:
    return (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or "").strip()


def cpu_isa() -> str | None:
    """The highest oneDNN ISA tier the CPU has, capped by ONEDNN_MAX_CPU_ISA when set; None off x86-64."""
    return _isa(_cap_env())


def _isa(cap_name: str) -> str | None:
    f = cpu_flags()
    if not f or platform.machine().lower() not in X86:
        return None
    if f["amx_tile"] and f["amx_bf16"]:
        top = "AVX512_CORE_AMX_FP16" if f["amx_fp16"] else "AVX512_CORE_AMX"
    elif f["avx512_fp16"]:
        top = "AVX512_CORE_FP16"
    elif f["avx512_bf16"]:
        top = "AVX512_CORE_BF16"
    elif all(f[k] for k in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        top = "AVX512_CORE"
    elif f["avx2"]:
        top = "AVX2"
    else:
        top = "SSE41"
    cap = _tier(cap_name) if cap_name else None
    return ISA_TIERS[min(ISA_TIERS.index(top), cap)] if cap is not None else top


def openvino_bf16_variant() -> str:
    """Which of the measured bf16 behaviours OpenVINO's CPU plugin shows on this host (see BF16_*)."""
    isa = cpu_isa()
    if isa is None:
        return BF16_UNKNOWN
    tier = ISA_TIERS.index(isa)
    if tier >= ISA_TIERS.index("AVX512_CORE_BF16"):
        return BF16_NATIVE
    return BF16_AVX512 if tier >= ISA_TIERS.index("AVX512_CORE") else BF16_AVX2


def engine_versions() -> dict[str, str | None]:
    """Installed engine distributions and their versions (None: not installed); read without importing them."""
    out: dict[str, str | None] = {}
    for name in ENGINES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def host_facts() -> dict[str, Any]:
    """The host facts engines depend on: CPU flags and ISA, OpenVINO's capabilities and defaults, versions."""
    return copy.deepcopy(_host_facts(os.environ.get("ONEDNN_MAX_CPU_ISA"), os.environ.get("DNNL_MAX_CPU_ISA")))


@lru_cache(maxsize=4)
def _host_facts(_isa_env: str | None, _dnnl_env: str | None) -> dict[str, Any]:
    return {"machine": platform.machine(), "cpu_count": os.cpu_count(), "cpu_flags": cpu_flags(),
            "onednn_max_cpu_isa": _isa_env or _dnnl_env, "cpu_isa": cpu_isa(),
            "openvino_bf16_variant": openvino_bf16_variant(), "openvino": _openvino_facts(),
            "engines": engine_versions()}


def _openvino_facts() -> dict[str, Any] | None:
    try:
        import openvino as ov
    except ImportError:
        return None
    try:
        core = ov.Core()
        caps = openvino_capabilities(list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")))
        return {"version": ov.__version__.split("-")[0], "optimization_capabilities": caps,
                "default_inference_precision": _deployed_hint(caps) or
                _type_name(core.get_property("CPU", "INFERENCE_PRECISION_HINT")),
                "default_execution_mode": str(core.get_property("CPU", "EXECUTION_MODE_HINT")).split(".")[-1],
                "emulated_isa": isa_capped()}
    except Exception as exc:  # a plugin that cannot start: reported, never a crash of /v1/dialects
        return {"version": getattr(ov, "__version__", "?"), "error": str(exc).splitlines()[0][:200]}


def isa_capped() -> bool:
    """ONEDNN_MAX_CPU_ISA (or DNNL_) caps oneDNN below what the CPU has: a host variant emulated on this CPU."""
    return _isa(_cap_env()) != _isa("")


def openvino_capabilities(raw: list[str]) -> list[str]:
    """The CPU plugin's OPTIMIZATION_CAPABILITIES as a host of the (possibly capped) ISA reports them: the plugin
    reads BF16 from the CPU itself, while its kernels obey ONEDNN_MAX_CPU_ISA, so under a cap below
    avx512_core_bf16 BF16 is dropped (on a real host of that ISA the plugin does not offer it)."""
    isa = cpu_isa()
    if isa is not None and isa_capped() and ISA_TIERS.index(isa) < ISA_TIERS.index("AVX512_CORE_BF16"):
        return [c for c in raw if c != "BF16"]
    return list(raw)


def _type_name(t: Any) -> str:
    """An OpenVINO element type's short name (f32, bf16, ...); 'dynamic' when the plugin decides per node."""
    name = getattr(t, "get_type_name", None)
    return str(name()) if callable(name) else str(t)


def _model_precision(model: Any, caps: list[str]) -> str:
    """The model's own float type as an inference precision: f32 when any node computes in f32/f64 (or none
    is floating), otherwise its one half type when the CPU plugin offers it, else f32."""
    kinds = {_type_name(out.get_element_type()) for op in model.get_ordered_ops() for out in op.outputs()}
    floats = {OV_TYPES[k] for k in kinds if k in OV_TYPES}
    if len(floats) == 1 and (half := next(iter(floats))) != "f32" and HALF_CAPS[half] in caps:
        return half
    return "f32"


def openvino_compile(model: Any, precision: Precision = "model", device: str = "CPU") -> tuple[Any, str]:
    """(compiled model, effective inference precision read back from it). "model" pins the inference precision
    to the model's own element type (f32 stays f32) and keeps denormals; "deployed" takes the plugin's defaults."""
    core = ov_core()
    config: dict[str, Any] = {}
    caps = openvino_capabilities(list(core.get_property(device, "OPTIMIZATION_CAPABILITIES")))
    if precision == "model":
        config = {"INFERENCE_PRECISION_HINT": _model_precision(model, caps), "EXECUTION_MODE_HINT": "ACCURACY"}
        if device == "CPU":
            config["CPU_DENORMALS_OPTIMIZATION"] = False
    elif precision == "deployed":
        if (hint := _deployed_hint(caps)) is not None:
            config = {"INFERENCE_PRECISION_HINT": hint}
    else:
        raise ValueError(f"precision is 'model' or 'deployed', got {precision!r}")
    threads.openvino_config(config, device)
    compiled = core.compile_model(model, device, config)
    threads.record_openvino(compiled)
    return compiled, _type_name(compiled.get_property("INFERENCE_PRECISION_HINT"))


def _deployed_hint(caps: list[str]) -> str | None:
    """Under an emulated ISA without bf16 the plugin still defaults to bf16 (read from the CPU) and its capped
    kernels crash on it: use the f32 default a real host of that ISA has. None: leave the plugin's default."""
    return "f32" if isa_capped() and "BF16" not in caps else None


def openvino_read(xml: str, weights: bytes | None) -> Any:
    """An ov.Model from IR text and its weights (trusted bytes only: clipbridge's own emitted IR)."""
    import numpy as np
    import openvino as ov
    return ov_core().read_model(xml, ov.Tensor(np.frombuffer(weights or b"\0", dtype=np.uint8).copy()))


@lru_cache(maxsize=1)
def ov_core() -> Any:
    import openvino as ov
    return ov.Core()


def onnxruntime_options(precision: Precision = "model") -> tuple[Any, dict[str, Any]]:
    """(SessionOptions, the settings they pin). "model": no graph rewrites (each node runs as written), denormals
    kept, deterministic kernels; "deployed": onnxruntime's defaults (every graph optimization)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if precision == "model":
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.add_session_config_entry("session.set_denormal_as_zero", "0")
        opts.use_deterministic_compute = True
    elif precision != "deployed":
        raise ValueError(f"precision is 'model' or 'deployed', got {precision!r}")
    threads.onnxruntime_threads(opts)
    settings = {"engine": "onnxruntime", "version": ort.__version__, "precision": precision,
                "providers": ["CPUExecutionProvider"],
                "graph_optimization_level": str(opts.graph_optimization_level).split(".")[-1],
                "denormal_as_zero": False, "deterministic_compute": bool(opts.use_deterministic_compute),
                # 0: one thread per core (clipbridge.engines.threads sets a count). Clip is elementwise: same outputs.
                "intra_op_num_threads": int(opts.intra_op_num_threads)}
    return opts, settings


def onnxruntime_session(model_bytes: bytes, precision: Precision = "model",
                        providers: tuple[str, ...] = ("CPUExecutionProvider",)) -> tuple[Any, dict[str, Any]]:
    """(InferenceSession on `providers`, the CPU's unless an engine entry names a device, and the settings that
    ran). "model" turns the CUDA provider's TF32 off: float32 then runs in float32, as on the CPU."""
    import onnxruntime as ort
    opts, settings = onnxruntime_options(precision)
    if (folder := folder_of(model_bytes)) is not None:  # the weights stay in their files: read them in place
        opts.add_session_config_entry(EXTERNAL_FOLDER, folder)
    tf32 = {"CUDAExecutionProvider": {"use_tf32": "0"}} if precision == "model" else {}
    session = ort.InferenceSession(model_bytes, opts, providers=[(p, tf32.get(p, {})) for p in providers])
    settings["providers"] = list(session.get_providers())
    return session, settings


def openvino_settings(precision: Precision, inference_precision: str) -> dict[str, Any]:
    """What an OpenVINO run reports: the precision asked for and the one the compiled model read back."""
    facts = host_facts()
    ov_facts = facts.get("openvino") or {}
    return {"engine": "openvino", "version": ov_facts.get("version"), "precision": precision,
            "inference_precision": inference_precision, "bf16_variant": facts["openvino_bf16_variant"],
            **threads.openvino_reported()}


# --- what ran: each engine run records its settings on the calling thread; app/clipbridge/service/execute.py collects them ----------

_RAN = threading.local()


def record_run(settings: dict[str, Any]) -> None:
    """Remember the settings an engine run used (read back by take_run on the same thread)."""
    _RAN.value = dict(settings)


def take_run() -> dict[str, Any] | None:
    """The settings of the last engine run on this thread (None when none ran since the last take)."""
    value = getattr(_RAN, "value", None)
    _RAN.value = None
    return value


@lru_cache(maxsize=1)
def jax_flushes_subnormals() -> bool:
    """Whether XLA's CPU backend reads a float32 subnormal as zero (it sets FTZ/DAZ on its threads; no public flag
    turns that off, so it is measured and reported, not pinned)."""
    import jax
    import numpy as np
    cpu = jax.devices("cpu")[0]
    x = jax.device_put(np.asarray([1e-40], dtype=np.float32), cpu)
    lo, hi = (jax.device_put(np.asarray(v, dtype=np.float32), cpu) for v in (-1.0, 1.0))
    return bool(np.asarray(jax.jit(jax.lax.clamp)(lo, x, hi))[0] == 0.0)


def jax_settings(precision: Precision) -> dict[str, Any]:
    """What a jax (XLA CPU) run reports: its version, x64 mode and the flush-to-zero it applies."""
    import jax
    return {"engine": "jax", "version": jax.__version__, "precision": precision, "device": "cpu",
            "x64": bool(jax.config.read("jax_enable_x64")), "flush_to_zero": jax_flushes_subnormals()}


def litert_settings(precision: Precision, resolver: str) -> dict[str, Any]:
    """What a LiteRT run reports: the resolver, and whether its kernels flush subnormals (XNNPACK, the default
    resolver, does; the builtin kernels keep them: measured with ai-edge-litert 2.3.0, tflite.NOTE_FTZ)."""
    return {"engine": "litert", "version": engine_versions().get("ai-edge-litert"), "precision": precision,
            "resolver": resolver, "flush_to_zero": resolver != "builtin"}


def limits_text(settings: Settings) -> str:
    """The effective limits in one line, as `clipbridge serve` prints them (clipbridge.engines.budget)."""
    return describe(settings)
