"""The clip kernels: what clipbridge.service.execute runs, each computing exactly what clipbridge.core.evaluate.evaluate()
computes, with code of its own (tests/kernels hold them to it, bit for bit).

plan.py reduces a meaning to the operations a kernel runs (the one plan); numpy.py runs it on NumPy arrays
(chunks over the cores, or the compiled kernels); numba.py, half_numba.py and scale_bias16_jit.py are the optional
numba kernels; half.py and scale_bias16.py are float16/bfloat16 on their 16-bit patterns; tensor.py is per-element
bounds and promotion; array_api.py is any array-API namespace; cupy.py the GPU kernels.

Imports only core and itself (tests/test_architecture.py); numba and CuPy only inside the functions that compile.
Imported by clipbridge.service.execute, bench/ and the tests, never by core, the engines or the dialects.
"""
