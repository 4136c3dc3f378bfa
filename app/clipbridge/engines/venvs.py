"""Virtual environments clipbridge builds once, caches and reuses: a pinned engine for fleet
(app/clipbridge/fleet/envs.py) and a converter that cannot share clipbridge's environment (the chain's LiteRT converter,
app/clipbridge/chain/converter_env.py).

A build takes a lock beside the environment (shards or processes on one machine may ask at once), creates the venv
with `--clear` and installs into it with this interpreter's pip (the venv itself has no pip); a marker written last
says the environment is complete, so a build cut short (killed, out of disk, a failed download) is built again
from scratch on the next call. Nothing here imports the packages it installs."""

from __future__ import annotations

import fcntl
import os
import site
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from clipbridge.core.errors import ClipBridgeError

READY = ".clipbridge-ready"


def cache_root() -> Path:
    """clipbridge's cache: $CLIPBRIDGE_CACHE, else $XDG_CACHE_HOME/clipbridge, else ~/.cache/clipbridge."""
    explicit = os.environ.get("CLIPBRIDGE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clipbridge"


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def ready(venv: Path) -> bool:
    """Whether the environment was built to the end (its marker exists); reading it takes no lock."""
    return (venv / READY).is_file()


def ensure(venv: Path, requirements: list[str], loc: str, *, shared: bool = False,
           log: Callable[[str], None] = print) -> str:
    """The interpreter of the environment at `venv`, built on first use and reused after.

    shared=True: the venv sees this interpreter's site-packages after its own (a `.pth`) and receives only the
    requirements themselves (`--no-deps --target`), which shadow the installed ones (fleet's pinned engine).
    shared=False: an environment of its own, the requirements and all their dependencies (a converter whose
    dependencies conflict with clipbridge's)."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when this process dies
        if not ready(venv):
            log(f"building the environment {' '.join(requirements)} in {venv} (once)")
            _create(venv, requirements, loc, shared)
    return str(python_of(venv))


def _create(venv: Path, requirements: list[str], loc: str, shared: bool) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
    if shared:
        inner = subprocess.run([str(python_of(venv)), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip()
        outer = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
        Path(inner, "clipbridge_shared.pth").write_text("\n".join(dict.fromkeys(outer)) + "\n")
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", inner, *requirements]
    else:
        cmd = [sys.executable, "-m", "pip", "--python", str(python_of(venv)), "install", "--no-input",
               "--disable-pip-version-check", *requirements]
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise ClipBridgeError(f"could not install {' '.join(requirements)} into {venv}: "
                              f"{done.stderr.strip()[-400:]}", loc)
    (venv / READY).write_text("\n".join(requirements) + "\n")  # last: the environment is complete
