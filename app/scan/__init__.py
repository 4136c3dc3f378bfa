"""Model scan: every clip in an ONNX model or OpenVINO IR, with drift per target.

Imports the service layer (app.service.translate, app.service.specs), the dialects and core (and app.diff.patterns, the clip-like
patterns: a known upward import, docs/architecture.md); imported by app.lint and the API, never by the dialects
or the service."""
