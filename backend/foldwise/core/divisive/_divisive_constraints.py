"""Must-link and cannot-link constraints for Constrained-Divisive (002 sec. 2.1, 3.1).

Constraints are closed transitively before use (002 sec. 3.1, Wagstaff et al. [10]): must-links
become components, cannot-links are lifted to components. A folder partition says the same as
all its O(n^2) pairs with O(n + B^2) of them (:func:`partition_constraints`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from foldwise.core._hierarchy import FolderPath

Pair = tuple[int, int]
PairsByLevel = Mapping[int, Sequence[Pair]]


@dataclass(frozen=True)
class LevelConstraints:
    """The constraints of one level after the transitive closure (002 sec. 3.1, [10]).

    Parameters
    ----------
    component : ndarray of shape (n_samples,), int
        Must-link component of each document; unconstrained documents are singletons.
    cannot_row : ndarray of shape (n_components,), int
        Row of each component in ``cannot``, or ``-1`` if it has no cannot-link.
    cannot : ndarray of shape (n_rows, n_rows), bool
        Symmetric: ``cannot[a, b]`` if some document of one component is cannot-linked to
        some document of the other. Lifting cannot-links to components is the closure rule
        "a = b and b != c implies a != c".
    """

    component: NDArray[np.intp]
    cannot_row: NDArray[np.intp]
    cannot: NDArray[np.bool_]


def close_constraints(
    n_samples: int,
    must_link: Sequence[Pair] = (),
    cannot_link: Sequence[Pair] = (),
) -> LevelConstraints:
    """Transitive closure of must-links and cannot-links over ``n_samples`` documents.

    Parameters
    ----------
    n_samples : int
        Number of documents; pairs index them.
    must_link, cannot_link : sequence of (int, int)
        Document index pairs.

    Returns
    -------
    LevelConstraints

    Raises
    ------
    ValueError
        If a pair indexes outside ``range(n_samples)`` or a cannot-link joins two documents
        that the must-links put together (the set contradicts itself).
    """
    ml = _as_pairs(must_link, n_samples, "must_link")
    cl = _as_pairs(cannot_link, n_samples, "cannot_link")
    graph = sparse.coo_matrix(
        (np.ones(len(ml), dtype=np.int8), (ml[:, 0], ml[:, 1])), shape=(n_samples, n_samples)
    )
    _, component = connected_components(graph, directed=False)
    component = component.astype(np.intp)
    ca, cb = component[cl[:, 0]], component[cl[:, 1]]
    clash = np.flatnonzero(ca == cb)
    if clash.size:
        i, j = cl[clash[0]]
        raise ValueError(
            f"cannot_link ({i}, {j}) contradicts the must-links, which put both documents "
            "in one group"
        )
    involved = np.unique(np.concatenate([ca, cb]))
    cannot_row = np.full(int(component.max(initial=-1)) + 1, -1, dtype=np.intp)
    cannot_row[involved] = np.arange(involved.size)
    cannot = np.zeros((involved.size, involved.size), dtype=bool)
    cannot[cannot_row[ca], cannot_row[cb]] = True
    cannot[cannot_row[cb], cannot_row[ca]] = True
    return LevelConstraints(component, cannot_row, cannot)


def partition_constraints(labels: ArrayLike) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Must-links and cannot-links that say the same as a partition, in O(n + B^2) pairs.

    Every pair of documents in one block is must-linked and every pair in different blocks
    cannot-linked; after :func:`close_constraints` a chain through each block and one pair
    per two blocks are equivalent to the full O(n^2) set.

    Parameters
    ----------
    labels : array-like of shape (n_samples,), int
        Block of each document, ``-1`` for documents without a label (unconstrained).

    Returns
    -------
    must_link : ndarray of shape (n_must, 2), int
    cannot_link : ndarray of shape (n_cannot, 2), int
    """
    labels = np.asarray(labels, dtype=np.intp)
    labeled = np.flatnonzero(labels >= 0)
    order = labeled[np.argsort(labels[labeled], kind="stable")]
    same = labels[order[1:]] == labels[order[:-1]]
    must = np.column_stack([order[:-1][same], order[1:][same]])
    firsts = order[np.r_[True, ~same]] if order.size else order
    a, b = np.triu_indices(firsts.size, k=1)
    cannot = np.column_stack([firsts[a], firsts[b]])
    return must.astype(np.intp), cannot.astype(np.intp)


def folder_level_partition(paths: Sequence[FolderPath | None], level: int) -> NDArray[np.intp]:
    """The partition of the labeled documents by their folder at depth ``level``.

    Parameters
    ----------
    paths : sequence of tuple of str or None, length n_samples
        Folder path of each document; ``None`` for an unlabeled document.
    level : int
        Folder depth, ``>= 1``: level 1 groups documents by their top-level folder.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int
        Block per document; ``-1`` for unlabeled documents and for documents that sit
        above ``level`` (in a folder of depth ``< level``): they belong to no block there.
    """
    if int(level) < 1:
        raise ValueError(f"level must be >= 1, got {level!r}")
    index: dict[FolderPath, int] = {}
    labels = np.full(len(paths), -1, dtype=np.intp)
    for i, path in enumerate(paths):
        if path is not None and len(path) >= level:
            labels[i] = index.setdefault(tuple(path[:level]), len(index))
    return labels


def _as_pairs(pairs: Any, n: int, name: str) -> NDArray[np.intp]:
    arr = np.asarray(pairs if len(pairs) else np.empty((0, 2)), dtype=np.intp)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must be a sequence of index pairs, got shape {arr.shape}")
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        i, j = arr[np.flatnonzero(bad.any(axis=1))[0]]
        raise ValueError(f"{name} pair ({i}, {j}) is outside range({n})")
    return arr


def hashable_labels(labels: Sequence[Hashable | None]) -> NDArray[np.intp]:
    """Integer codes for arbitrary labels, ``-1`` for None."""
    index: dict[Hashable, int] = {}
    return np.array(
        [-1 if lab is None else index.setdefault(lab, len(index)) for lab in labels],
        dtype=np.intp,
    )
