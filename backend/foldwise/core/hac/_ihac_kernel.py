"""The compiled iHAC merge loop (001 sec. 4) on a square float32 distance matrix.

Müllner's generic algorithm ("Modern hierarchical, agglomerative clustering algorithms",
2011, Fig. 2) rather than NN-chain: a forbidden pair can become admissible later, which breaks
the reducibility NN-chain needs (docs/architecture.md sec. 4). Each row ``i`` caches the best
admissible partner ``j > i`` and a lower bound ``mindist[i]`` in a binary heap; a row is
rescanned only when it reaches the top of the heap with a stale entry. The lower bound survives
a merge because an average-linkage distance to a merged cluster is a convex combination of the
old ones, and admissibility only changes for pairs with the new cluster -- or, for the
look-ahead on explicit triples, only from admissible to forbidden.

Admissibility of a merge A + B (001 sec. 4.1):

* folder triples, closed form (docs/architecture.md sec. 3): with N the lowest common folder of both
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

from foldwise.core.hac._ihac_admissible import (
    admissible,
    folder_violations,
    lookahead_ok,
    lowest_common_folder,
    triple_violations,
)

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


# --- the merge loop --------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _scan_row(
    i,
    D,
    nxt,
    nn,
    mindist,
    nlab,
    lca,
    fparent,
    fdepth,
    ftotal,
    ntrip,
    tri,
    slot_of,
    blocked_a,
    blocked_b,
    n_blocked,
):  # type: ignore[no-untyped-def]
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
                ok = admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of)
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
        _scan_row(
            i,
            D,
            nxt,
            nn,
            mindist,
            nlab,
            lca,
            fparent,
            fdepth,
            ftotal,
            ntrip,
            tri,
            slot_of,
            blocked_a,
            blocked_b,
            n_blocked,
        )
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
                fresh = admissible(i, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of)
                # With explicit triples, look ahead on every merge of two constrained
                # clusters: folder constraints alone never dead-end, but together with
                # triples a merge of two folder clusters can (the leaves of BUILD change).
                if (
                    fresh
                    and has_triples
                    and not lookahead_ok(
                        i,
                        j,
                        head,
                        nxt,
                        nlab,
                        lca,
                        ntrip,
                        fparent,
                        fdepth,
                        tri,
                        slot_of,
                        scratch,
                        folder_key,
                    )
                ):
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
            _scan_row(
                i,
                D,
                nxt,
                nn,
                mindist,
                nlab,
                lca,
                fparent,
                fdepth,
                ftotal,
                ntrip,
                tri,
                slot_of,
                blocked_a,
                blocked_b,
                n_blocked,
            )
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
                    v = folder_violations(a, b, nlab, lca, fparent, fdepth, ftotal)
                    v += triple_violations(a, b, ntrip, tri, slot_of)
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
                lca[j] = lowest_common_folder(lca[i], lca[j], fparent, fdepth)
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
                if (
                    blocked_a[b] != i
                    and blocked_b[b] != i
                    and blocked_a[b] != j
                    and blocked_b[b] != j
                ):
                    blocked_a[keep] = blocked_a[b]
                    blocked_b[keep] = blocked_b[b]
                    keep += 1
            n_blocked = keep
        if forced:
            # After a forced merge, rebuild every row: cheap insurance on a rare path.
            k = head
            while k >= 0:
                if pos[k] >= 0:
                    _scan_row(
                        k,
                        D,
                        nxt,
                        nn,
                        mindist,
                        nlab,
                        lca,
                        fparent,
                        fdepth,
                        ftotal,
                        ntrip,
                        tri,
                        slot_of,
                        blocked_a,
                        blocked_b,
                        n_blocked,
                    )
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
                        ok = admissible(
                            k, j, nlab, lca, fparent, fdepth, ftotal, ntrip, tri, slot_of
                        )
                    if ok:
                        mindist[k] = d
                        nn[k] = j
                        _heap_up(heap, pos, mindist, pos[k])
                k = nxt[k]
            # Row j itself: its partners k > j all changed.
            if pos[j] >= 0:
                _scan_row(
                    j,
                    D,
                    nxt,
                    nn,
                    mindist,
                    nlab,
                    lca,
                    fparent,
                    fdepth,
                    ftotal,
                    ntrip,
                    tri,
                    slot_of,
                    blocked_a,
                    blocked_b,
                    n_blocked,
                )
                _heap_update(heap, pos, mindist, j, hsize)
        progress[0] = step + 1
    return Z, violated
