"""Constrained-Divisive (002): the splinter-group tree, its per-level constraints, and the
dendrogram stability experiment."""

from foldwise.core.divisive._divisive import (
    ConstrainedDivisive,
    constrained_divisive_tree,
    cut_at_level,
)
from foldwise.core.divisive._divisive_constraints import (
    LevelConstraints,
    close_constraints,
    folder_level_partition,
    partition_constraints,
)
from foldwise.core.divisive._divisive_stability import StabilityResult, divisive_stability

__all__ = [
    "ConstrainedDivisive",
    "LevelConstraints",
    "StabilityResult",
    "close_constraints",
    "constrained_divisive_tree",
    "cut_at_level",
    "divisive_stability",
    "folder_level_partition",
    "partition_constraints",
]
