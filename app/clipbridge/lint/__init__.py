"""The CI linter: scan and translate results as findings with rule ids, their findings view for the output formats
(`view`; SARIF, JUnit, GitHub and Markdown are written by clipbridge.reports), filters, baselines, explain, probe
and bundle; app/clipbridge/cli/lint.py and app/clipbridge/cli/output.py are the linter's
side of the `clipbridge` command.

Imports scan, the service layer, the dialects, the kit, the engines, the report formats and core; imported by the
API and the CLI, never by scan, the service or the dialects (docs/architecture.md)."""
