"""Whole-model diff: run a model on real engines and explain every difference by its clip (docs/diff.md)."""
