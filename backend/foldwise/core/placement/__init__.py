"""New documents into the person's folders, and the extended tree that shows them there.

``_placement`` is the placement model (:class:`FolderPlacement`), ``_levels`` the level
assignment of its folder posteriors (:class:`Placement`), ``_proposals`` the search for
proposed folders in a dendrogram, and ``_extended_tree`` puts the three together.
``_novelty`` is the open-set test by neighbourhood, ``_questions`` chooses the "which is
closer?" question worth asking. ``_suggest`` places one new document at
once with a stored model (no recluster), ``_new_folders`` gives a fitted model the SVMs of
folders created since its fit and takes those of folders gone. ``_cross_validated`` keeps
what a fit learned by cross-validation (:class:`CrossValidated`) for the next fit to reuse.
"""

from foldwise.core.placement._cross_validated import CrossValidated
from foldwise.core.placement._extended_tree import (
    DocumentPlacement,
    ExtendedTree,
    TreeFolder,
    extended_tree,
    proposal_f_score,
)
from foldwise.core.placement._kept import KEEP_MARGIN, MIN_MOVE_CONFIDENCE
from foldwise.core.placement._levels import Placement
from foldwise.core.placement._naive_bayes import REPRESENTATIONS as PLACEMENT_REPRESENTATIONS
from foldwise.core.placement._new_folders import add_folders, remove_folders
from foldwise.core.placement._novelty import neighbourhood_novelty, neighbourhood_p_values
from foldwise.core.placement._placement import FolderPlacement
from foldwise.core.placement._proposals import same_proposal
from foldwise.core.placement._questions import (
    CloserQuestion,
    closer_questions,
    question_priority,
)
from foldwise.core.placement._suggest import (
    Suggestion,
    restrict_closer,
    suggest,
    suggest_rows,
)

__all__ = [
    "KEEP_MARGIN",
    "MIN_MOVE_CONFIDENCE",
    "PLACEMENT_REPRESENTATIONS",
    "CloserQuestion",
    "CrossValidated",
    "DocumentPlacement",
    "ExtendedTree",
    "FolderPlacement",
    "Placement",
    "Suggestion",
    "TreeFolder",
    "add_folders",
    "closer_questions",
    "extended_tree",
    "neighbourhood_novelty",
    "neighbourhood_p_values",
    "proposal_f_score",
    "question_priority",
    "remove_folders",
    "restrict_closer",
    "same_proposal",
    "suggest",
    "suggest_rows",
]
