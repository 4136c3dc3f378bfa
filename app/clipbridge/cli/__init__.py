"""The `clipbridge` command: main.py parses the arguments and runs serve, translate, scan, dialects and schemas;
version.py `--version`; lint.py the linter's commands (scan, lint, explain, probe, bundle) and output.py their
formats and tables; diff.py `clipbridge diff` and `clipbridge trace`, fix.py `clipbridge fix`, chain.py `clipbridge
chain` and `chain-env`, fleet.py `clipbridge fleet run|merge`; model_options.py the options these share;
vocabulary.py the target flag and the mode; deprecated.py the old spellings, read until 0.2.0 with one line on
stderr. Every flag is in the vocabulary table of docs/cli.md (tests/test_cli_vocabulary.py walks the parser against
it).

Part of the top (docs/architecture.md): may import every layer below it; imported only by app/clipbridge/__main__.py
and the `clipbridge` entry point. It imports the server's modules only inside `clipbridge serve` (a declared
exception).
"""
