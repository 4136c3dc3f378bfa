"""The CI linter: scan and translate results as findings with rule ids, output formats (SARIF, JUnit, GitHub,
Markdown), filters, baselines, explain, probe and bundle; cli.py is the linter's side of the `clipbridge` command.

Imports scan, the service layer, the dialects and core; imported by the API, app/cli/main.py and the diff/fix output
formats (which reuse its SARIF, GitHub and Markdown writers), never by scan, the service or the dialects
(docs/architecture.md)."""
