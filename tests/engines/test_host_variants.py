"""The engine tests on every CPU variant this machine can stand in for (docs/host-differences.md).

OpenVINO's CPU plugin takes its bf16 kernels from oneDNN, which obeys ONEDNN_MAX_CPU_ISA: capping it makes this CPU
behave as an older one (avx512_core without bf16, or AVX2 only). Each variant below this host's own ISA runs the
deviation miner, the recorded deviations and the precision checks in a child process with the cap set; the notes, the strict xfails and
the miner derive their expectations from engine_config's detection, so each child must be green.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from clipbridge.engines import config as engine_config  # noqa: E402

pytestmark = pytest.mark.engines
ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {"AVX512_CORE": engine_config.BF16_AVX512, "AVX2": engine_config.BF16_AVX2}
# The tests whose expectations depend on the CPU: the miner and recorded deviations, and the precision checks.
CHILD_TESTS = ("tests/engines/test_deviation_miner.py", "tests/engines/test_engine_config.py")


def _child_env(cap: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLIPBRIDGE_", "PYTEST_"))}
    env["ONEDNN_MAX_CPU_ISA"] = cap
    return env


@pytest.mark.parametrize("cap", list(VARIANTS))
def test_engine_tests_pass_on_emulated_variant(cap):
    """The child detects the variant the cap stands for, and the engine tests pass there."""
    own = engine_config.cpu_isa()
    if own is None or engine_config.ISA_TIERS.index(own) <= engine_config.ISA_TIERS.index(cap):
        pytest.skip(f"this CPU's ISA ({own}) is not above {cap}: the variant is this host itself or unreachable")
    env = _child_env(cap)
    probe = subprocess.run([sys.executable, "-c", "from clipbridge.engines import config as e; "
                            "print(e.openvino_bf16_variant())"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=120)
    assert probe.stdout.strip() == VARIANTS[cap], probe.stdout + probe.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *CHILD_TESTS], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, f"ONEDNN_MAX_CPU_ISA={cap}:\n{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
