"""clipbridge.dialects.kit.versions.VersionTable: versions as data, resolved as the highest at or below the request."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipbridge.core.errors import SpecError
from clipbridge.dialects.kit.versions import VersionTable
from clipbridge.dialects.onnx.versions import CLIP_VERSIONS, schema_for_opset

TABLE: VersionTable[int, str] = VersionTable("opset", ((1, "a"), (6, "b"), (11, "c"), (12, "d"), (13, "e")))


@pytest.mark.parametrize(("requested", "since", "value"), [
    (1, 1, "a"), (5, 1, "a"), (6, 6, "b"), (10, 6, "b"), (11, 11, "c"), (12, 12, "d"), (13, 13, "e"),
    (14, 13, "e"), (1000, 13, "e"),
])
def test_resolves_the_highest_row_at_or_below(requested, since, value):
    assert TABLE.resolve(requested) == value and TABLE.since(requested) == since


@pytest.mark.parametrize("requested", [0, -1])
def test_below_the_first_row_names_the_field(requested):
    with pytest.raises(SpecError) as exc:
        TABLE.resolve(requested)
    assert exc.value.loc == "opset"
    assert exc.value.message == f"opset {requested} is older than the first version, 1"


def test_the_error_text_is_the_table_s_own():
    t = VersionTable("version", ((3, "x"),), too_old="{field} starts at {first}. Got: {requested}")
    with pytest.raises(SpecError) as exc:
        t.resolve(2)
    assert (exc.value.message, exc.value.loc) == ("version starts at 3. Got: 2", "version")


def test_tuple_keys_order_like_versions():
    t = VersionTable("feature_level", (((1, 0), "fl1"), ((2, 1), "fl21"), ((5, 0), "fl5")))
    assert [t.resolve(k) for k in ((1, 0), (2, 0), (2, 1), (4, 9), (6, 2))] == ["fl1", "fl1", "fl21", "fl21", "fl5"]


@pytest.mark.parametrize("rows", [(), ((2, "a"), (1, "b")), ((1, "a"), (1, "b"))], ids=["empty", "descending",
                                                                                       "repeated"])
def test_a_table_must_ascend_strictly(rows):
    with pytest.raises(ValueError):
        VersionTable("opset", rows)


def test_reads_as_a_sequence_of_its_values():
    assert list(TABLE) == ["a", "b", "c", "d", "e"] and len(TABLE) == 5
    assert TABLE[-1] == TABLE.newest == "e" and TABLE.first == 1 and TABLE.versions() == (1, 6, 11, 12, 13)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=8, unique=True), st.integers(-60, 60))
def test_resolved_version_is_at_or_below_and_none_lies_between(versions, requested):
    """The property of "highest at or below": since <= request, and no table version in (since, request]."""
    rows = tuple((v, f"v{v}") for v in sorted(versions))
    table = VersionTable("opset", rows)
    if requested < min(versions):
        with pytest.raises(SpecError):
            table.resolve(requested)
        return
    since = table.since(requested)
    assert since <= requested and table.resolve(requested) == f"v{since}"
    assert not any(since < v <= requested for v in versions)


def test_onnx_clip_versions_are_the_five_schemas():
    """Clip-1, 6, 11, 12, 13: one row per version that changes behaviour (onnx/reference/ops/op_clip.py)."""
    assert CLIP_VERSIONS.versions() == (1, 6, 11, 12, 13)
    assert [schema_for_opset(o).name for o in (1, 5, 6, 10, 11, 12, 13, 21)] == [
        "Clip-1", "Clip-1", "Clip-6", "Clip-6", "Clip-11", "Clip-12", "Clip-13", "Clip-13"]
    with pytest.raises(SpecError) as exc:
        schema_for_opset(0)
    assert (exc.value.message, exc.value.loc) == ("ONNX opsets start at 1. Got: 0", "opset")
