"""The clustering core: pure numpy / scipy / scikit-learn, no web, DB or queue imports.

Public names are re-exported here; implementation lives in the private ``_*.py`` modules.
"""

from foldwise.core._arrays import from_npz as arrays_from_npz
from foldwise.core._arrays import to_npz as arrays_to_npz
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
from foldwise.core._divisive import ConstrainedDivisive, constrained_divisive_tree, cut_at_level
from foldwise.core._divisive_constraints import (
    LevelConstraints,
    close_constraints,
    folder_level_partition,
    partition_constraints,
)
from foldwise.core._divisive_stability import StabilityResult, divisive_stability
from foldwise.core._estimators import HAC, IHAC, BiHAC, BiiHAC
from foldwise.core._extended_tree import (
    DocumentPlacement,
    ExtendedTree,
    TreeFolder,
    extended_tree,
    proposal_f_score,
)
from foldwise.core._f_score import FScore, hierarchical_f_score
from foldwise.core._features import TextFeatures, text_features
from foldwise.core._ggm import ProbabilisticHierarchy
from foldwise.core._ggm_fit import ClassHierarchy, probabilistic_hierarchy
from foldwise.core._ggm_hierarchy import (
    LevelAssignment,
    assign_levels,
    component_linkage,
    document_linkage,
    gaussian_overlap,
    sample_dependent_clusters,
)
from foldwise.core._ggm_mixture import GeneralizableMixture, fit_usggm
from foldwise.core._h_correlation import h_correlation, mlb_triples_per_node
from foldwise.core._hai import hai
from foldwise.core._hierarchy import FolderPath, Hierarchy, folder_paths_of
from foldwise.core._ihac import cosine_distances, hac_linkage, ihac_from_distances, ihac_linkage
from foldwise.core._placement import FolderPlacement, Placement
from foldwise.core._rand import adjusted_rand_index, corrected_rand_index, rand_index
from foldwise.core._registry import ESTIMATORS
from foldwise.core._suggest import (
    Suggestion,
    restrict_closer,
    suggest,
    suggest_rows,
    update_placement,
)

__all__ = [
    "ESTIMATORS",
    "HAC",
    "IHAC",
    "BiHAC",
    "BiHACResult",
    "BiiHAC",
    "ClassHierarchy",
    "ConflictingTriplesError",
    "ConstrainedDivisive",
    "Constraints",
    "DocumentPlacement",
    "ExtendedTree",
    "FScore",
    "FolderConstraints",
    "FolderPath",
    "FolderPlacement",
    "GeneralizableMixture",
    "Hierarchy",
    "LevelAssignment",
    "LevelConstraints",
    "MLBTriple",
    "Placement",
    "ProbabilisticHierarchy",
    "StabilityResult",
    "Suggestion",
    "TextFeatures",
    "TreeFolder",
    "TripleSet",
    "adapt_weights",
    "adjusted_rand_index",
    "arrays_from_npz",
    "arrays_to_npz",
    "assign_levels",
    "bihac",
    "close_constraints",
    "close_triples",
    "common_ancestor_matrix",
    "component_linkage",
    "constrained_divisive_tree",
    "cophenetic_merge_index",
    "corrected_rand_index",
    "cosine_distances",
    "cut_at_level",
    "divisive_stability",
    "document_linkage",
    "extended_tree",
    "fit_usggm",
    "folder_level_partition",
    "folder_paths_of",
    "gaussian_overlap",
    "h_correlation",
    "hac_linkage",
    "hai",
    "hierarchical_f_score",
    "ihac_from_distances",
    "ihac_linkage",
    "mlb_triples_per_node",
    "partition_constraints",
    "probabilistic_hierarchy",
    "proposal_f_score",
    "rand_index",
    "restrict_closer",
    "sample_dependent_clusters",
    "suggest",
    "suggest_rows",
    "text_features",
    "update_placement",
]
