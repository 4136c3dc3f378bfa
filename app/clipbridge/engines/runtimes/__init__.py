"""The engine registry: one module per engine clipbridge can run or report, listed once in `registry.LINES`.

What lives here: `base` (the `Runtime` record every engine module exports as `RUNTIME`: its name, the module that
proves it is installed, the distribution that gives its version, the pip extra and install hint, the device it runs
on and why that device is unusable here, and for the whole-model diff's engines `load`, a session that runs with
captured tensors), `names` (the one parser of engine names: `openvino==2025.4.0`, `onnxruntime@f16`,
`onnxruntime:cuda`), `registry` (the list and its lookups) and the engine modules themselves (onnxruntime,
openvino, onnx_reference, litert, torch, coreml, jax, tosa_reference; the device entries onnxruntime_cuda,
onnxruntime_tensorrt, openvino_gpu).

Adding an engine: its module here and one line in `registry.LINES` (tests/test_fake_engine.py proves it: a fake
engine registered by one line reaches GET /v1/version, `clipbridge --version` and `clipbridge diff`).

Part of the engine plumbing (clipbridge.engines): imports only core and clipbridge.engines, and imports each engine's
own library inside functions (finding an engine never imports it). Imported by clipbridge.engines.extras, diff,
fix, fleet, the chain and the API/CLI (their allowed engine values are read from here).
"""
