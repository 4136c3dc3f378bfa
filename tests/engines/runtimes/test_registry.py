"""The engine registry is the one list: every engine module is on it once, each entry is complete for its role, and
the tables that used to list engines are views of it."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

from clipbridge.diff import run
from clipbridge.engines import extras
from clipbridge.engines.runtimes import registry
from clipbridge.engines.runtimes.base import Runtime

PACKAGE = Path(registry.__file__).parent
NOT_ENGINES = {"base", "names", "registry", "gpu"}  # the interface, the parser, the list, the devices' shared probe


def test_every_engine_module_is_one_registry_line():
    modules = {m.name for m in pkgutil.iter_modules([str(PACKAGE)])} - NOT_ENGINES
    assert sorted(registry.LINES) == sorted(modules) and len(set(registry.LINES)) == len(registry.LINES)


@pytest.mark.parametrize("rt", registry.all_runtimes(), ids=lambda rt: rt.name)
def test_each_entry_is_complete_for_its_role(rt: Runtime):
    assert ("diff" in rt.roles) == (rt.load is not None)
    assert (rt.device is None) == (":" not in rt.name) and (rt.device is None or rt.probe is not None)
    assert rt.install_hint().startswith("pip install")
    names = {rt.name, *rt.table_names}
    assert all(names & set(r.engines) for r in rt.rows())


@pytest.mark.parametrize(("engine", "row"), [
    pytest.param("openvino", "openvino-clamp-nan-to-lower", id="openvino-nan-to-lower"),
    pytest.param("onnxruntime", "softmax-nan-row", id="onnxruntime-softmax"),
    pytest.param("litert", "litert-conv-saturates-inf", id="litert-builtin-conv"),
])
def test_an_engine_reads_its_rows_from_the_behaviour_table(engine: str, row: str):
    rt = registry.get(engine)
    assert rt is not None and row in {r.id for r in rt.rows()}


def test_a_device_entry_assumes_none_of_the_cpu_rows():
    gpu = registry.get("openvino:GPU")
    assert gpu is not None and "openvino-clamp-nan-to-lower" not in {r.id for r in gpu.rows()}


def test_the_old_tables_are_views_of_it():
    assert run.ENGINE_NAMES == registry.names("diff") and set(run.DEFAULT_ENGINES) <= set(run.ENGINE_NAMES)
    assert set(extras.ENGINES) == set(registry.names("backend"))
    assert extras.versions() == registry.versions() and "onnxruntime:cuda" not in extras.versions()
    assert extras.DISTRIBUTIONS["onnx-reference"] == "onnx"


def test_register_adds_one_after_the_listed():
    registry.register(Runtime("extra-engine", "no_such_module", ("no-such-distribution",), ""))
    try:
        assert registry.names()[-1] == "extra-engine" and registry.versions()["extra-engine"] is None
        assert not registry.get("extra-engine").installed()
    finally:
        registry.unregister("extra-engine")
    assert registry.get("extra-engine") is None


@pytest.mark.parametrize("engines", [
    pytest.param(("onnxruntime", "openvino"), id="defaults"),
    pytest.param(("onnxruntime", "onnxruntime@f16"), id="precision-trace"),  # `clipbridge trace` (was refused)
    pytest.param(("onnx-reference", "onnxruntime:cuda"), id="device"),  # its device is asked later (require)
])
def test_a_diff_takes(engines):
    run.Options(engines).check("--")


@pytest.mark.parametrize("engines, message", [
    pytest.param(("onnxruntime", "openvino==2025.4.0"), "cannot be diffed here", id="pinned-is-fleet-only"),
    pytest.param(("onnxruntime", "openvino:gpu"), "engine 'openvino:gpu': write 'openvino:GPU'", id="device-spelling"),
    pytest.param(("onnxruntime", "torch"), "unknown engine 'torch'", id="not-a-diff-engine"),
])
def test_a_diff_refuses_naming_the_option(engines, message):
    with pytest.raises(Exception) as e:
        run.Options(engines).check("--")
    assert message in e.value.message and e.value.loc == "--engine"


def test_a_report_names_the_version_the_engine_itself_reports():
    """A diff report names what ran: OpenVINO's own build id (`2026.4.1-...`), onnxruntime's release."""
    ov = pytest.importorskip("openvino")
    ort = pytest.importorskip("onnxruntime")
    from clipbridge.diff import engines
    assert engines.version("openvino") == ov.get_version()
    assert engines.version("onnxruntime") == ort.__version__
