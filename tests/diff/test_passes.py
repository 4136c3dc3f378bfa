"""Issue 46, items 1 and 2: the diff holds at most a memory budget of captured tensors, in passes."""

from __future__ import annotations

import pytest

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.settings import Settings
from clipbridge.diff import child, passes, report, run
from tests.diff import models as M

SIZES = {  # name: (text, bytes)
    "gibibytes": ("2GiB", 2 << 30),
    "mebibytes": ("512MiB", 512 << 20),
    "decimal-gigabytes": ("1.5GB", 1_500_000_000),
    "fraction-of-gibibyte": ("0.5G", 500_000_000),
    "lower-case-unit": ("64mib", 64 << 20),
    "spaces": (" 3 GiB ", 3 << 30),
    "plain-bytes": ("2097152", 2 << 20),
}
BAD_SIZES = {  # name: text
    "empty": "",
    "unknown-unit": "2XB",
    "negative": "-1GiB",
    "words": "lots",
    "below-a-mebibyte": "512KiB",
    "zero": "0",
}


@pytest.mark.parametrize("text,expected", SIZES.values(), ids=SIZES.keys())
def test_memory_sizes_parse(text, expected):
    assert passes.parse_size(text) == expected


@pytest.mark.parametrize("text", BAD_SIZES.values(), ids=BAD_SIZES.keys())
def test_a_bad_memory_size_names_the_option_and_what_is_accepted(text):
    with pytest.raises(ClipBridgeError, match="--memory") as err:
        passes.parse_size(text, "--memory")
    assert err.value.loc == "--memory" and err.value.status < 500


def test_the_default_budget_is_a_quarter_of_the_machine():
    import os
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert passes.default_budget() == total // 4


def _plan() -> child.Plan:
    return child.prepare(M.relu_chain(), None)


def test_every_region_fits_and_the_cut_keeps_topological_order(mnv2):
    plan = child.prepare(mnv2, None)
    finals = 2 * sum(plan.nbytes(t) for t in plan.outputs)
    rest = 2 * sum(plan.nbytes(t) for t in run.marks(plan) if t not in plan.outputs)
    biggest = max(2 * sum(plan.nbytes(t) for t in passes.node_tensors(plan, n)) for n in plan.nodes)
    budget = finals + biggest
    cut = passes.regions(plan, budget, 2, "--memory")
    assert [n.name for r in cut for n in r.nodes] == [n.name for n in plan.nodes]
    for r in cut:
        assert finals + 2 * sum(plan.nbytes(t) for t in r.tensors) <= budget
        # a pass captures every tensor its nodes read (the graph's outputs come with every marked run)
        assert all(t in r.tensors or t in plan.outputs for n in r.nodes for t in passes.node_tensors(plan, n))
    assert finals + rest > budget and len(cut) > 1


def test_one_region_when_everything_fits():
    plan = _plan()
    every = run.marks(plan)
    [one] = passes.plan_regions(plan, every, 1 << 30, 2, "--memory")
    assert one.tensors == every and one.nodes == plan.nodes


CUTS = {"halves": 2, "fifths": 5}


@pytest.mark.parametrize("parts", CUTS.values(), ids=CUTS.keys())
def test_a_diff_in_passes_reports_what_one_pass_reports(parts, mnv2):
    opts = run.Options(sample="edge")
    whole, _ = report.diff(run.direct, mnv2, None, opts)
    plan = child.prepare(mnv2, None, sample="edge")
    need = 2 * sum(plan.nbytes(t) for t in run.marks(plan))
    biggest = max(2 * sum(plan.nbytes(t) for t in passes.node_tensors(plan, n)) for n in plan.nodes)
    budget = max(need // parts, biggest + 2 * sum(plan.nbytes(t) for t in plan.outputs))
    cut, _ = report.diff(run.direct, mnv2, None, run.Options(sample="edge", memory=budget))
    assert whole["passes"] == 1 and cut["passes"] >= parts
    assert {**cut, "passes": 1} == whole


def test_a_budget_too_small_for_one_node_is_a_422_naming_the_setting():
    with pytest.raises(passes.BudgetTooSmall, match=r"raise --memory") as err:
        report.diff(run.direct, M.relu_chain(), None, run.Options(memory=1))
    assert err.value.status == 422 and err.value.loc == "--memory"


SERVER = {  # name: (settings, the budget in MiB)
    "default-half-the-call": (Settings(), Settings().sandbox_memory_mb // 2),
    "set": (Settings(diff_memory_mb=1000), 1000),
    "small-sandbox": (Settings(sandbox_memory_mb=1024), 512),
}


@pytest.mark.parametrize("settings,mib", SERVER.values(), ids=SERVER.keys())
def test_the_servers_budget_comes_from_its_settings(settings, mib):
    assert settings.diff_budget_mb == mib


BAD_SERVER = {"at-the-call-memory": 4096, "zero": 0, "negative": -5}


@pytest.mark.parametrize("value", BAD_SERVER.values(), ids=BAD_SERVER.keys())
def test_a_server_budget_without_room_for_the_engines_refuses_to_start(value):
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_DIFF_MEMORY_MB"):
        Settings(diff_memory_mb=value)


def test_the_env_variable_sets_the_servers_budget(monkeypatch):
    monkeypatch.setenv("CLIPBRIDGE_DIFF_MEMORY_MB", "700")
    assert Settings.from_env().diff_budget_mb == 700
    monkeypatch.setenv("CLIPBRIDGE_DIFF_MEMORY_MB", "lots")
    with pytest.raises(ClipBridgeError, match="CLIPBRIDGE_DIFF_MEMORY_MB"):
        Settings.from_env()


CLI_BAD = {"unit": "2XB", "too-small": "1KiB", "words": "half"}


@pytest.mark.parametrize("value", CLI_BAD.values(), ids=CLI_BAD.keys())
def test_the_cli_refuses_a_bad_memory_with_exit_2_naming_it(value, tmp_path, capsys):
    from clipbridge.cli.main import main
    path = tmp_path / "m.onnx"
    path.write_bytes(M.relu_chain())
    assert main(["diff", str(path), "--memory", value, "--probe", "off"]) == 2
    assert "--memory" in capsys.readouterr().err


def test_the_cli_reports_its_passes(mnv2, tmp_path, capsys):
    import json
    from clipbridge.cli.main import main
    path = tmp_path / "m.onnx"
    path.write_bytes(mnv2)
    main(["diff", str(path), "--memory", "1MiB", "--probe", "off", "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert body["passes"] > 1 and body["verdict"] in ("equal", "explained")


def test_the_edge_pass_takes_passes_the_same_way(mnv2):
    body, _ = report.diff(run.direct, mnv2, None, run.Options(probe="edge", memory=1 << 20))
    assert body["passes"] > 1 and body["edge"]["passes"] > 1
    whole, _ = report.diff(run.direct, mnv2, None, run.Options(probe="edge"))
    assert whole["edge"]["passes"] == 1
    assert {**body["edge"], "passes": 1} == whole["edge"]
