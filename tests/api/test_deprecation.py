"""An old name in a request (docs/api.md#old-names) is read as the new one and answered with a `Deprecation`
header (RFC 9745, the date the names became old) and `X-Clipbridge-Deprecated` naming the new name; a request
with the new names gets neither."""

from __future__ import annotations

import io
import json
import urllib.parse

import numpy as np
import pytest

from clipbridge.api.deprecation import DEPRECATION, OLD_NAMES_SINCE, OLD_NAMES_UNTIL, WARNING_HEADER
from clipbridge.api.models import TranslateRequest
from tests.api.test_vocabulary import CASES, SPEC, _renamed


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_an_old_name_is_answered_with_the_deprecation_headers(client, case):
    path, body, old, new = CASES[case]
    r = client.post(path, json=_renamed(body, old, new))
    assert r.status_code == 200, r.text
    assert r.headers["deprecation"] == DEPRECATION
    assert r.headers[WARNING_HEADER] == f"{old} -> {new} (until {OLD_NAMES_UNTIL})"


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_new_names_get_no_deprecation_header(client, case):
    path, body, _old, _new = CASES[case]
    r = client.post(path, json=body)
    assert r.status_code == 200, r.text
    assert "deprecation" not in r.headers and WARNING_HEADER not in r.headers


NPY = [
    pytest.param({"spec": SPEC, "semantics": "directml"}, True, id="old-semantics"),
    pytest.param({"spec": SPEC, "target": "directml"}, False, id="new-target"),
]


@pytest.mark.parametrize("options,deprecated", NPY)
def test_execute_npy_options_in_the_query_too(client, options, deprecated):
    buf = io.BytesIO()
    np.save(buf, np.array([-128, 3, 127], dtype=np.int8))
    r = client.post(f"/v1/execute.npy?request={urllib.parse.quote(json.dumps(options))}", content=buf.getvalue(),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 200, r.text
    assert ("deprecation" in r.headers) == deprecated
    if deprecated:
        assert r.headers[WARNING_HEADER] == f"semantics -> target (until {OLD_NAMES_UNTIL})"


def test_an_error_answer_says_it_too(client):
    """The old name was read before the spec was refused: the 422 carries the header as well."""
    r = client.post("/v1/translate", json={"source": {"dialect": "onnxx"}})
    assert r.status_code == 422, r.text
    assert r.headers["deprecation"] == DEPRECATION


def test_the_date_is_the_day_the_names_became_old():
    import datetime
    day = datetime.datetime.fromtimestamp(int(DEPRECATION[1:]), datetime.timezone.utc)
    assert DEPRECATION.startswith("@") and day.isoformat()[:10] == OLD_NAMES_SINCE


def test_outside_a_request_nothing_is_recorded():
    """The client and the CLI validate with the same models: reading an old name there records nothing."""
    assert TranslateRequest.model_validate({"source": SPEC}).spec is not None


def test_the_headers_are_declared_where_an_old_name_can_be_sent(client):
    paths = client.app.openapi()["paths"]
    for path in ("/v1/translate", "/v1/execute", "/v1/compare", "/v1/probe", "/v1/bundle", "/v1/execute.npy"):
        headers = paths[path]["post"]["responses"]["200"]["headers"]
        assert {"Deprecation", WARNING_HEADER} <= set(headers), path
    assert "Deprecation" not in paths["/v1/models/diff"]["post"]["responses"]["200"]["headers"]
