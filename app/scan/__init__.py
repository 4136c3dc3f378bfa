"""Model scan: every clip in an ONNX model or OpenVINO IR, with drift per target."""
