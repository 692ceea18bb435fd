"""Rand index and the corrected Rand index of 002 sec. 4.2, for flat partitions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import adjusted_rand_score, rand_score
from sklearn.metrics.cluster import pair_confusion_matrix


def rand_index(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """Share of item pairs both partitions treat alike (002 eq. 1, Rand 1971).

    ``(a + d) / (a + b + c + d)`` over the n (n - 1) / 2 unordered pairs: a = together in
    both, d = apart in both. 1.0 for fewer than two items (no decision to get wrong).
    """
    return float(rand_score(labels_a, labels_b))


def corrected_rand_index(
    labels_a: ArrayLike, labels_b: ArrayLike, *, constrained_pairs: ArrayLike
) -> float:
    """The Rand index with the constrained pairs left out (002 sec. 4.2).

    002 calls this the "Corrected Rand Index": it counts only the *real* decisions, not the
    pairs a must-link or cannot-link already fixed. It is not Hubert & Arabie's
    chance-adjusted index; that is :func:`adjusted_rand_index`.

    Parameters
    ----------
    labels_a, labels_b : array-like of shape (n_items,)
        Two flat partitions (cluster labels per item).
    constrained_pairs : array-like of int of shape (n_pairs, 2)
        Item pairs under a constraint; order, duplicates and self-pairs are ignored.

    Returns
    -------
    float
        ``(a + d) / (a + b + c + d)`` over the unconstrained pairs; ``nan`` if none is left.
    """
    a = np.asarray(labels_a)
    b = np.asarray(labels_b)
    pairs = _unique_pairs(np.asarray(constrained_pairs, dtype=np.intp).reshape(-1, 2))
    n = a.shape[0]
    # pair_confusion_matrix counts ordered pairs: its diagonal sum is 2 (a + d)
    confusion = pair_confusion_matrix(a, b)
    agree = (confusion[0, 0] + confusion[1, 1]) / 2
    total = n * (n - 1) / 2
    same_a = a[pairs[:, 0]] == a[pairs[:, 1]]
    same_b = b[pairs[:, 0]] == b[pairs[:, 1]]
    agree -= float(np.count_nonzero(same_a == same_b))
    total -= pairs.shape[0]
    return float(agree / total) if total > 0 else float("nan")


def adjusted_rand_index(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """Hubert & Arabie's Rand index adjusted for chance (0 for random labels, 1 for equal)."""
    return float(adjusted_rand_score(labels_a, labels_b))


def _unique_pairs(pairs: NDArray[np.intp]) -> NDArray[np.intp]:
    pairs = np.sort(pairs, axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0)
