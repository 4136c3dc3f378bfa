"""The memory a server process tree may reach, from its settings: what a deployment's memory limit must hold.

Why: the pod's cgroup kills a process before the sandbox's own limit can answer when the two disagree (the
audit of issue 34 found 2 workers x 4096 MiB allowed in a 2 GiB pod). The tree is the server plus its sandbox
workers:
- a worker: its idle size with the engines loaded (WORKER_IDLE_MIB, measured) plus what one call may add
  (CLIPBRIDGE_SANDBOX_MEMORY_MB, enforced as RLIMIT_AS above the idle size, which bounds its resident growth);
- the server: its idle size with the app imported (SERVER_IDLE_MIB) plus, per execution slot, the larger of
  an .npy body (CLIPBRIDGE_MAX_NPY_BYTES) and two model-sized buffers (the upload and the model a fix writes);
  engine results never come back whole (the diff compares tensors in the child, clipbridge.diff.isolated);
- inside a worker's per-call memory, a diff holds at most CLIPBRIDGE_DIFF_MEMORY_MB of captured tensors (half the
  call's by default: clipbridge.diff.passes captures in passes past it), the rest left to the engines' own model
  memory. It is part of the per-call memory, not added to it.
tests/test_memory_bounds.py reads deploy/deployment.yaml and holds its limit to `need_mib`.
"""

from __future__ import annotations

from dataclasses import dataclass

from clipbridge.core.settings import Settings

MiB = 1 << 20
WORKER_IDLE_MIB = 256  # measured ~145 MiB after onnxruntime, OpenVINO and onnx.reference ran once (x86-64)
SERVER_IDLE_MIB = 384  # measured ~0.3 GiB with the app and the engines imported (deploy/deployment.yaml)


@dataclass(frozen=True)
class Budget:
    workers: int
    per_call_mib: int
    diff_mib: int  # of per_call_mib: the captured tensors one diff holds at once
    worker_mib: int
    server_mib: int

    @property
    def need_mib(self) -> int:
        """The whole tree at its peak: the server plus every worker at its per-call limit."""
        return self.server_mib + self.workers * self.worker_mib


def budget(s: Settings) -> Budget:
    per_slot = max(s.max_npy_bytes, 2 * s.max_model_bytes) // MiB
    return Budget(workers=s.sandbox_workers, per_call_mib=s.sandbox_memory_mb, diff_mib=s.diff_budget_mb,
                  worker_mib=WORKER_IDLE_MIB + s.sandbox_memory_mb,
                  server_mib=SERVER_IDLE_MIB + s.max_concurrent_executions * per_slot)


def describe(s: Settings) -> str:
    """One line of the effective limits, as `clipbridge serve` prints them at start."""
    b = budget(s)
    return (f"clipbridge limits: {b.workers} sandbox workers x {b.per_call_mib} MiB per call (+{WORKER_IDLE_MIB} "
            f"MiB idle each; a diff holds up to {b.diff_mib} MiB of captured tensors of it, in passes past that), "
            f"{s.sandbox_timeout_seconds:g} s per call; server peak {b.server_mib} MiB "
            f"({s.max_concurrent_executions} executions); the process tree needs up to {b.need_mib} MiB; "
            "external data in uploaded models is never read (scans go without it, engine routes refuse it)")
