"""H-correlation: the weighted overlap of two hierarchies' MLB triple sets (001 sec. 5.1.2).

A triple (x, y, z) of distinct items is in a hierarchy's MLB set when ca(x, y) is a proper
descendant of ca(x, z) (001 sec. 3, Properties 1-2: the cluster ca(x, y) holds x and y but
not z, and every cluster holding x and z holds y). Both common ancestors lie on the root path
of x, so comparing their depths decides the triple.

Counting the overlap is Kendall's tau in disguise (docs/architecture.md sec. 8): for a fixed x, item
y gets the key pair (a_y, b_y) = (depth of ca_r(x, y), depth of ca_l(x, y)), and the shared triples
are the pairs (y, z) with a_y > a_z and b_y > b_z. Sweeping z by falling a_z while a Fenwick tree
counts the b keys already seen gives O(n (n_nodes + n log depth)) in all, never the O(n^3) list of
triples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import Hierarchy
from foldwise.core.measures._common_ancestors import fill_chain_ancestors, topdown_order

WEIGHTINGS = ("node", "equal")


def mlb_triples_per_node(h: Hierarchy) -> NDArray[np.float64]:
    """Number of MLB triples (d1, d2, d3) with ca(d1, d3) = v, per node v. Shape (n_nodes,).

    d1 and d2 share a child subtree c of v (so ca(d1, d2) lies below v) and d3 is elsewhere in
    v's subtree, on v itself or under another child: s_c (s_c - 1) (s_v - s_c) summed over c.
    Items on v itself cannot be d1, since ca(d1, anything below v) would be v.
    """
    s = h.subtree_item_counts().astype(np.float64)
    child = np.flatnonzero(h.parent >= 0)
    per_node = np.zeros(h.n_nodes)
    np.add.at(
        per_node, h.parent[child], s[child] * (s[child] - 1) * (s[h.parent[child]] - s[child])
    )
    return per_node


def _triple_weights(h: Hierarchy, weighting: str) -> tuple[NDArray[np.float64], float]:
    """Weight of a triple by its node ca(d1, d3), and the total weight of the MLB set."""
    per_node = mlb_triples_per_node(h)
    has = per_node > 0
    if weighting == "equal":
        return has.astype(np.float64), float(per_node.sum())
    # 001 eq. 9: 1 / #triples sharing ca(d1, d3), so each node with triples weighs 1 in total
    weight = np.zeros(h.n_nodes)
    weight[has] = 1.0 / per_node[has]
    return weight, float(has.sum())


# nogil: biHAC computes a run's error on a second thread while the next run starts.
@numba.njit(cache=True, nogil=True)
def _shared_triple_weight(
    parent_l: NDArray[np.intp],
    order_l: NDArray[np.intp],
    node_l: NDArray[np.intp],
    depth_l: NDArray[np.intp],
    weight_l: NDArray[np.float64],
    parent_r: NDArray[np.intp],
    order_r: NDArray[np.intp],
    node_r: NDArray[np.intp],
    depth_r: NDArray[np.intp],
    weight_r: NDArray[np.float64],
) -> tuple[float, float]:
    n = node_l.shape[0]
    mark_l = np.full(parent_l.shape[0], -1, dtype=np.intp)
    mark_r = np.full(parent_r.shape[0], -1, dtype=np.intp)
    ca_l = np.empty(parent_l.shape[0], dtype=np.intp)
    ca_r = np.empty(parent_r.shape[0], dtype=np.intp)
    n_levels_a = depth_r.max() + 1
    n_levels_b = depth_l.max() + 1
    fenwick = np.zeros(n_levels_b + 1, dtype=np.int64)  # counts of b keys, 1-based
    level_start = np.empty(n_levels_a + 1, dtype=np.intp)
    by_a = np.empty(n, dtype=np.intp)
    a = np.empty(n, dtype=np.intp)
    b = np.empty(n, dtype=np.intp)
    shared_r = 0.0
    shared_l = 0.0
    for x in range(n):
        fill_chain_ancestors(parent_l, order_l, node_l[x], x, mark_l, ca_l)
        fill_chain_ancestors(parent_r, order_r, node_r[x], x, mark_r, ca_r)
        # counting sort of the other items by reference level a
        level_start[:] = 0
        for y in range(n):
            a[y] = depth_r[ca_r[node_r[y]]]
            b[y] = depth_l[ca_l[node_l[y]]]
            if y != x:
                level_start[a[y] + 1] += 1
        for lev in range(n_levels_a):
            level_start[lev + 1] += level_start[lev]
        fill = level_start[:-1].copy()
        for y in range(n):
            if y != x:
                by_a[fill[a[y]]] = y
                fill[a[y]] += 1
        seen = 0
        for lev in range(n_levels_a - 1, -1, -1):
            lo = level_start[lev]
            hi = level_start[lev + 1]
            # z at level lev pairs with every y seen so far (a_y > a_z) whose b_y > b_z
            for k in range(lo, hi):
                z = by_a[k]
                at_most = 0
                i = b[z] + 1
                while i > 0:
                    at_most += fenwick[i]
                    i -= i & -i
                above = seen - at_most
                if above > 0:
                    shared_r += above * weight_r[ca_r[node_r[z]]]
                    shared_l += above * weight_l[ca_l[node_l[z]]]
            for k in range(lo, hi):
                i = b[by_a[k]] + 1
                while i <= n_levels_b:
                    fenwick[i] += 1
                    i += i & -i
            seen += hi - lo
        fenwick[:] = 0
    return shared_r, shared_l


def h_correlation(
    learned: Hierarchy,
    reference: Hierarchy,
    *,
    symmetric: bool = False,
    weighting: str = "node",
    items: NDArray[np.intp] | Sequence[int] | None = None,
) -> float:
    """H-correlation between a learned hierarchy and a reference (001 eq. 6, 8, 9).

    Parameters
    ----------
    learned, reference : Hierarchy
        Two hierarchies over the same ``n_items`` items (a dendrogram, a folder tree, ...).
    symmetric : bool, default False
        ``False``: the asymmetric H_a of 001 eq. 8, the reference-weighted share of the
        reference's MLB triples found in ``learned`` (a dendrogram's extra detail costs
        nothing). ``True``: the symmetric H_s of 001 eq. 6.
    weighting : {"node", "equal"}, default "node"
        ``"node"``: 001 eq. 9, each triple weighs 1 / #triples sharing its node ca(d1, d3), so
        every node with triples weighs 1 in total. ``"equal"``: every triple weighs 1.
    items : array-like of int of shape (n_selected,), optional
        Compare only these items (both hierarchies restricted to them).

    Returns
    -------
    float
        In [0, 1]. ``nan`` when the denominator has no triple (fewer than three items, or a
        flat reference): the reference then states no hierarchical relation to recover, and
        ``nan`` keeps such runs out of an average taken with ``numpy.nanmean``.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if learned.n_items != reference.n_items:
        raise ValueError(
            f"hierarchies hold different item counts: {learned.n_items} != {reference.n_items}"
        )
    if items is not None:
        learned, reference = learned.restrict(items), reference.restrict(items)
    weight_l, total_l = _triple_weights(learned, weighting)
    weight_r, total_r = _triple_weights(reference, weighting)
    denominator = total_r + (total_l if symmetric else 0.0)
    if denominator == 0:
        return float("nan")
    shared_r, shared_l = _shared_triple_weight(
        learned.parent.astype(np.intp),
        topdown_order(learned),
        learned.item_node.astype(np.intp),
        learned.depth(),
        weight_l,
        reference.parent.astype(np.intp),
        topdown_order(reference),
        reference.item_node.astype(np.intp),
        reference.depth(),
        weight_r,
    )
    numerator = shared_r + (shared_l if symmetric else 0.0)
    return float(numerator / denominator)
