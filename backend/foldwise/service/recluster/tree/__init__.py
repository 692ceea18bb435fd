"""The tree side of the recluster: tree versions, their proposals and placements, and the
extended tree served from them (docs/architecture.md sec. 6, 11)."""
