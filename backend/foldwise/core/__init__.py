"""The clustering core: pure numpy / scipy / scikit-learn, no web, DB or queue imports.

Public names are re-exported here; implementation lives in the private ``_*.py`` modules.
"""

from foldwise.core._bihac import BiHACResult, adapt_weights, bihac
from foldwise.core._common_ancestors import common_ancestor_matrix, cophenetic_merge_index
from foldwise.core._constraints import (
    ConflictingTriplesError,
    Constraints,
    FolderConstraints,
    MLBTriple,
    TripleSet,
    close_triples,
)
from foldwise.core._estimators import HAC, IHAC, BiHAC, BiiHAC
from foldwise.core._f_score import FScore, hierarchical_f_score
from foldwise.core._features import TextFeatures, text_features
from foldwise.core._h_correlation import h_correlation, mlb_triples_per_node
from foldwise.core._hai import hai
from foldwise.core._hierarchy import FolderPath, Hierarchy, folder_paths_of
from foldwise.core._ihac import cosine_distances, hac_linkage, ihac_from_distances, ihac_linkage
from foldwise.core._rand import adjusted_rand_index, corrected_rand_index, rand_index

__all__ = [
    "HAC",
    "IHAC",
    "BiHAC",
    "BiHACResult",
    "BiiHAC",
    "ConflictingTriplesError",
    "Constraints",
    "FScore",
    "FolderConstraints",
    "FolderPath",
    "Hierarchy",
    "MLBTriple",
    "TextFeatures",
    "TripleSet",
    "adapt_weights",
    "adjusted_rand_index",
    "bihac",
    "close_triples",
    "common_ancestor_matrix",
    "cophenetic_merge_index",
    "corrected_rand_index",
    "cosine_distances",
    "folder_paths_of",
    "h_correlation",
    "hac_linkage",
    "hai",
    "hierarchical_f_score",
    "ihac_from_distances",
    "ihac_linkage",
    "mlb_triples_per_node",
    "rand_index",
    "text_features",
]
