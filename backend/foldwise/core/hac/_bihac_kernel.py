"""biHAC's constraint walk, compiled: the average cosine of one cluster to every other, the
most similar one its folder constraints admit (000 sec. 4), cluster sums and the weight
step (000 eq. 5-7); used by :mod:`_bihac`.

A run of biHAC on 13,000 documents in 1,000 folders searches a partner for about 5,500
violating clusters. In numpy each search was a product with every document's row, two
bincounts and a vectorised admissibility test of every cluster: 40% of the run
(docs/recluster.md, "biHAC's constraint walk compiled").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from foldwise.core.hac._ihac_admissible import folder_violations


@njit(cache=True, nogil=True)
def cluster_similarities(
    col_ptr, col_docs, col_data, s_c, support, label, n_members, sim, per_doc, total, size
):  # type: ignore[no-untyped-def]
    """Average cosine of a cluster to every cluster, written into ``sim`` (shape (2n,)).

    ``col_ptr, col_docs, col_data`` are the unit rows in CSC (row indices ascending within
    each column), ``s_c`` the sum of the cluster's unit rows (shape (n_terms,), the rows'
    dtype) and ``support`` its non-zero terms, ascending; ``label`` the current cluster of
    each document. Each document's dot product with ``s_c`` adds its shared terms in
    ascending term order in the rows' dtype, as a CSR product does, and the per-cluster
    totals are float64 sums in document order, as ``np.bincount`` does: the same bits as
    ``bincount(label, U @ s_c) / (size * n_members)``. Clusters with no document are -inf.
    ``per_doc``, ``total`` and ``size`` are scratch arrays.
    """
    per_doc[:] = 0
    for t in support:
        weight = s_c[t]
        for p in range(col_ptr[t], col_ptr[t + 1]):
            per_doc[col_docs[p]] += col_data[p] * weight
    total[:] = 0.0
    size[:] = 0
    for i in range(label.shape[0]):
        total[label[i]] += np.float64(per_doc[i])
        size[label[i]] += 1
    for k in range(sim.shape[0]):
        if size[k] == 0:
            sim[k] = -np.inf
        else:
            sim[k] = total[k] / np.float64(size[k] * n_members)


@njit(cache=True, nogil=True)
def most_similar(sim, c, nlab, lca, fparent, fdepth, ftotal):  # type: ignore[no-untyped-def]
    """(The most similar cluster, the most similar one whose merge with ``c`` violates no
    folder triple), each the lowest id among equals, -1 where there is none.

    ``sim`` holds -inf for clusters that are not candidates.
    """
    best, best_sim = -1, -np.inf
    admissible, admissible_sim = -1, -np.inf
    for k in range(sim.shape[0]):
        s = sim[k]
        if s == -np.inf:
            continue
        if s > best_sim:
            best, best_sim = k, s
        if s > admissible_sim and folder_violations(c, k, nlab, lca, fparent, fdepth, ftotal) == 0:
            admissible, admissible_sim = k, s
    return best, admissible


@njit(cache=True, nogil=True)
def gradient_step(w, cx, cy, cz, eta):  # type: ignore[no-untyped-def]
    """``max(w + eta * delta, 0)`` for the cluster triple (x, y, z), shape (n_terms,): 000
    eq. 5-7 on the centroids, each made a unit vector under ``w`` first.

    One pass over the terms instead of a dozen numpy temporaries (a run of biHAC on 3,000
    documents takes about 1,200 steps). The same bits as the numpy expression: the dot
    products are BLAS's, as numpy's are, and each term is computed in numpy's order
    (no fused multiply-add: numba does not contract without ``fastmath``).
    """
    ux, uy, uz = cx.copy(), cy.copy(), cz.copy()
    for u in (ux, uy, uz):
        norm = np.sqrt(np.dot(w, u * u))
        if norm > 0:
            for t in range(u.shape[0]):
                u[t] = u[t] / norm
    sim_xy = np.dot(w, ux * uy)
    sim_xz = np.dot(w, ux * uz)
    half_xy, half_xz = 0.5 * sim_xy, 0.5 * sim_xz
    out = np.empty_like(w)
    for t in range(w.shape[0]):
        x2 = ux[t] * ux[t]
        delta = (
            ux[t] * (uy[t] - uz[t])
            - half_xy * (x2 + uy[t] * uy[t])
            + half_xz * (x2 + uz[t] * uz[t])
        )
        out[t] = max(w[t] + eta * delta, 0.0)
    return out


@njit(cache=True, nogil=True)
def row_sum(indptr, indices, data, rows, n_terms):  # type: ignore[no-untyped-def]
    """Sum of the CSR rows ``rows``, shape (n_terms,), float64: entries added in row order,
    then stored order, as ``np.bincount`` over them adds them (the same bits)."""
    out = np.zeros(n_terms)
    for r in rows:
        for p in range(indptr[r], indptr[r + 1]):
            out[indices[p]] += data[p]
    return out


@njit(cache=True, nogil=True)
def closest_clusters(  # type: ignore[no-untyped-def]
    u_ptr, u_terms, u_data, members, col_ptr, col_docs, col_data, label, c, exclude,
    sim, s_c, per_doc, total, size, nlab, lca, fparent, fdepth, ftotal,
):  # fmt: skip
    """:func:`most_similar` for cluster ``c`` (documents ``members``) among all clusters but
    ``c`` and ``exclude``, in one call: its sum of unit rows (CSR ``u_ptr, u_terms,
    u_data``; summed in float64 by :func:`row_sum`, then stored in the rows' dtype in the
    scratch ``s_c``), :func:`cluster_similarities` into ``sim``, and the search. The same
    bits as the three calls made one by one; one call saves the dispatch of three (a run
    on 3,000 documents makes about 1,200 searches).
    """
    s_c[:] = row_sum(u_ptr, u_terms, u_data, members, s_c.shape[0])
    cluster_similarities(
        col_ptr, col_docs, col_data, s_c, np.flatnonzero(s_c), label, members.shape[0], sim,
        per_doc, total, size,
    )  # fmt: skip
    sim[c] = -np.inf
    sim[exclude] = -np.inf
    return most_similar(sim, c, nlab, lca, fparent, fdepth, ftotal)
