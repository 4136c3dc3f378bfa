"""A dialect that exists only in the tests: one folder and one registry line make it a dialect like any other.

fake.clamp (the "fake spec" is meaning.py's docstring) has a spec model, a resolver to a Meaning, an emitter, one
engine (`fake-ref`), rule texts and examples, all behind clipbridge.dialects.kit.base.Dialect. It imports only clipbridge.core,
clipbridge.dialects.kit and itself, as a dialect package under app/clipbridge/dialects/ must. `registered` adds it to the registry
(the one line) before anything that builds the registry's unions is imported; tests/test_fake_dialect.py runs the
product in a child process that does so.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect, source_resolver
from clipbridge.dialects.kit.spec_base import spec_json

from tests.fake_dialect import catalogue
from tests.fake_dialect.emit import emit
from tests.fake_dialect.engine import ENGINE, run_fake
from tests.fake_dialect.meaning import NAME_OF, dtype_fake, resolve, version_fake
from tests.fake_dialect.spec import NAME, FakeSpec, FakeTarget


def normalize(spec: FakeSpec) -> dict:
    return {**spec_json(spec), "version": version_fake(spec.version), "dtype": NAME_OF[dtype_fake(spec.dtype).name]}


DIALECT = Dialect(
    name=NAME, spec_model=FakeSpec, target_model=FakeTarget, resolve=source_resolver(NAME, resolve, normalize),
    emit=emit, target=lambda v: FakeTarget(dialect=NAME, version=v), check_version=version_fake,
    capability=catalogue.capability, version_example="fake:v2", engines={ENGINE: run_fake},
    artifacts={"fake_text": "the clamp as one line of the fake language"}, in_defaults=False,
    rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES)
