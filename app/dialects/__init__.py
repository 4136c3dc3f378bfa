"""One module per dialect: parse, validate, resolve to a Meaning, and emit from a Meaning."""
