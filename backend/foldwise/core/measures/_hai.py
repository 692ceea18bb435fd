"""Hierarchy Agreement Index (004 eq. 2): a Rand index over hierarchy distances of item pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import Hierarchy
from foldwise.core.measures._common_ancestors import common_ancestor_matrix

_ROW_BLOCK = 512  # rows of the (n, n) distance matrices held at once: 2 x 512 x n floats


def hierarchy_distance_of_nodes(h: Hierarchy) -> NDArray[np.float64]:
    """d_H of two items whose smallest common node is v, per node v (004 sec. 2).

    ``size(v) = |v ∩ D| / N``, or 0 when v is a leaf node: its items are maximally close.
    A node counts as a leaf when none of its child nodes holds an item, so folders emptied by
    :meth:`Hierarchy.restrict` do not make their parent an inner node. Shape (n_nodes,).
    """
    size = h.subtree_item_counts()
    child = np.flatnonzero((h.parent >= 0) & (size > 0))
    inner = np.zeros(h.n_nodes, dtype=bool)
    inner[h.parent[child]] = True
    return np.where(inner, size / max(h.n_items, 1), 0.0)


def hai(
    h1: Hierarchy, h2: Hierarchy, items: NDArray[np.intp] | Sequence[int] | None = None
) -> float:
    """Hierarchy Agreement Index of two hierarchies over the same items (004 eq. 2).

    ``HAI = 1 - (1 / N^2) sum_i sum_j |d_H1(x_i, x_j) - d_H2(x_i, x_j)|`` with the hierarchy
    distance of :func:`hierarchy_distance_of_nodes`; pairs i = j contribute 0.

    Parameters
    ----------
    h1, h2 : Hierarchy
        Two hierarchies over the same ``n_items`` items.
    items : array-like of int of shape (N,), optional
        Compare only these items (both hierarchies restricted to them); all items by default.

    Returns
    -------
    float
        In [0, 1]; 1 when both hierarchies put every pair at the same distance. ``nan`` for
        no items.
    """
    if h1.n_items != h2.n_items:
        raise ValueError(f"hierarchies hold different item counts: {h1.n_items} != {h2.n_items}")
    if items is not None:
        h1, h2 = h1.restrict(items), h2.restrict(items)
    n = h1.n_items
    if n == 0:
        return float("nan")
    dist1, dist2 = hierarchy_distance_of_nodes(h1), hierarchy_distance_of_nodes(h2)
    total = 0.0
    for lo in range(0, n, _ROW_BLOCK):
        rows = np.arange(lo, min(lo + _ROW_BLOCK, n))
        gap = np.abs(
            dist1[common_ancestor_matrix(h1, rows)] - dist2[common_ancestor_matrix(h2, rows)]
        )
        # 004: an item is at distance 0 from itself, whatever node it sits on
        gap[np.arange(rows.size), rows] = 0.0
        total += float(gap.sum())
    return 1.0 - total / n**2
