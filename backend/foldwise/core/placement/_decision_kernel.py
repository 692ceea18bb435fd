"""Decision values of linear classifiers over CSR rows, without the (n_docs, n_classes)
product: one classifier's values contiguous (:func:`decision_rows`, used by
:mod:`_sampled_svm` to mine hard negatives), or only each row's best two
(:func:`best_two`, for held-out hits and the novelty model's examples).

``F @ coef.T`` lays the values out a document at a time: (n_docs, n_classes). Mining reads
them a class at a time, so each block was transposed after the product, a strided copy of
50 MB per 64 classes at 100,000 documents: 1.9 s of each sampled fit of 1,000 classes
(docs/recluster.md, "Hard negatives without the transpose"). Here each document's values
are summed in a small buffer and written to their classes' rows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from numba import njit
from numpy.typing import NDArray


@njit(cache=True, nogil=True)
def _row_values(indptr, indices, data, coef_t, i, total):  # type: ignore[no-untyped-def]
    """Row ``i`` of ``F @ coef_t`` into ``total`` (n_classes,): the row's terms added in
    their stored order, as scipy's CSR product adds them."""
    total[:] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        value = data[p]
        row = coef_t[indices[p]]
        for c in range(total.shape[0]):
            total[c] += value * row[c]


@njit(cache=True, nogil=True)
def decision_rows(indptr, indices, data, coef_t, intercept, out):  # type: ignore[no-untyped-def]
    """Write ``(F @ coef_t + intercept).T`` into ``out`` (shape (n_classes, n_docs)).

    ``indptr, indices, data`` are ``F`` in CSR (n_docs rows), ``coef_t`` the classifiers'
    coefficients as a C-ordered (n_features, n_classes) array, ``intercept`` shape
    (n_classes,). Each value adds its document's terms in the row's stored order and the
    intercept last, as scipy's CSR product followed by ``+= intercept`` does: the same bits.
    """
    n_classes = coef_t.shape[1]
    total = np.zeros(n_classes)
    for i in range(indptr.shape[0] - 1):
        _row_values(indptr, indices, data, coef_t, i, total)
        for c in range(n_classes):
            out[c, i] = total[c] + intercept[c]


@njit(cache=True, nogil=True)
def _best_two_rows(indptr, indices, data, coef_t, intercept, rows, best, top):  # type: ignore[no-untyped-def]
    """For each of ``rows`` of the CSR ``F``: the class of its highest value of
    ``F @ coef_t + intercept`` into ``best``, that value and its margin over the second
    into ``top`` (shape (n_rows, 2)). Sums as :func:`decision_rows` (the bits of scipy's
    product and ``+= intercept``); a tie goes to the first class, as ``argmax``."""
    n_classes = coef_t.shape[1]
    total = np.empty(n_classes)
    for k in range(rows.shape[0]):
        i = rows[k]
        _row_values(indptr, indices, data, coef_t, i, total)
        first = -np.inf
        second = -np.inf
        arg = 0
        for c in range(n_classes):
            t = total[c] + intercept[c]
            if t > first:
                second = first
                first = t
                arg = c
            elif t > second:
                second = t
        best[k] = arg
        top[k, 0] = first
        top[k, 1] = first - second


def best_two(
    F: sp.csr_matrix,
    rows: NDArray[np.intp],
    coef_t: NDArray[np.float64],
    intercept: NDArray[np.float64],
    *,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Per row of ``F[rows]`` (``F`` CSR float64, (n_docs, n_features)): the class with the
    highest decision value (n_rows,), and that value with its margin over the second
    (n_rows, 2). ``coef_t`` (n_features, n_classes) holds the classifiers' coefficients as
    columns, C-contiguous; ``intercept`` has shape (n_classes,). The same values as the
    product ``F[rows] @ coef_t + intercept`` read row by row, without holding it: at
    100,000 documents in 1,000 folders a selection fold's 33,000 held-out documents were
    264 MB of decision values, and scipy's product took twice the kernel's time on one
    thread (docs/recluster.md, "Hard negatives on both cores"). ``n_jobs`` threads (as
    joblib counts them) take a contiguous share of the rows each.
    """
    F = sp.csr_matrix(F, dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    best = np.empty(rows.size, dtype=np.intp)
    top = np.empty((rows.size, 2))
    if rows.size == 0:
        return best, top
    if coef_t.shape[1] < 2:
        raise ValueError("best_two needs at least two classes")
    W = np.ascontiguousarray(coef_t, dtype=np.float64)
    b = np.ascontiguousarray(intercept, dtype=np.float64)
    threads = min(effective_n_jobs(n_jobs), rows.size)  # joblib's count: -1 is every core
    bounds = np.linspace(0, rows.size, threads + 1).astype(np.intp)

    def score(t: int) -> None:
        part = slice(bounds[t], bounds[t + 1])
        _best_two_rows(F.indptr, F.indices, F.data, W, b, rows[part], best[part], top[part])

    if threads == 1:
        score(0)
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(score, range(threads)))
    return best, top
