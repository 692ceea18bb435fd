"""The probabilistic hierarchy (003): a generalizable Gaussian mixture (USGGM) fit on
labeled and unlabeled documents, its components merged into a tree, documents placed in it.

``_ggm_mixture`` is the mixture, ``_ggm_hierarchy`` the merging and level assignment,
``_ggm_fit`` the functional builder (AIC, merging), ``_ggm`` the estimator (LSI plus builder).
"""

from foldwise.core.probabilistic._ggm import ProbabilisticHierarchy
from foldwise.core.probabilistic._ggm_fit import ClassHierarchy, probabilistic_hierarchy
from foldwise.core.probabilistic._ggm_hierarchy import (
    LevelAssignment,
    assign_levels,
    component_linkage,
    document_linkage,
    gaussian_overlap,
    sample_dependent_clusters,
)
from foldwise.core.probabilistic._ggm_mixture import GeneralizableMixture, fit_usggm

__all__ = [
    "ClassHierarchy",
    "GeneralizableMixture",
    "LevelAssignment",
    "ProbabilisticHierarchy",
    "assign_levels",
    "component_linkage",
    "document_linkage",
    "fit_usggm",
    "gaussian_overlap",
    "probabilistic_hierarchy",
    "sample_dependent_clusters",
]
