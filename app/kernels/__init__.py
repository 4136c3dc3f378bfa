"""The kernels."""
