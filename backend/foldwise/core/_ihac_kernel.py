"""The compiled iHAC merge loop (001 sec. 4) on a square float32 distance matrix.

Müllner's generic algorithm ("Modern hierarchical, agglomerative clustering algorithms",
2011, Fig. 2) rather than NN-chain: a forbidden pair can become admissible later, which breaks
the reducibility NN-chain needs (DESIGN.md sec. 4). Each row ``i`` caches the best admissible
partner ``j > i`` and a lower bound ``mindist[i]`` in a binary heap; a row is rescanned only
when it reaches the top of the heap with a stale entry. The lower bound survives a merge
because an average-linkage distance to a merged cluster is a convex combination of the old
ones, and admissibility only changes for pairs with the new cluster -- or, for the look-ahead
on explicit triples, only from admissible to forbidden.

Admissibility of a merge A + B (001 sec. 4.1):

* folder triples, closed form (DESIGN.md sec. 3): with N the lowest common folder of both
  sides' labeled documents, a side whose labeled documents lie below a child c of N must hold
  every labeled document of c;
* explicit triples (x, y, z): no x in one side and z in the other with y outside both;
* look-ahead (explicit triples only): the triples still open after the merge must fit one
  tree (Aho et al.'s BUILD), so a greedy merge never walks into a dead end that a complete
  violation-free dendrogram could avoid (001 Fig. 9).

If no admissible merge is left, the merge with the fewest directly violated triples is taken
(001 sec. 4.1), ties broken by distance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# --- the heap of rows, keyed by mindist -------------------------------------------------


@njit(cache=True, nogil=True)
def _heap_swap(heap, pos, a, b):  # type: ignore[no-untyped-def]
    ra, rb = heap[a], heap[b]
    heap[a], heap[b] = rb, ra
    pos[rb], pos[ra] = a, b


@njit(cache=True, nogil=True)
def _heap_up(heap, pos, key, k):  # type: ignore[no-untyped-def]
    while k > 0:
        p = (k - 1) >> 1
        if key[heap[p]] <= key[heap[k]]:
            break
        _heap_swap(heap, pos, p, k)
        k = p


@njit(cache=True, nogil=True)
def _heap_down(heap, pos, key, k, size):  # type: ignore[no-untyped-def]
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        best = left
        right = left + 1
        if right < size and key[heap[right]] < key[heap[left]]:
            best = right
        if key[heap[k]] <= key[heap[best]]:
            break
        _heap_swap(heap, pos, k, best)
        k = best


@njit(cache=True, nogil=True)
def _heap_update(heap, pos, key, row, size):  # type: ignore[no-untyped-def]
    k = pos[row]
    _heap_up(heap, pos, key, k)
    _heap_down(heap, pos, key, pos[row], size)


@njit(cache=True, nogil=True)
def _heap_remove(heap, pos, key, row, size):  # type: ignore[no-untyped-def]
    """Remove ``row``; returns the new heap size."""
    k = pos[row]
    last = size - 1
    if k != last:
        _heap_swap(heap, pos, k, last)
        pos[row] = -1
        _heap_update(heap, pos, key, heap[k], last)
    else:
        pos[row] = -1
    return last


# --- constraints -----------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _lca(a, b, parent, depth):  # type: ignore[no-untyped-def]
    while depth[a] > depth[b]:
        a = parent[a]
    while depth[b] > depth[a]:
        b = parent[b]
    while a != b:
        a = parent[a]
        b = parent[b]
    return a


@njit(cache=True, nogil=True)
def _child_toward(top, node, parent):  # type: ignore[no-untyped-def]
    while parent[node] != top:
        node = parent[node]
    return node


@njit(cache=True, nogil=True)
def _folder_violations(i, j, nlab, lca, fparent, fdepth, ftotal):  # type: ignore[no-untyped-def]
    """Folder triples newly violated by merging slots i and j (0 = admissible)."""
    if nlab[i] == 0 or nlab[j] == 0:
        return 0
    top = _lca(lca[i], lca[j], fparent, fdepth)
    count = 0
    if lca[i] != top:
        c = _child_toward(top, lca[i], fparent)
        count += nlab[i] * nlab[j] * (ftotal[c] - nlab[i])
    if lca[j] != top:
        c = _child_toward(top, lca[j], fparent)
        count += nlab[i] * nlab[j] * (ftotal[c] - nlab[j])
    return count


@njit(cache=True, nogil=True)
def _triple_violations(i, j, ntrip, tri, slot_of):  # type: ignore[no-untyped-def]
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
def _find(uf, v):  # type: ignore[no-untyped-def]
    while uf[v] != v:
        uf[v] = uf[uf[v]]
        v = uf[v]
    return v


@njit(cache=True, nogil=True)
def _lookahead_ok(i, j, head, nxt, nlab, lca, ntrip, fparent, fdepth, tri, slot_of,
                  scratch, folder_key):  # type: ignore[no-untyped-def]
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
        leaf_lca[vj] = lca[i] if nlab[j] == 0 else _lca(lca[i], lca[j], fparent, fdepth)
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
                a = _find(uf, tl[t, 0])
                b = _find(uf, tl[t, 1])
                if a != b:
                    uf[a] = b
        for g in range(k):
            top[g] = -1
        for v in range(k):
            if leaf_lab[v] > 0:
                g = group[v]
                top[g] = leaf_lca[v] if top[g] < 0 else _lca(top[g], leaf_lca[v], fparent,
                                                               fdepth)
        for v in range(k):
            g = group[v]
            if leaf_lab[v] > 0 and leaf_lca[v] != top[g]:
                key = _child_toward(top[g], leaf_lca[v], fparent)
                if folder_key[key] < 0:
                    folder_key[key] = v
                else:
                    linked[g] = True
                    a = _find(uf, v)
                    b = _find(uf, folder_key[key])
                    if a != b:
                        uf[a] = b
        for v in range(k):
            g = group[v]
            if leaf_lab[v] > 0 and leaf_lca[v] != top[g]:
                folder_key[_child_toward(top[g], leaf_lca[v], fparent)] = -1
        if not linked.any():
            return True
        # A group with an inner edge whose leaves all ended in one component: stuck.
        first_root = np.full(k, -1, dtype=np.int64)
        split = np.zeros(k, dtype=np.bool_)
        for v in range(k):
            g = group[v]
            r = _find(uf, v)
            if first_root[g] < 0:
                first_root[g] = r
            elif first_root[g] != r:
                split[g] = True
        for g in range(k):
            if linked[g] and not split[g]:
                return False
        for v in range(k):
            group[v] = _find(uf, v)


# --- the merge loop --------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of):  # type: ignore[no-untyped-def]
    if _folder_violations(i, j, nlab, lca, fparent, fdepth, ftotal) > 0:
        return False
    return _triple_violations(i, j, ntrip, tri, slot_of) == 0


@njit(cache=True, nogil=True)
def _scan_row(i, D, nxt, nn, mindist, nlab, lca, fparent, fdepth, ftotal, ntrip, tri,
              slot_of, blocked_a, blocked_b, n_blocked):  # type: ignore[no-untyped-def]
    """Best admissible partner j > i of row i, by walking the active list."""
    best = np.inf
    best_j = -1
    constrained = nlab[i] > 0 or ntrip[i] > 0
    j = nxt[i]
    row = D[i]
    while j >= 0:
        d = row[j]
        if d < best:
            ok = True
            if constrained and (nlab[j] > 0 or ntrip[j] > 0):
                ok = _admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of)
                if ok:
                    for b in range(n_blocked):
                        if blocked_a[b] == i and blocked_b[b] == j:
                            ok = False
                            break
            if ok:
                best = d
                best_j = j
        j = nxt[j]
    nn[i] = best_j
    mindist[i] = best


@njit(cache=True, nogil=True)
def ihac_kernel(D, doc_folder, fparent, fdepth, ftotal, tri, progress):  # type: ignore[no-untyped-def]
    """Run iHAC; returns (Z (n-1, 4) float64, violated (n-1,) int64 per merge).

    Parameters
    ----------
    D : float32 array of shape (n, n)
        Distances; only the upper triangle ``D[i, j], i < j`` is read. Overwritten.
    doc_folder : int32 array of shape (n,)
        Folder node of each labeled document, -1 if unlabeled.
    fparent, fdepth, ftotal : int32 arrays of shape (n_folders,)
        Folder tree: parent (-1 for root), depth, labeled documents per subtree.
    tri : int32 array of shape (n_triples, 3)
        Explicit, closed MLB triples.
    progress : int64 array of shape (2,)
        ``progress[0]`` is set to the number of merges done, for a watcher thread.
    """
    n = D.shape[0]
    Z = np.zeros((max(n - 1, 0), 4), dtype=np.float64)
    violated = np.zeros(max(n - 1, 0), dtype=np.int64)
    if n < 2:
        return Z, violated
    size = np.ones(n, dtype=np.int64)
    cid = np.arange(n, dtype=np.int64)
    nlab = np.zeros(n, dtype=np.int64)
    lca = np.zeros(n, dtype=np.int64)
    for i in range(n):
        if doc_folder[i] >= 0:
            nlab[i] = 1
            lca[i] = doc_folder[i]
    ntrip = np.zeros(n, dtype=np.int64)
    slot_of = np.arange(n, dtype=np.int64)
    # Items of explicit triples, to relabel on merges without touching the rest.
    is_titem = np.zeros(n, dtype=np.bool_)
    for t in range(tri.shape[0]):
        for c in range(3):
            is_titem[tri[t, c]] = True
    titems = np.flatnonzero(is_titem)
    for v in titems:
        ntrip[v] = 1
    has_triples = tri.shape[0] > 0
    scratch = np.full(n, -1, dtype=np.int64)
    folder_key = np.full(fparent.shape[0], -1, dtype=np.int64)
    cap = 64
    blocked_a = np.empty(cap, dtype=np.int64)
    blocked_b = np.empty(cap, dtype=np.int64)
    n_blocked = 0
    # Active slots as a doubly linked list, so scans skip merged rows.
    nxt = np.empty(n, dtype=np.int64)
    prv = np.empty(n, dtype=np.int64)
    for i in range(n):
        nxt[i] = i + 1 if i + 1 < n else -1
        prv[i] = i - 1
    head = 0
    nn = np.full(n, -1, dtype=np.int64)
    # Same dtype as D, so that "is the cached bound still the entry?" is an exact test.
    mindist = np.full(n, np.inf, dtype=D.dtype)
    for i in range(n - 1):
        _scan_row(i, D, nxt, nn, mindist, nlab, lca, fparent, fdepth, ftotal, ntrip, tri,
                  slot_of, blocked_a, blocked_b, n_blocked)
    # Heap over rows 0..n-2 (row n-1 has no partner j > i).
    heap = np.arange(n - 1, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    for k in range(n - 1):
        pos[k] = k
    hsize = n - 1
    for k in range(hsize // 2 - 1, -1, -1):
        _heap_down(heap, pos, mindist, k, hsize)

    for step in range(n - 1):
        # Find the next merge.
        while True:
            i = heap[0]
            if mindist[i] == np.inf:
                i = -1
                break
            j = nn[i]
            fresh = j >= 0 and size[j] > 0 and D[i, j] == mindist[i]
            if fresh and (nlab[i] > 0 or ntrip[i] > 0) and (nlab[j] > 0 or ntrip[j] > 0):
                fresh = _admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri,
                                    slot_of)
                # With explicit triples, look ahead on every merge of two constrained
                # clusters: folder constraints alone never dead-end, but together with
                # triples a merge of two folder clusters can (the leaves of BUILD change).
                if (fresh and has_triples
                        and not _lookahead_ok(i, j, head, nxt, nlab, lca, ntrip, fparent,
                                              fdepth, tri, slot_of, scratch, folder_key)):
                    if n_blocked == cap:
                        cap *= 2
                        ba = np.empty(cap, dtype=np.int64)
                        bb = np.empty(cap, dtype=np.int64)
                        ba[:n_blocked] = blocked_a[:n_blocked]
                        bb[:n_blocked] = blocked_b[:n_blocked]
                        blocked_a, blocked_b = ba, bb
                    blocked_a[n_blocked] = i
                    blocked_b[n_blocked] = j
                    n_blocked += 1
                    fresh = False
            if fresh:
                break
            _scan_row(i, D, nxt, nn, mindist, nlab, lca, fparent, fdepth, ftotal, ntrip, tri,
                      slot_of, blocked_a, blocked_b, n_blocked)
            _heap_update(heap, pos, mindist, i, hsize)
        n_viol = 0
        forced = i < 0
        if forced:
            # Dead end: every remaining pair violates something (001 sec. 4.1 fallback).
            best_v = np.iinfo(np.int64).max
            best_d = np.inf
            a = head
            while a >= 0:
                b = nxt[a]
                while b >= 0:
                    v = _folder_violations(a, b, nlab, lca, fparent, fdepth, ftotal)
                    v += _triple_violations(a, b, ntrip, tri, slot_of)
                    if v < best_v or (v == best_v and D[a, b] < best_d):
                        best_v = v
                        best_d = D[a, b]
                        i = a
                        j = b
                    b = nxt[b]
                a = nxt[a]
            n_viol = best_v
        else:
            j = nn[i]
        # Merge slots i < j into slot j.
        d_ij = D[i, j]
        si = size[i]
        sj = size[j]
        a_id = min(cid[i], cid[j])
        b_id = max(cid[i], cid[j])
        Z[step, 0] = a_id
        Z[step, 1] = b_id
        Z[step, 2] = d_ij
        Z[step, 3] = si + sj
        violated[step] = n_viol
        # Lance-Williams for average linkage (UPGMA), written into row/column j.
        wi = si / (si + sj)
        wj = sj / (si + sj)
        k = head
        while k >= 0:
            if k != i and k != j:
                dik = D[i, k] if i < k else D[k, i]
                djk = D[j, k] if j < k else D[k, j]
                if j < k:
                    D[j, k] = wi * dik + wj * djk
                else:
                    D[k, j] = wi * dik + wj * djk
            k = nxt[k]
        size[j] = si + sj
        size[i] = 0
        cid[j] = n + step
        if nlab[i] > 0:
            if nlab[j] > 0:
                lca[j] = _lca(lca[i], lca[j], fparent, fdepth)
            else:
                lca[j] = lca[i]
            nlab[j] += nlab[i]
        if ntrip[i] > 0:
            for v in titems:
                if slot_of[v] == i:
                    slot_of[v] = j
            ntrip[j] += ntrip[i]
        # Unlink slot i.
        if i == head:
            head = nxt[i]
        if prv[i] >= 0:
            nxt[prv[i]] = nxt[i]
        if nxt[i] >= 0:
            prv[nxt[i]] = prv[i]
        hsize = _heap_remove(heap, pos, mindist, i, hsize) if pos[i] >= 0 else hsize
        mindist[i] = np.inf
        # Blocked pairs with i or j are void now (their clusters changed).
        if n_blocked > 0:
            keep = 0
            for b in range(n_blocked):
                if blocked_a[b] != i and blocked_b[b] != i and blocked_a[b] != j \
                        and blocked_b[b] != j:
                    blocked_a[keep] = blocked_a[b]
                    blocked_b[keep] = blocked_b[b]
                    keep += 1
            n_blocked = keep
        if forced:
            # After a forced merge, rebuild every row: cheap insurance on a rare path.
            k = head
            while k >= 0:
                if pos[k] >= 0:
                    _scan_row(k, D, nxt, nn, mindist, nlab, lca, fparent, fdepth, ftotal,
                              ntrip, tri, slot_of, blocked_a, blocked_b, n_blocked)
                    _heap_update(heap, pos, mindist, k, hsize)
                k = nxt[k]
        else:
            # Rows k < j see a new entry D[k, j]: take it if it beats their bound.
            constrained_j = nlab[j] > 0 or ntrip[j] > 0
            k = head
            while k >= 0 and k < j:
                d = D[k, j]
                if d < mindist[k] and pos[k] >= 0:
                    ok = True
                    if constrained_j and (nlab[k] > 0 or ntrip[k] > 0):
                        ok = _admissible(k, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri,
                                         slot_of)
                    if ok:
                        mindist[k] = d
                        nn[k] = j
                        _heap_up(heap, pos, mindist, pos[k])
                k = nxt[k]
            # Row j itself: its partners k > j all changed.
            if pos[j] >= 0:
                _scan_row(j, D, nxt, nn, mindist, nlab, lca, fparent, fdepth, ftotal, ntrip,
                          tri, slot_of, blocked_a, blocked_b, n_blocked)
                _heap_update(heap, pos, mindist, j, hsize)
        progress[0] = step + 1
    return Z, violated
