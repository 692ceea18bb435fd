"""Critiques of the extended tree and the MLB triples they become (docs/architecture.md sec. 7)."""
