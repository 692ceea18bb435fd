"""Deepest common ancestors of item pairs, row by row, for any :class:`Hierarchy`.

Every measure here compares, for a fixed item x, how deep x meets each other item in two
hierarchies. The ancestors of x form a chain, so one top-down pass over the nodes finds the
common ancestor of x with every item at once: O(n_nodes + n_items) per row, no O(n^3) walk.
Tree depth orders the chain for folder trees and dendrograms alike; merge heights would not,
because iHAC dendrograms can have inversions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import Hierarchy


def topdown_order(h: Hierarchy) -> NDArray[np.intp]:
    """Nodes ordered parents before children (root first). Shape (n_nodes,)."""
    return np.argsort(h.depth(), kind="stable").astype(np.intp)


@numba.njit(cache=True)
def fill_chain_ancestors(
    parent: NDArray[np.intp],
    order: NDArray[np.intp],
    start: int,
    stamp: int,
    mark: NDArray[np.intp],
    ca: NDArray[np.intp],
) -> None:
    """Set ``ca[v]`` to the deepest ancestor of node ``v`` on the root path of ``start``.

    ``mark`` holds, per node, the last ``stamp`` that put it on a chain; stamping instead of
    clearing keeps each row O(chain length + n_nodes).
    """
    v = start
    while v >= 0:
        mark[v] = stamp
        v = parent[v]
    for i in range(order.shape[0]):
        v = order[i]
        if mark[v] == stamp:
            ca[v] = v
        else:
            # parents come first in ``order``, so ca[parent] is already set
            ca[v] = ca[parent[v]]


@numba.njit(cache=True)
def _common_ancestor_rows(
    parent: NDArray[np.intp],
    order: NDArray[np.intp],
    item_node: NDArray[np.intp],
    rows: NDArray[np.intp],
) -> NDArray[np.intp]:
    n_items = item_node.shape[0]
    out = np.empty((rows.shape[0], n_items), dtype=np.intp)
    mark = np.full(parent.shape[0], -1, dtype=np.intp)
    ca = np.empty(parent.shape[0], dtype=np.intp)
    for r in range(rows.shape[0]):
        fill_chain_ancestors(parent, order, item_node[rows[r]], r, mark, ca)
        for y in range(n_items):
            out[r, y] = ca[item_node[y]]
    return out


def common_ancestor_matrix(
    h: Hierarchy, rows: NDArray[np.intp] | Sequence[int] | None = None
) -> NDArray[np.intp]:
    """Deepest common ancestor node ``ca(x, y)`` for items ``x`` in ``rows`` and all ``y``.

    Parameters
    ----------
    h : Hierarchy
        The tree with ``n_items`` items.
    rows : array-like of int of shape (n_rows,), optional
        Items ``x``; all items when omitted.

    Returns
    -------
    ndarray of shape (n_rows, n_items), intp
        ``ca(x, y)`` as a node index; ``ca(x, x)`` is the node ``x`` is attached to.
    """
    rows_arr = np.arange(h.n_items) if rows is None else np.asarray(rows)
    return _common_ancestor_rows(
        h.parent.astype(np.intp),
        topdown_order(h),
        h.item_node.astype(np.intp),
        rows_arr.astype(np.intp),
    )


def cophenetic_merge_index(Z: NDArray[np.floating]) -> NDArray[np.int32]:
    """The merge step at which each pair of items was joined in a linkage dendrogram.

    Like :func:`scipy.cluster.hierarchy.cophenet`, but with the merge order instead of the
    merge height: iHAC merges obey constraints, so heights can invert while the merge order
    still nests clusters.

    Parameters
    ----------
    Z : ndarray of shape (n - 1, 4)
        A scipy linkage matrix.

    Returns
    -------
    ndarray of shape (n, n), int32
        Entry ``(x, y)`` is the row ``k`` of ``Z`` whose merge first put ``x`` and ``y`` in one
        cluster; ``-1`` on the diagonal.
    """
    h = Hierarchy.from_linkage(Z)
    n = h.n_items
    steps = np.empty((n, n), dtype=np.int32)
    # row blocks keep the intp temporaries small next to the int32 result (100 MB at n = 5000)
    for lo in range(0, n, 1024):
        rows = np.arange(lo, min(lo + 1024, n))
        # node n + k is formed by merge k (Hierarchy.from_linkage); leaves give -1 after the shift
        steps[rows] = common_ancestor_matrix(h, rows) - n
    np.fill_diagonal(steps, -1)
    return steps
