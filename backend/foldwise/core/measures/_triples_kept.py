"""How many must-link-before triples a hierarchy keeps: those of a folder labelling and
explicit ones (001 sec. 3: the hierarchy keeps (x, y, z) when x meets y strictly deeper than
it meets z)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import Hierarchy
from foldwise.core.measures._common_ancestors import common_ancestor_matrix

_ROW_BLOCK = 128  # rows of common ancestors held at once: 128 x n_items node indices


def folder_triples_kept(h: Hierarchy, labels: Sequence[str]) -> tuple[int, int]:
    """Folder triples (x, y, z), x and y in one folder and z in another, that ``h`` keeps.

    ``h`` keeps (x, y, z) when ca(x, y) lies strictly below ca(x, z). Both are ancestors of
    x, so that is ca(x, y) being deeper; per x, counting pairs (y, z) with a deeper ca(x, y)
    is a sort and a binary search: O(n^2 log n) instead of O(n^3).

    Parameters
    ----------
    h : Hierarchy
        The hierarchy over ``n_items`` items (a dendrogram, possibly restricted).
    labels : sequence of str of length n_items
        The folder of each item; items with equal labels share a folder.

    Returns
    -------
    total : int
        Ordered triples (x, y, z) with ``labels[x] == labels[y] != labels[z]``.
    kept : int
        Those of them that ``h`` keeps; ``0 <= kept <= total``.
    """
    n = h.n_items
    depth = h.depth()
    codes = np.unique(np.asarray(labels), return_inverse=True)[1]
    total = kept = 0
    for lo in range(0, n, _ROW_BLOCK):
        rows = np.arange(lo, min(lo + _ROW_BLOCK, n))
        ca_depth = depth[common_ancestor_matrix(h, rows)]
        for r, x in enumerate(rows):
            same = codes == codes[x]
            same[x] = False
            d_same = ca_depth[r, same]
            d_other = np.sort(ca_depth[r, ~same & (np.arange(n) != x)])
            total += d_same.size * d_other.size
            kept += int(np.searchsorted(d_other, d_same, side="left").sum())
    return total, kept


def triples_kept(h: Hierarchy, triples: NDArray[np.intp]) -> int:
    """How many item triples (x, y, z) have ca(x, y) strictly below ca(x, z) in ``h``.

    Parameters
    ----------
    h : Hierarchy
        The hierarchy over ``n_items`` items.
    triples : ndarray of int of shape (n_triples, 3)
        Item indices (x, y, z), each in ``[0, n_items)``, one triple per row.

    Returns
    -------
    int
        The triples ``h`` keeps, in ``[0, n_triples]``; 0 for no triples.
    """
    if triples.size == 0:
        return 0
    depth = h.depth()
    xs = np.unique(triples[:, 0])
    ca = common_ancestor_matrix(h, xs)
    row = {int(x): i for i, x in enumerate(xs)}
    r = np.array([row[int(x)] for x in triples[:, 0]])
    return int(np.sum(depth[ca[r, triples[:, 1]]] > depth[ca[r, triples[:, 2]]]))
