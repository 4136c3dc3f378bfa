"""The dialects: each parses and validates its wire spec, resolves it to a Meaning and emits one from a Meaning.

registry.py names them (its order is /v1/dialects'); the kit (app/clipbridge/dialects/kit) is what they are built from. Today
a dialect is a flat module (with its helpers named after it: onnx_port, tflite_engine); issue 26 makes each one a
package. A dialect imports only core, the engines, the kit and itself, never another dialect or a layer above it
(tests/test_architecture.py). Imported, through the registry, by the service, scan, lint, the API and the CLI.
"""
