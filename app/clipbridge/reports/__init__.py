"""The report formats, each written by one module from one findings view (`view`): SARIF 2.1.0 (`sarif`), JUnit
XML (`junit`), GitHub workflow-command annotations (`github`) and Markdown (`markdown`); `formats.render` picks one.

Every command's report (scan and translate through lint, diff, fix, chain, fleet) converts itself into a
`view.Report` and hands it here: no other module writes these formats (tests/reports/test_one_writer.py counts).

Imports only core and the package's version; imported by lint, diff, fix, chain, fleet, the API and the CLI
(docs/architecture.md)."""
