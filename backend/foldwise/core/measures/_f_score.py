"""Hierarchical F-score: the best learned cluster per reference folder (001 sec. 5.1.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import Hierarchy


@dataclass(frozen=True)
class FScore:
    """F-scores of the reference folders against their best learned clusters.

    Attributes
    ----------
    leaf : float
        Mean F over the evaluated leaf folders (no subfolder holds documents); ``nan`` if none.
    higher : float
        Mean F over the evaluated non-leaf folders, the root excluded; ``nan`` if none.
    folders : ndarray of shape (n_folders,), intp
        Evaluated reference nodes: every non-root folder with a document among ``items``.
    scores : ndarray of shape (n_folders,), float64
        Best F of each folder.
    clusters : ndarray of shape (n_folders,), intp
        The learned node that reaches it (the first one on ties).
    is_leaf : ndarray of shape (n_folders,), bool
        Whether the folder is a leaf folder.
    """

    leaf: float
    higher: float
    folders: NDArray[np.intp]
    scores: NDArray[np.float64]
    clusters: NDArray[np.intp]
    is_leaf: NDArray[np.bool_]


def hierarchical_f_score(
    learned: Hierarchy, reference: Hierarchy, items: NDArray[np.intp] | Sequence[int]
) -> FScore:
    """For each reference folder, the best F-score over all learned clusters (001 sec. 5.1.1).

    A folder's class holds the documents of its whole subtree (000 sec. 5.2: "for a higher
    level class, all documents contained in subclasses are also counted"). Precision and
    recall count only ``items``, the unlabeled documents, so the documents that produced the
    constraints do not inflate the score. Each folder picks its cluster independently; the
    paper accepts that a cluster may serve several folders.

    Parameters
    ----------
    learned : Hierarchy
        The learned dendrogram or cluster tree; every node is a candidate cluster.
    reference : Hierarchy
        The folder tree over the same items. A folder is a leaf when none of its subfolders
        holds any document of the whole reference (not only of ``items``).
    items : array-like of int of shape (n_selected,)
        The documents to score on.

    Returns
    -------
    FScore
        Means over leaf and higher folders, and the per-folder values.
    """
    if learned.n_items != reference.n_items:
        raise ValueError(
            f"hierarchies hold different item counts: {learned.n_items} != {reference.n_items}"
        )
    inner = _nodes_with_filled_children(reference)
    learned, reference = learned.restrict(items), reference.restrict(items)
    class_size = reference.subtree_item_counts()
    folders = np.flatnonzero((class_size > 0) & (reference.parent >= 0))
    column = np.full(reference.n_nodes, -1, dtype=np.intp)
    column[folders] = np.arange(folders.size)

    # overlap[k, c] = |cluster k ∩ class c|: seed each item's learned node with every folder
    # on its reference root path, then add children into parents bottom-up (one pass)
    overlap = np.zeros((learned.n_nodes, folders.size))
    node_l = learned.item_node
    node_r = reference.item_node.copy()
    while True:
        keep = node_r >= 0
        if not keep.any():
            break
        col = column[node_r[keep]]
        hit = col >= 0
        np.add.at(overlap, (node_l[keep][hit], col[hit]), 1.0)
        node_r[keep] = reference.parent[node_r[keep]]
    for node in learned.postorder():
        p = learned.parent[node]
        if p >= 0:
            overlap[p] += overlap[node]

    cluster_size = learned.subtree_item_counts()
    # every evaluated class is non-empty, so the denominator is never 0
    f = 2.0 * overlap / (cluster_size[:, None] + class_size[folders][None, :])
    best = np.argmax(f, axis=0) if folders.size else np.zeros(0, dtype=np.intp)
    scores = f[best, np.arange(folders.size)]
    is_leaf = ~inner[folders]
    return FScore(
        leaf=_mean(scores[is_leaf]),
        higher=_mean(scores[~is_leaf]),
        folders=folders.astype(np.intp),
        scores=scores,
        clusters=best.astype(np.intp),
        is_leaf=is_leaf,
    )


def _nodes_with_filled_children(h: Hierarchy) -> NDArray[np.bool_]:
    size = h.subtree_item_counts()
    child = np.flatnonzero((h.parent >= 0) & (size > 0))
    inner = np.zeros(h.n_nodes, dtype=bool)
    inner[h.parent[child]] = True
    return inner


def _mean(values: NDArray[np.float64]) -> float:
    return float(values.mean()) if values.size else float("nan")
