"""Critiques of the extended tree and the MLB triples they become (DESIGN.md sec. 7)."""
