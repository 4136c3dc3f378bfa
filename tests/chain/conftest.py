"""Chain runs shared by the tests of this package: each test model converted and run once per session."""

from __future__ import annotations

import io

import numpy as np
import pytest

from clipbridge.chain import report
from clipbridge.diff.run import direct
from tests.chain import models

LINUX_CHAIN = "torch,onnx,openvino,tflite,tflite:builtin,coreml"


@pytest.fixture(scope="session")
def clamps_pt2() -> bytes:
    return models.clamps()


@pytest.fixture(scope="session")
def mobilenet_pt2() -> bytes:
    return models.mobilenet()


def hostile(shape: tuple[int, ...], seed: int = 7) -> np.ndarray:
    """Normal values with NaN, +-inf, +-FLT_MAX, FLT_MAX / 5 and a denormal planted first."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    specials = [np.nan, np.inf, -np.inf, 3.4028235e38, -3.4028235e38, 6.8e37, 1e-40, 3.0, -3.0, 6.0]
    x.reshape(-1)[:len(specials)] = np.array(specials, dtype=np.float32)
    return x


HOSTILE = hostile((1, 64))


@pytest.fixture(scope="session")
def clamps_body(clamps_pt2: bytes) -> dict:
    """The clamp forms on a hostile input that reaches each of them directly."""
    return report.chain(direct, clamps_pt2, npz(x=HOSTILE), LINUX_CHAIN)


@pytest.fixture(scope="session")
def clamp_min_int_body() -> dict:
    return report.chain(direct, models.clamp_min_int(), None, "torch,onnx,openvino,coreml")


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()
