"""Input checks of ``FolderPlacement`` (each raises ``ValueError`` with what was expected),
shared by its fit and by rebuilding a stored model (``_placement_arrays``)."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

#: What ``FolderPlacement`` takes as document rows: sparse or dense (n_docs, n_terms).
Matrix: TypeAlias = sp.spmatrix | NDArray[np.floating]


def as_csr(X: Matrix) -> sp.csr_matrix:
    """``X`` as float64 CSR, shape (n_docs, n_terms)."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    return sp.csr_matrix(X)


def check_weights(weights: ArrayLike | None, n_terms: int) -> NDArray[np.float64]:
    """Term weights, shape (n_terms,), scaled to sum to ``n_terms`` (000 eq. 3); ones if None."""
    if weights is None:
        return np.ones(n_terms)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != (n_terms,) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {n_terms} finite non-negative numbers, not all zero")
    return w * (n_terms / w.sum())


def check_sample_weight(sample_weight: ArrayLike | None, n_docs: int) -> NDArray[np.float64]:
    """Positive weight of each document, shape (n_docs,); ones if None."""
    if sample_weight is None:
        return np.ones(n_docs)
    sw = np.asarray(sample_weight, dtype=np.float64).ravel()
    if sw.shape != (n_docs,) or not np.all(np.isfinite(sw)) or (sw <= 0).any():
        raise ValueError(f"sample_weight must be {n_docs} finite positive numbers")
    return sw


def check_triples(triples: ArrayLike | None, n_docs: int) -> NDArray[np.intp]:
    """Triples (x, y, z) over document rows, shape (n_triples, 3); none if None."""
    if triples is None:
        return np.zeros((0, 3), dtype=np.intp)
    t = np.asarray(triples, dtype=np.intp).reshape(-1, 3)
    if t.size and (t.min() < 0 or t.max() >= n_docs):
        raise ValueError(f"triples refer to documents outside 0..{n_docs - 1}")
    return t
