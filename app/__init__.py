"""clipbridge: translate the Clip/Clamp operator between DirectML, OpenVINO and ONNX, and report drift."""

__version__ = "0.1.0"
