"""The CI linter: scan and translate results as findings with rule ids, output formats (SARIF, JUnit, GitHub,
Markdown), filters, baselines, explain, probe and bundle; app/clipbridge/cli/lint.py and app/clipbridge/cli/output.py are the linter's
side of the `clipbridge` command.

Imports scan, the service layer, the dialects, the kit, the engines and core; imported by the API, the CLI and the
diff/fix output formats (which reuse its SARIF, GitHub and Markdown writers), never by scan, the service or the
dialects (docs/architecture.md)."""
