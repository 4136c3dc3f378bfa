"""Fleet mode: `clipbridge fleet` runs the scan and the diff over a whole registry of models (docs/fleet.md).

What lives here: finding the models and sharding them by sha256 (sources), the content-addressed cache key (keys),
the atomic cache and journal (store), the per-model job that calls clipbridge.scan and clipbridge.diff as they are
(job), engines pinned to another version in their own environment (envs), the local backend (local: sandbox workers
driven from a shared queue; slots: each worker's processes, started ahead and replaced ahead) and the Ray backend
(backends), the run itself with resume (runner), the line's pydantic model (models) and the reports (reports:
results.jsonl, and SARIF, JUnit and summary.md written by clipbridge.reports), what changed since a previous run
(changes) and the progress display (progress).

Imports diff, scan, the report formats, the engines and core (and ray, optional, inside the Ray backend); imported
only by the CLI (app/clipbridge/cli/fleet.py), and `models` by the schema export (schemas/FleetRecord.json). It sits
above diff and scan, beside the CLI, and nothing below it imports it (tests/test_architecture.py).
"""
