"""deploy/fleet-job.yaml: an Indexed Job whose index is the shard, with per-index retries, a podFailurePolicy that
fails an index on exit code 2, and a shared volume for the outputs and the cache."""

from __future__ import annotations

from pathlib import Path

import yaml

from clipbridge.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "deploy" / "fleet-job.yaml"


def _job() -> dict:
    return yaml.safe_load(JOB.read_text())


def test_an_indexed_job_with_per_index_retries():
    spec = _job()["spec"]
    assert _job()["kind"] == "Job" and spec["completionMode"] == "Indexed"
    assert spec["backoffLimitPerIndex"] >= 1 and spec["parallelism"] <= spec["completions"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def test_exit_code_2_fails_the_index_without_retrying():
    rules = _job()["spec"]["podFailurePolicy"]["rules"]
    fail = [r for r in rules if r["action"] == "FailIndex"]
    assert fail and fail[0]["onExitCodes"] == {"containerName": "fleet", "operator": "In", "values": [2]}


def test_the_shard_is_the_completion_index_and_outputs_go_to_the_shared_volume():
    spec = _job()["spec"]
    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    script = " ".join(c["args"])
    assert '--shard "$JOB_COMPLETION_INDEX/$SHARDS"' in script and "shard-$JOB_COMPLETION_INDEX" in script
    assert {e["name"]: e["value"] for e in c["env"]}["SHARDS"] == str(spec["completions"])
    assert c["image"].startswith("clipbridge:") and c["name"] == "fleet"
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert {"/data", "/registry"} <= mounts and "--cache /data/cache" in script
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"]


def test_the_jobs_command_line_parses():
    """The options the Job passes are the CLI's (the shell variables stand for values)."""
    script = " ".join(_job()["spec"]["template"]["spec"]["containers"][0]["args"])
    argv = script.split(";")[0].replace('"', "").replace("$JOB_COMPLETION_INDEX", "0").replace("$SHARDS", "4") \
        .replace("$RUN", "nightly").split()
    assert argv[:3] == ["clipbridge", "fleet", "run"]  # the current spelling: the parser alone takes no old one
    args = build_parser().parse_args(argv[1:])
    assert args.output == "/data/runs/nightly/shard-0"
    assert args.shard == "0/4" and args.sources == ["/registry"] and args.cache == "/data/cache"


def test_the_image_ships_apps_bytecode():
    """The Job's image: a fleet worker imports ~150 app modules at each start; the image must not make it compile
    them from source (PYTHONDONTWRITEBYTECODE and a root-owned /app keep the runtime from caching them)."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    compile_at = next(i for i, line in enumerate(lines) if line.startswith("RUN python -m compileall") and "app" in line)
    install_at = next(i for i, line in enumerate(lines) if "pip install" in line and "-e" in line)
    user_at = next(i for i, line in enumerate(lines) if line.startswith("USER "))
    assert install_at < compile_at < user_at
