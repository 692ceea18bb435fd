"""Measures of agreement between hierarchies and partitions: H-correlation and the
hierarchical F-score (001), HAI (004), the Rand indices (002), the triples a hierarchy keeps,
and the common-ancestor matrices they share."""

from foldwise.core.measures._common_ancestors import (
    common_ancestor_matrix,
    cophenetic_merge_index,
)
from foldwise.core.measures._f_score import FScore, hierarchical_f_score
from foldwise.core.measures._h_correlation import h_correlation, mlb_triples_per_node
from foldwise.core.measures._hai import hai
from foldwise.core.measures._rand import adjusted_rand_index, corrected_rand_index, rand_index
from foldwise.core.measures._triples_kept import folder_triples_kept, triples_kept

__all__ = [
    "FScore",
    "adjusted_rand_index",
    "common_ancestor_matrix",
    "cophenetic_merge_index",
    "corrected_rand_index",
    "folder_triples_kept",
    "h_correlation",
    "hai",
    "hierarchical_f_score",
    "mlb_triples_per_node",
    "rand_index",
    "triples_kept",
]
