"""Must-link-before constraints: explicit triples and the ones a labeled folder tree implies.

What a person's folders and critiques say about which documents belong together before
others (001 def. 1), as the HAC family consumes them. Constrained-Divisive's per-level
must-link and cannot-link pairs live with it, in :mod:`foldwise.core.divisive`.
"""

from foldwise.core.constraints._constraints import (
    ConflictingTriplesError,
    Constraints,
    FolderConstraints,
    MLBTriple,
    TripleSet,
    close_triples,
)

__all__ = [
    "ConflictingTriplesError",
    "Constraints",
    "FolderConstraints",
    "MLBTriple",
    "TripleSet",
    "close_triples",
]
