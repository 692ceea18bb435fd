"""The clustering core: pure numpy / scipy / scikit-learn, no web, DB or queue imports.

Public names are re-exported here. The implementation lives in private ``_*.py`` modules,
grouped into rooms, each of which re-exports its own public names:

- :mod:`~foldwise.core.constraints`: must-link-before triples and folder constraints;
- :mod:`~foldwise.core.hac`: HAC, iHAC, biHAC and biiHAC (builders and estimators);
- :mod:`~foldwise.core.divisive`: Constrained-Divisive, its constraints and stability;
- :mod:`~foldwise.core.probabilistic`: the probabilistic hierarchy (USGGM);
- :mod:`~foldwise.core.placement`: placing new documents, proposals, the extended tree;
- :mod:`~foldwise.core.measures`: H-correlation, F-score, HAI, Rand indices, triples kept.

Four modules stay at this level: ``_hierarchy`` (the tree type every room uses),
``_features`` (tf-idf, the input of every builder), ``_registry`` (builders by name) and
``_kernels`` (compiling the numba kernels ahead of the first fit).
"""

from foldwise.core._arrays import from_npz as arrays_from_npz
from foldwise.core._arrays import to_npz as arrays_to_npz
from foldwise.core._features import (
    TextAnalysis,
    TextFeatures,
    text_features,
)
from foldwise.core._hierarchy import FolderPath, Hierarchy, folder_paths_of
from foldwise.core._kernels import compile_kernels
from foldwise.core._language import LANGUAGE_CODES
from foldwise.core._language import posteriors as language_posteriors
from foldwise.core._language import remember as remember_language_posteriors
from foldwise.core._registry import ESTIMATORS
from foldwise.core.constraints import (
    ConflictingTriplesError,
    Constraints,
    FolderConstraints,
    MLBTriple,
    TripleSet,
    close_triples,
)
from foldwise.core.divisive import (
    ConstrainedDivisive,
    LevelConstraints,
    StabilityResult,
    close_constraints,
    constrained_divisive_tree,
    cut_at_level,
    divisive_stability,
    folder_level_partition,
    partition_constraints,
)
from foldwise.core.hac import (
    HAC,
    IHAC,
    BiHAC,
    BiHACResult,
    BiiHAC,
    adapt_weights,
    bihac,
    cosine_distances,
    hac_linkage,
    ihac_from_distances,
    ihac_linkage,
)
from foldwise.core.measures import (
    FScore,
    adjusted_rand_index,
    common_ancestor_matrix,
    cophenetic_merge_index,
    corrected_rand_index,
    folder_triples_kept,
    h_correlation,
    hai,
    hierarchical_f_score,
    mlb_triples_per_node,
    rand_index,
    triples_kept,
)
from foldwise.core.placement import (
    KEEP_MARGIN,
    MIN_MOVE_CONFIDENCE,
    PLACEMENT_REPRESENTATIONS,
    CrossValidated,
    DocumentPlacement,
    ExtendedTree,
    FolderPlacement,
    Placement,
    Suggestion,
    TreeFolder,
    add_folders,
    closer_questions,
    extended_tree,
    neighbourhood_novelty,
    neighbourhood_p_values,
    proposal_f_score,
    question_priority,
    remove_folders,
    restrict_closer,
    same_proposal,
    suggest,
    suggest_rows,
)
from foldwise.core.probabilistic import (
    ClassHierarchy,
    GeneralizableMixture,
    LevelAssignment,
    ProbabilisticHierarchy,
    assign_levels,
    component_linkage,
    document_linkage,
    fit_usggm,
    gaussian_overlap,
    probabilistic_hierarchy,
    sample_dependent_clusters,
)

__all__ = [
    "ESTIMATORS",
    "HAC",
    "IHAC",
    "KEEP_MARGIN",
    "LANGUAGE_CODES",
    "MIN_MOVE_CONFIDENCE",
    "PLACEMENT_REPRESENTATIONS",
    "BiHAC",
    "BiHACResult",
    "BiiHAC",
    "ClassHierarchy",
    "ConflictingTriplesError",
    "ConstrainedDivisive",
    "Constraints",
    "CrossValidated",
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
    "TextAnalysis",
    "TextFeatures",
    "TreeFolder",
    "TripleSet",
    "adapt_weights",
    "add_folders",
    "adjusted_rand_index",
    "arrays_from_npz",
    "arrays_to_npz",
    "assign_levels",
    "bihac",
    "close_constraints",
    "close_triples",
    "closer_questions",
    "common_ancestor_matrix",
    "compile_kernels",
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
    "folder_triples_kept",
    "gaussian_overlap",
    "h_correlation",
    "hac_linkage",
    "hai",
    "hierarchical_f_score",
    "ihac_from_distances",
    "ihac_linkage",
    "language_posteriors",
    "mlb_triples_per_node",
    "neighbourhood_novelty",
    "neighbourhood_p_values",
    "partition_constraints",
    "probabilistic_hierarchy",
    "proposal_f_score",
    "question_priority",
    "rand_index",
    "remember_language_posteriors",
    "remove_folders",
    "restrict_closer",
    "same_proposal",
    "sample_dependent_clusters",
    "suggest",
    "suggest_rows",
    "text_features",
    "triples_kept",
]
