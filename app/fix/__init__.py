"""Rewrite a whole ONNX model so that engine B computes what engine A computes, and prove it with a diff."""
