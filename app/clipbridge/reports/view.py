"""The findings view: what a command's report says, in the terms every format writer reads.

SARIF and GitHub read the findings (rule id, level, message, location, witness, properties) and the rules; JUnit
reads the checks a report ran (suites of cases, a case failing by its findings); Markdown reads blocks (headings,
paragraphs, tables). Each command builds the view of its own report; the writers know no command."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

Level = Literal["error", "warning", "note"]  # SARIF's levels; GitHub writes `note` as ::notice


@dataclass(frozen=True)
class Location:
    """Where a finding is: the model or spec file, and the node in it (None: the file as a whole)."""

    artifact: str
    node: str | None = None
    qualified: str | None = None  # the node's path in the model (graph/then_branch/relu), when it has one
    kind: str = "function"  # SARIF logicalLocation.kind: a node is a function; a translated spec an object


@dataclass(frozen=True)
class Finding:
    """One thing a report found. `message` is the full text (SARIF); `title` and `annotation` are the GitHub
    annotation's title and body (default: the rule and the message)."""

    rule: str
    level: Level
    message: str
    location: Location
    witness: str | None = None  # the witness as one line of text (the data is in `properties`)
    properties: dict[str, Any] | None = None  # SARIF result properties, JSON-ready, in the order given
    fingerprint: tuple[str, str] | None = None  # SARIF partialFingerprints: (its name with a version, value)
    suppressed: bool = False  # held by a baseline: in SARIF as a suppression, in no annotation
    title: str | None = None
    annotation: str | None = None


@dataclass(frozen=True)
class Rule:
    """A rule the findings name (SARIF reportingDescriptor): what is absent is not written."""

    id: str
    short: str
    name: str | None = None
    full: str | None = None
    help_text: str | None = None
    help_markdown: str | None = None
    level: str | None = None
    properties: dict[str, Any] | None = None


@dataclass(frozen=True)
class Failure:
    """Why a JUnit case failed (or errored): the message attribute, the element's text, its type attribute."""

    message: str
    text: str
    type: str | None = None


@dataclass
class Case:
    """One JUnit testcase: failing when it has failures, an error when it could not run, skipped when it did not."""

    name: str
    classname: str
    failures: list[Failure] = field(default_factory=list)
    error: Failure | None = None
    skipped: bool = False
    output: str | None = None  # system-out: what the case found that does not fail it
    properties: list[tuple[str, str]] = field(default_factory=list)
    seconds: float | None = None


@dataclass
class Suite:
    name: str
    cases: list[Case]
    seconds: float | None = None


@dataclass(frozen=True)
class Code:
    """Inline code in Markdown (backticks around the escaped text)."""

    text: str


@dataclass(frozen=True)
class Strong:
    text: str


Inline = Union[str, Code, Strong, tuple["Inline", ...]]


@dataclass(frozen=True)
class Heading:
    level: int
    text: Inline


@dataclass(frozen=True)
class Paragraph:
    lines: tuple[Inline, ...]  # consecutive lines of one paragraph


@dataclass(frozen=True)
class Table:
    header: tuple[Inline, ...]
    rows: tuple[tuple[Inline, ...], ...]


@dataclass(frozen=True)
class Quote:
    """A callout (`> **Warning:** ...`), one line per entry."""

    label: str
    lines: tuple[str, ...]


Block = Union[Heading, Paragraph, Table, Quote]


@dataclass
class Report:
    """One report, as every format reads it. `artifacts` defaults to the one artifact; `summary` is the closing
    annotation (title, text); `run_properties` and `invocation` go to the SARIF run as they are."""

    artifact: str
    findings: list[Finding] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    artifacts: list[str] | None = None
    summary: tuple[str, str] | None = None
    run_properties: dict[str, Any] | None = None
    invocation: dict[str, Any] | None = None
    junit_name: str = "clipbridge"
    suites: list[Suite] = field(default_factory=list)
    markdown: list[Block] = field(default_factory=list)
