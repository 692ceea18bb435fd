"""Functional builders for HAC and iHAC dendrograms (001 sec. 4) over cosine distances."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath
from foldwise.core.constraints._constraints import Constraints, TripleSet
from foldwise.core.hac._cosine_kernel import fill_cosine_distances
from foldwise.core.hac._ihac_kernel import ihac_kernel

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(merges_done, merges_total)`` from the calling thread."""


def unit_rows(
    X: sp.spmatrix | NDArray[np.floating], weights: NDArray[np.floating] | None = None
) -> sp.csr_matrix | NDArray[np.floating]:
    """Rows of ``X * sqrt(w)`` scaled to unit length (000 eq. 2 with a diagonal W).

    Weighted cosine with a diagonal W is plain cosine on ``X * sqrt(w)``. Rows that end up
    all-zero (no usable term, or only zero-weight terms) stay zero: their cosine with
    everything is 0, i.e. distance 1.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float32, copy=True)
        X.sum_duplicates()
        # Scaling the stored entries in place: the same products as multiplying by
        # diagonal matrices, without building two sparse products per call (biHAC calls
        # this once per run).
        if weights is not None:
            X.data *= np.sqrt(np.asarray(weights, dtype=np.float32))[X.indices]
        X.data[~np.isfinite(X.data)] = 0.0
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64)).ravel()
        norms[norms == 0] = 1.0
        X.data *= np.repeat((1.0 / norms).astype(np.float32), np.diff(X.indptr))
        X.eliminate_zeros()
        return X
    X = np.array(X, dtype=np.float32, copy=True)
    X[~np.isfinite(X)] = 0.0
    if weights is not None:
        X *= np.sqrt(np.asarray(weights, dtype=np.float32))
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return X / norms


def cosine_distances(
    X: sp.spmatrix | NDArray[np.floating],
    weights: NDArray[np.floating] | None = None,
    *,
    dtype: type = np.float32,
    block_rows: int = 1024,
) -> NDArray[np.floating]:
    """Square cosine distance matrix of shape (n, n), built in place.

    Building row by row (sparse rows) or by blocks of ``block_rows`` (dense rows) keeps the
    peak near one n x n matrix; a single sparse product would first materialise a sparse
    n x n result several times larger.
    """
    return distances_of_unit_rows(unit_rows(X, weights), dtype=dtype, block_rows=block_rows)


def distances_of_unit_rows(
    U: sp.spmatrix | NDArray[np.floating], *, dtype: type = np.float32, block_rows: int = 1024
) -> NDArray[np.floating]:
    """:func:`cosine_distances` of rows that :func:`unit_rows` already scaled, shape (n, n).

    biHAC needs the unit rows of each run for its weight updates too; this spares it a
    second scaling of the same matrix per run.
    """
    n = U.shape[0]
    D = np.empty((n, n), dtype=dtype)
    if sp.issparse(U):
        U = sp.csr_matrix(U)
        if not U.has_sorted_indices:
            U = U.sorted_indices()
        UT = sp.csc_matrix(U)  # documents ascending in each column
        fill_cosine_distances(
            U.indptr, U.indices, U.data, UT.indptr, UT.indices, UT.data,
            D, np.empty(n, dtype=U.dtype), np.ones(1, dtype=dtype)[0],
        )  # fmt: skip
        return D
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        D[start:stop] = U[start:stop] @ U.T
    np.subtract(1.0, D, out=D)
    np.clip(D, 0.0, 2.0, out=D)
    np.fill_diagonal(D, 0.0)
    return D


def ihac_from_distances(
    D: NDArray[np.floating],
    constraints: Constraints | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """iHAC on a square distance matrix, which is overwritten.

    Returns
    -------
    Z : ndarray of shape (n - 1, 4)
        scipy-style linkage, merges in the order they were made. With constraints, heights
        need not increase (a forbidden close pair may merge late).
    violated : ndarray of shape (n - 1,), int
        Triples each merge violated; non-zero only after a dead end (001 sec. 4.1).
    """
    n = D.shape[0]
    if D.ndim != 2 or D.shape[1] != n:
        raise ValueError(f"expected a square distance matrix, got shape {D.shape}")
    # Row blocks: a whole-matrix isfinite would allocate another n x n array at the peak.
    for start in range(0, n, 1024):
        if not np.isfinite(D[start : start + 1024]).all():
            raise ValueError("distances must be finite")
    constraints = constraints or Constraints(n)
    if constraints.n_docs != n:
        raise ValueError(f"constraints are for {constraints.n_docs} docs, matrix has {n}")
    arrays = constraints.kernel_arrays()
    counter = np.zeros(2, dtype=np.int64)
    kernel: Callable[..., tuple[NDArray[np.float64], NDArray[np.int64]]] = ihac_kernel
    if progress is None:
        return kernel(D, *arrays, counter)
    result: list[tuple[NDArray[np.float64], NDArray[np.int64]]] = []
    worker = threading.Thread(target=lambda: result.append(kernel(D, *arrays, counter)))
    worker.start()
    while worker.is_alive():
        worker.join(timeout=0.5)
        progress(int(counter[0]), n - 1)
    if not result:
        raise RuntimeError("iHAC kernel failed")
    progress(n - 1, n - 1)
    return result[0]


def ihac_linkage(
    X: sp.spmatrix | NDArray[np.floating],
    labels: Sequence[FolderPath | None] | None = None,
    triples: Iterable[Iterable[int]] | TripleSet | None = None,
    *,
    weights: NDArray[np.floating] | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """iHAC (001 sec. 4) with average linkage on (weighted) cosine distances.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_docs, n_terms)
    labels : sequence of folder paths or None, length n_docs
        The folder of each labeled document (``None`` for new documents); implies the
        hierarchy's MLB triples without materialising them.
    triples : iterable of (x, y, z), optional
        Explicit MLB triples, closed under 001 Theorems 1-3 before use.
    weights : ndarray of shape (n_terms,), optional
        Term weights (000 eq. 3); ``None`` is plain cosine.

    Returns
    -------
    Z, violated : see :func:`ihac_from_distances`.
    """
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"need at least 2 documents to cluster, got {n}")
    constraints = Constraints.build(n, labels, triples)
    return ihac_from_distances(cosine_distances(X, weights), constraints, progress)


def hac_linkage(
    X: sp.spmatrix | NDArray[np.floating], *, weights: NDArray[np.floating] | None = None
) -> NDArray[np.float64]:
    """Unconstrained average-linkage HAC on (weighted) cosine distances: iHAC, no triples."""
    return ihac_linkage(X, weights=weights)[0]
