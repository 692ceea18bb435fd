"""Admissibility of iHAC merges, compiled: folder triples in closed form, explicit triples,
and the BUILD look-ahead (001 sec. 4.1; docs/architecture.md sec. 3). Used by :mod:`_ihac_kernel`.

Clusters are slots of the kernel; per slot it keeps ``nlab`` (labeled documents), ``lca``
(their lowest common folder) and ``ntrip`` (items of explicit triples), and ``slot_of`` maps
each triple item to its slot.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def lowest_common_folder(a, b, parent, depth):  # type: ignore[no-untyped-def]
    while depth[a] > depth[b]:
        a = parent[a]
    while depth[b] > depth[a]:
        b = parent[b]
    while a != b:
        a = parent[a]
        b = parent[b]
    return a


@njit(cache=True, nogil=True)
def child_toward(top, node, parent):  # type: ignore[no-untyped-def]
    while parent[node] != top:
        node = parent[node]
    return node


@njit(cache=True, nogil=True)
def folder_violations(i, j, nlab, lca, fparent, fdepth, ftotal):  # type: ignore[no-untyped-def]
    """Folder triples newly violated by merging slots i and j (0 = admissible)."""
    if nlab[i] == 0 or nlab[j] == 0:
        return 0
    top = lowest_common_folder(lca[i], lca[j], fparent, fdepth)
    count = 0
    if lca[i] != top:
        c = child_toward(top, lca[i], fparent)
        count += nlab[i] * nlab[j] * (ftotal[c] - nlab[i])
    if lca[j] != top:
        c = child_toward(top, lca[j], fparent)
        count += nlab[i] * nlab[j] * (ftotal[c] - nlab[j])
    return count


@njit(cache=True, nogil=True)
def triple_violations(i, j, ntrip, tri, slot_of):  # type: ignore[no-untyped-def]
    """Explicit triples newly violated by merging slots i and j."""
    if ntrip[i] == 0 or ntrip[j] == 0:
        return 0
    count = 0
    for t in range(tri.shape[0]):
        sx = slot_of[tri[t, 0]]
        sy = slot_of[tri[t, 1]]
        sz = slot_of[tri[t, 2]]
        if ((sx == i and sz == j) or (sx == j and sz == i)) and sy != i and sy != j:
            count += 1
    return count


@njit(cache=True, nogil=True)
def find_root(uf, v):  # type: ignore[no-untyped-def]
    while uf[v] != v:
        uf[v] = uf[uf[v]]
        v = uf[v]
    return v


@njit(cache=True, nogil=True)
def lookahead_ok(
    i, j, head, nxt, nlab, lca, ntrip, fparent, fdepth, tri, slot_of, scratch, folder_key
):  # type: ignore[no-untyped-def]
    """Aho et al.'s BUILD on the constraints still open if slots i and j merge.

    Leaves are the current clusters that hold labeled documents or triple items (j standing
    for the merged i + j); clusters with neither can merge anywhere and never cause a dead
    end. On a leaf set S, BUILD links x and y of every open explicit triple inside S, and,
    for the folder triples, every two clusters whose labeled documents lie below the same
    child of N(S), the lowest folder holding all labeled documents of S: exactly the pairs
    some implied triple (x, y, z), z in S, links -- without materialising one triple.

    ``scratch`` (size n_slots) and ``folder_key`` (size n_folders) are int64 arrays filled
    with -1 on entry and on exit.
    """
    # Leaves 0..k-1: constrained active clusters, with the merged summary for j.
    leaves = np.empty(nlab.shape[0], dtype=np.int64)
    k = 0
    s = head
    while s >= 0:
        if s != i and (nlab[s] > 0 or ntrip[s] > 0 or s == j):
            scratch[s] = k
            leaves[k] = s
            k += 1
        s = nxt[s]
    leaf_lab = np.empty(k, dtype=np.int64)
    leaf_lca = np.empty(k, dtype=np.int64)
    for v in range(k):
        leaf_lab[v] = nlab[leaves[v]]
        leaf_lca[v] = lca[leaves[v]]
    vj = scratch[j]
    if nlab[i] > 0:
        leaf_lca[vj] = (
            lca[i] if nlab[j] == 0 else lowest_common_folder(lca[i], lca[j], fparent, fdepth)
        )
        leaf_lab[vj] = nlab[i] + nlab[j]
    n_t = tri.shape[0]
    tl = np.empty((n_t, 3), dtype=np.int64)
    open_t = np.zeros(n_t, dtype=np.bool_)
    for t in range(n_t):
        for c in range(3):
            sl = slot_of[tri[t, c]]
            tl[t, c] = scratch[j] if sl == i else scratch[sl]
        # Satisfied (x, y together) or already violated triples no longer constrain merges.
        open_t[t] = tl[t, 0] != tl[t, 1] and tl[t, 0] != tl[t, 2] and tl[t, 1] != tl[t, 2]
    for v in range(k):
        scratch[leaves[v]] = -1
    group = np.zeros(k, dtype=np.int64)
    uf = np.empty(k, dtype=np.int64)
    top = np.full(k, -1, dtype=np.int64)  # N(S) per group
    while True:
        for v in range(k):
            uf[v] = v
        linked = np.zeros(k, dtype=np.bool_)  # groups (by id) with an Aho edge inside
        for t in range(n_t):
            if not open_t[t]:
                continue
            g = group[tl[t, 0]]
            if group[tl[t, 1]] == g and group[tl[t, 2]] == g:
                linked[g] = True
                a = find_root(uf, tl[t, 0])
                b = find_root(uf, tl[t, 1])
                if a != b:
                    uf[a] = b
        for g in range(k):
            top[g] = -1
        for v in range(k):
            if leaf_lab[v] > 0:
                g = group[v]
                top[g] = (
                    leaf_lca[v]
                    if top[g] < 0
                    else lowest_common_folder(top[g], leaf_lca[v], fparent, fdepth)
                )
        for v in range(k):
            g = group[v]
            if leaf_lab[v] > 0 and leaf_lca[v] != top[g]:
                key = child_toward(top[g], leaf_lca[v], fparent)
                if folder_key[key] < 0:
                    folder_key[key] = v
                else:
                    linked[g] = True
                    a = find_root(uf, v)
                    b = find_root(uf, folder_key[key])
                    if a != b:
                        uf[a] = b
        for v in range(k):
            g = group[v]
            if leaf_lab[v] > 0 and leaf_lca[v] != top[g]:
                folder_key[child_toward(top[g], leaf_lca[v], fparent)] = -1
        if not linked.any():
            return True
        # A group with an inner edge whose leaves all ended in one component: stuck.
        first_root = np.full(k, -1, dtype=np.int64)
        split = np.zeros(k, dtype=np.bool_)
        for v in range(k):
            g = group[v]
            r = find_root(uf, v)
            if first_root[g] < 0:
                first_root[g] = r
            elif first_root[g] != r:
                split[g] = True
        for g in range(k):
            if linked[g] and not split[g]:
                return False
        for v in range(k):
            group[v] = find_root(uf, v)


@njit(cache=True, nogil=True)
def admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of):  # type: ignore[no-untyped-def]
    if folder_violations(i, j, nlab, lca, fparent, fdepth, ftotal) > 0:
        return False
    return triple_violations(i, j, ntrip, tri, slot_of) == 0
