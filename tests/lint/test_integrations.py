"""The pre-commit hook and the example GitHub Actions workflow, exercised: the hook's entry runs on
docs/example.onnx, `pre-commit try-repo` installs this repository as a hook and runs it, and the workflow's run
steps execute as a bash script against a copy of docs/, the SARIF they write validated against the 2.1.0 schema."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT / 'app'}{os.pathsep}{ROOT}", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **extra}


def hooks() -> list[dict]:
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())


def test_hooks_file_is_valid():
    required = {"id", "name", "entry", "language"}
    for h in hooks():
        assert required <= set(h), h
        assert h["language"] == "python" and h["entry"].split()[0] == "clipbridge"
    scan = next(h for h in hooks() if h["id"] == "clipbridge-scan")
    pattern = re.compile(scan["files"])
    assert pattern.search("models/net.onnx") and not pattern.search("net.onnx.txt") and not pattern.search("a.py")


def hook(args: list[str], files: list[str]) -> subprocess.CompletedProcess:
    """What pre-commit runs: entry + args + the staged file names."""
    h = next(h for h in hooks() if h["id"] == "clipbridge-scan")
    cmd = shlex.split(h["entry"]) + args + files
    return subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args,code", [
    pytest.param([], 2, id="default-status-exit-dynamic-bound-unsupported"),
    pytest.param(["--target", "onnx:13", "--ignore", "dynamic-bounds,scale-bias"], 0, id="ignored-passes"),
    pytest.param(["--target", "directml:5_0", "--ignore", "dynamic-bounds", "--fail-on", "warning"], 1,
                 id="nan-input-warning-fails"),
])
def test_hook_entry_on_the_example(args, code):
    r = hook(args, ["docs/example.onnx", "docs/example.onnx"])
    assert r.returncode == code, r.stdout + r.stderr
    assert r.stdout.count("== docs/example.onnx") == 2 and "graph/clip_dynamic_max" in r.stdout


def test_hook_reports_an_unreadable_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x08\x3a\xff\xff\xff\x0f")
    r = hook(["--target", "onnx:13", "--ignore", "dynamic-bounds,scale-bias"], ["docs/example.onnx", str(bad)])
    assert r.returncode == 2 and "truncated" in r.stderr


def workflow_script(path: Path) -> tuple[str, list[dict]]:
    wf = yaml.safe_load(path.read_text())
    steps = wf["jobs"]["clip-drift"]["steps"]
    lines = ["set -u"] + [f"export {k}={shlex.quote(str(v))}" for k, v in wf["env"].items()]
    run_steps = [s for s in steps if "run" in s and s["name"] != "Install clipbridge"]  # installed here already
    for s in run_steps:
        # Each step in its own subshell: continue-on-error steps may fail, the others must not.
        guard = "|| true" if s.get("continue-on-error") else "|| { echo \"step failed: $?\" >&2; exit 1; }"
        lines.append(f"( set -e; {s['run']} ) {guard}")
    return "\n".join(lines) + "\n", steps


def run_workflow(tmp_path: Path, baseline_findings: list | None = None) -> subprocess.CompletedProcess:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    if baseline_findings is not None:
        base = tmp_path / "docs" / "clipbridge-baseline.json"
        body = json.loads(base.read_text())
        body["findings"] = baseline_findings
        base.write_text(json.dumps(body))
    script, _ = workflow_script(ROOT / "docs" / "github-actions-clipbridge.yml")
    (tmp_path / "summary.md").write_text("")
    return subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env(GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md")),
                          capture_output=True, text=True, timeout=300)


def test_workflow_uploads_sarif_and_passes_on_the_baseline(tmp_path):
    _, steps = workflow_script(ROOT / "docs" / "github-actions-clipbridge.yml")
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "clipbridge.sarif" and upload["if"] == "always()"
    r = run_workflow(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    log = json.loads((tmp_path / "clipbridge.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    assert results and all(res.get("suppressions") for res in results)  # everything is in the baseline
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### clipbridge: `docs/example.onnx`") and "suppressed by the baseline" in summary
    assert "::notice title=clipbridge summary::" in r.stdout and "::error" not in r.stdout


def test_workflow_fails_on_a_new_finding(tmp_path):
    base = json.loads((ROOT / "docs" / "clipbridge-baseline.json").read_text())["findings"]
    kept = [e for e in base if e["clip"] != "graph/relu6_min"]  # as if relu6_min were new in this commit
    r = run_workflow(tmp_path, kept)
    assert r.returncode == 1 and "step failed: 1" in r.stderr
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith(("::warning", "::error"))]
    assert errors and all("graph/relu6_min" in ln for ln in errors)
    fresh = [res for res in json.loads((tmp_path / "clipbridge.sarif").read_text())["runs"][0]["results"]
             if not res.get("suppressions")]
    assert {res["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for res in fresh} == {"graph/relu6_min"}


def test_committed_baseline_matches_the_example(tmp_path):
    """docs/clipbridge-baseline.json is what --write-baseline writes today (regenerate it when findings change)."""
    out = tmp_path / "b.json"
    r = subprocess.run(["clipbridge", "scan", "docs/example.onnx", "--target", "directml:5_0", "--target", "openvino",
                        "--write-baseline", str(out)], cwd=ROOT, env=env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    committed = json.loads((ROOT / "docs" / "clipbridge-baseline.json").read_text())

    def keys(body: dict) -> list[tuple]:  # messages are not part of a fingerprint: their wording may change
        return [(e["fingerprint"], e["clip"], e["target"], e["code"], e["severity"]) for e in body["findings"]]
    assert keys(json.loads(out.read_text())) == keys(committed)


@pytest.mark.slow
def test_pre_commit_try_repo_installs_and_runs_the_hook(tmp_path):
    """pre-commit itself builds the hook's environment from this repository (pip install of a shadow clone, about
    a minute) and runs it on a model: the real path a user's .pre-commit-config.yaml takes."""
    pre_commit = BIN / "pre-commit"
    assert pre_commit.exists(), "pre-commit is in the [dev] extra"
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(ROOT / "docs" / "example.onnx", work / "net.onnx")
    git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
    for cmd in (["init", "-q"], ["add", "net.onnx"], ["commit", "-qm", "model"]):
        subprocess.run([*git, *cmd], cwd=work, check=True)
    r = subprocess.run([str(pre_commit), "try-repo", str(ROOT), "clipbridge-scan", "--files", "net.onnx", "--verbose"],
                       cwd=work, env={**env(PRE_COMMIT_HOME=str(tmp_path / "cache")), "PYTHONPATH": ""},
                       capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    # The example has a run-time bound (dynamic-bounds, an error): the hook fails with the scan's exit code 2.
    assert r.returncode == 1, out[-3000:]
    assert "- hook id: clipbridge-scan" in out and "- exit code: 2" in out, out[-3000:]
    assert "graph/relu6_min" in out and "dynamic-bounds" in out, out[-3000:]
