"""Model scan: every clip in an ONNX model or OpenVINO IR, with drift per target (report, onnx_scan, ir_scan, sites,
graph, wire), the clip-like ops other than Clip (patterns: Relu, HardSigmoid, ..., with each engine's NaN rule)
and the rewrite of a model's clips for a target (rewrite).

Imports the service (clipbridge.service.translate, clipbridge.service.specs), the dialects, the engines and core; imported by
lint, diff, fix, the API and the CLI, never by the dialects or the service, and never importing diff or fix
(tests/test_architecture.py).
"""
