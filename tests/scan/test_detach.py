"""app/clipbridge/scan/detach.py: no upload location reaches native code, and the rewrite puts them back (issue 46)."""

from __future__ import annotations

import onnx
import pytest

from clipbridge.core.errors import ArtifactError
from clipbridge.scan.detach import PREFIX, detach, reattach
from clipbridge.scan.wire import _tensors, is_external
from tests.hostile.places import PLACES, external_model


def _entries(model: onnx.ModelProto) -> list[tuple[int, list[tuple[str, str]]]]:
    return [(int(t.data_location), [(e.key, e.value) for e in t.external_data]) for t in _tensors(model)
            if is_external(t)]


@pytest.mark.parametrize("place", PLACES)
def test_every_place_is_detached_and_put_back_as_it_was(place):
    model = onnx.load_from_string(external_model(place, "w.bin", "8", "16"))
    before = _entries(model)
    saved = detach(model)
    assert len(saved) == len(before) == 1
    assert [loc for _, entries in _entries(model) for key, loc in entries] == [f"{PREFIX}0"]
    reattach(model, saved)
    assert _entries(model) == before


def _with_location(location: str) -> onnx.ModelProto:
    return onnx.load_from_string(external_model("initializer", location))


@pytest.mark.parametrize("edit,fragment", [
    pytest.param(lambda m, s: m.graph.initializer[0].external_data[0].__setattr__("value", f"{PREFIX}7"),
                 "cannot put back", id="foreign-sentinel-index"),
    pytest.param(lambda m, s: m.graph.initializer[0].external_data[0].__setattr__("value", f"{PREFIX}x"),
                 "cannot put back", id="sentinel-not-a-number"),
    pytest.param(lambda m, s: m.graph.ClearField("initializer"), "did not survive", id="tensor-dropped"),
])
def test_reattach_never_guesses(edit, fragment):
    model = _with_location("w.bin")
    saved = detach(model)
    edit(model, saved)
    with pytest.raises(ArtifactError, match=fragment):
        reattach(model, saved)


def test_a_location_that_reads_like_a_sentinel_is_detached_too():
    """The upload cannot smuggle a location past detach by spelling it like ours: every external tensor is
    replaced, so every sentinel after detach is one this call wrote, and reattach gives the upload's text back."""
    model = _with_location(f"{PREFIX}0")
    saved = detach(model)
    reattach(model, saved)
    assert _entries(model) == [(onnx.TensorProto.EXTERNAL, [("location", f"{PREFIX}0")])]
