"""H-correlation: the weighted overlap of two hierarchies' MLB triple sets (001 sec. 5.1.2).

A triple (x, y, z) of distinct items is in a hierarchy's MLB set when ca(x, y) is a proper
descendant of ca(x, z) (001 sec. 3, Properties 1-2: the cluster ca(x, y) holds x and y but
not z, and every cluster holding x and z holds y). Both common ancestors lie on the root path
of x, so comparing their depths decides the triple.

Counting the overlap is Kendall's tau in disguise (docs/architecture.md sec. 8): for a fixed
x, item y gets the key pair (a_y, b_y) = (depth of ca_r(x, y), depth of ca_l(x, y)), and the
shared triples are the pairs (y, z) with a_y > a_z and b_y > b_z. The items of one b lie in
two runs of the deeper tree's preorder, so the keys are read level by level, deep to shallow,
while a Fenwick tree over the shallower tree's few depths counts the a keys of the deeper
levels: O(n_nodes + n) per x (a level's distinct keys cost log depth each), never the
O(n^3) list of triples. On 8,000 labeled documents under a 10,000-document dendrogram this
is 0.19 s against 1.6 s (the whole call) for a sort and a Fenwick tree per x over all items.
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


@numba.njit(cache=True, nogil=True)
def _subtree_item_ranges(
    parent: NDArray[np.intp], order: NDArray[np.intp], item_node: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """Items in preorder of their nodes: ``(items, start, stop)``, where the items of node
    ``v``'s subtree are ``items[start[v]:stop[v]]`` (each subtree is one contiguous run).

    ``order`` lists parents before children; a node's own items come before its children's.
    """
    n_nodes = parent.shape[0]
    size = np.zeros(n_nodes, dtype=np.intp)
    for i in range(item_node.shape[0]):
        size[item_node[i]] += 1
    own = size.copy()
    for k in range(n_nodes - 1, -1, -1):  # children before parents
        v = order[k]
        if parent[v] >= 0:
            size[parent[v]] += size[v]
    start = np.zeros(n_nodes, dtype=np.intp)
    next_free = np.empty(n_nodes, dtype=np.intp)
    for k in range(n_nodes):
        v = order[k]
        if parent[v] >= 0:
            start[v] = next_free[parent[v]]
            next_free[parent[v]] += size[v]
        next_free[v] = start[v] + own[v]
    stop = start + size
    items = np.empty(item_node.shape[0], dtype=np.intp)
    fill = start.copy()
    for i in range(item_node.shape[0]):
        items[fill[item_node[i]]] = i
        fill[item_node[i]] += 1
    return items, start, stop


# nogil (both kernels): biHAC computes a run's error on a second thread while the next
# run starts.
@numba.njit(cache=True, nogil=True)
def _shared_triple_weight(
    parent_s: NDArray[np.intp],
    order_s: NDArray[np.intp],
    node_s: NDArray[np.intp],
    depth_s: NDArray[np.intp],
    weight_s: NDArray[np.float64],
    parent_t: NDArray[np.intp],
    order_t: NDArray[np.intp],
    node_t: NDArray[np.intp],
    depth_t: NDArray[np.intp],
    weight_t: NDArray[np.float64],
) -> tuple[float, float]:
    """Weight of the MLB triples shared by trees S and T: by S's weights, by T's weights.

    For a fixed x, the other items y fall into S levels by b_y, the depth of ca_S(x, y):
    level b holds the subtree of x's ancestor at depth b less that of its ancestor at
    b + 1, one run of S's preorder before it and one after. Sweeping the levels from deep
    to shallow, a level's T keys a_y = depth of ca_T(x, y) are counted first, then each
    distinct key pairs with every deeper-level y of a larger key (a Fenwick tree over T's
    depths): each z meets every y with b_y > b_z and a_y > a_z. O(n_nodes_T + n) per x,
    plus O(log depth_T) per distinct key of a level; T should be the shallower tree.
    """
    items, start, stop = _subtree_item_ranges(parent_s, order_s, node_s)
    node_t_in_order = node_t[items]
    path_s = np.empty(depth_s.max() + 1, dtype=np.intp)
    path_t = np.empty(depth_t.max() + 1, dtype=np.intp)
    ca_t = np.empty(parent_t.shape[0], dtype=np.intp)  # ca_T(x, node) of every T node
    on_path = np.full(parent_t.shape[0], -1, dtype=np.intp)
    n_levels_t = depth_t.max() + 1
    fenwick = np.zeros(n_levels_t + 1, dtype=np.int64)  # deeper levels' keys, 1-based
    count = np.zeros(n_levels_t, dtype=np.int64)  # one level's keys
    keys = np.empty(n_levels_t, dtype=np.intp)  # the distinct keys of one level
    pairs_t = np.zeros(n_levels_t, dtype=np.int64)  # shared pairs by the depth of ca_T(x, z)
    shared_s = 0.0
    shared_t = 0.0
    for x in range(node_s.shape[0]):
        deepest = depth_s[node_s[x]]
        v = node_s[x]
        for b in range(deepest, -1, -1):
            path_s[b] = v
            v = parent_s[v]
        v = node_t[x]
        while v >= 0:
            path_t[depth_t[v]] = v
            v = parent_t[v]
        fill_chain_ancestors(parent_t, order_t, node_t[x], x, on_path, ca_t)
        top = depth_t[node_t[x]]
        pairs_t[: top + 1] = 0
        fenwick[:] = 0
        seen = 0
        for b in range(deepest, -1, -1):
            n_keys = 0
            for lo, hi in _runs_of_level(start, stop, path_s, b, deepest):
                for p in range(lo, hi):
                    a = depth_t[ca_t[node_t_in_order[p]]]
                    if count[a] == 0:
                        keys[n_keys] = a
                        n_keys += 1
                    count[a] += 1
            if b == deepest:
                count[top] -= 1  # x itself
            pairs_s = 0
            for k in range(n_keys):
                a = keys[k]
                at_most = 0
                i = a + 1
                while i > 0:
                    at_most += fenwick[i]
                    i -= i & -i
                pairs = count[a] * (seen - at_most)
                pairs_t[a] += pairs
                pairs_s += pairs
            shared_s += pairs_s * weight_s[path_s[b]]
            for k in range(n_keys):
                a = keys[k]
                i = a + 1
                while i <= n_levels_t:
                    fenwick[i] += count[a]
                    i += i & -i
                seen += count[a]
                count[a] = 0
        for a in range(top + 1):
            shared_t += pairs_t[a] * weight_t[path_t[a]]
    return shared_s, shared_t


@numba.njit(cache=True, nogil=True)
def _runs_of_level(
    start: NDArray[np.intp], stop: NDArray[np.intp], path_s: NDArray[np.intp], b: int, deepest: int
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two preorder runs ``[lo, hi)`` of S level ``b`` around x's ancestor at ``b + 1``."""
    lo, hi = start[path_s[b]], stop[path_s[b]]
    if b == deepest:
        return (lo, hi), (hi, hi)
    return (lo, start[path_s[b + 1]]), (stop[path_s[b + 1]], hi)


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
    # The deeper tree (a dendrogram beside a folder tree) is read in preorder, the
    # shallower one gives the keys.
    depth_l, depth_r = learned.depth(), reference.depth()
    learned_tree, reference_tree = (
        (h.parent.astype(np.intp), topdown_order(h), h.item_node.astype(np.intp), depth, w)
        for h, depth, w in ((learned, depth_l, weight_l), (reference, depth_r, weight_r))
    )
    if depth_l.max() >= depth_r.max():
        shared_l, shared_r = _shared_triple_weight(*learned_tree, *reference_tree)
    else:
        shared_r, shared_l = _shared_triple_weight(*reference_tree, *learned_tree)
    numerator = shared_r + (shared_l if symmetric else 0.0)
    return float(numerator / denominator)
