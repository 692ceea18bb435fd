"""Constrained-Divisive: splinter-group divisive clustering with per-level constraints.

002 sec. 3.2, Algorithm 1. The largest cluster (by diameter) is split by growing a splinter
group from its most remote element (the DIANA scheme). On a *constrained level* the split
respects that level's constraints: the splinter group is seeded by an element with an
unresolved cannot-link, must-linked elements move together, and an element cannot-linked to
the splinter group never joins it. Every other split is unconstrained, as in the paper.

Levels count splits: level 1 is the first split (the partition into two clusters), level
``L`` the ``L``-th split (the partition into ``L + 1`` clusters). The paper constrains level
1 only; its sec. 3.2 sketches one constraint set per level, each used only at its level,
which :func:`constrained_divisive_tree` accepts as a mapping ``{level: constraints}``.
"""

from __future__ import annotations

import heapq
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.metrics import pairwise_distances
from sklearn.utils import check_array

from foldwise.core._hierarchy import FolderPath
from foldwise.core.divisive._divisive_constraints import (
    LevelConstraints,
    Pair,
    PairsByLevel,
    close_constraints,
    folder_level_partition,
    partition_constraints,
)


def constrained_divisive_tree(
    D: NDArray[np.floating],
    constraints: Mapping[int, LevelConstraints] | None = None,
) -> NDArray[np.float64]:
    """Constrained-Divisive (002 Algorithm 1) as a scipy linkage matrix.

    Parameters
    ----------
    D : ndarray of shape (n_samples, n_samples)
        Symmetric dissimilarities with a zero diagonal.
    constraints : mapping of int to LevelConstraints, optional
        Constraint set per level (split number, 1-based); each is used only at its split.

    Returns
    -------
    Z : ndarray of shape (n_samples - 1, 4)
        Splits read bottom-up: row ``k`` joins two clusters at the diameter of their union
        (the split's height). Heights never decrease because the cluster with the largest
        diameter is split first and a part's diameter is at most its whole's. The last
        ``L`` rows are the first ``L`` splits, so undoing them gives the level-``L``
        partition (:func:`cut_at_level`).
    """
    D = np.asarray(D)
    n = D.shape[0]
    constraints = constraints or {}
    # (-diameter, creation number, key, members): ties split in creation order
    heap: list[tuple[float, int, int, NDArray[np.intp]]] = []
    next_key = n  # keys < n are the singleton clusters of the documents

    def push(members: NDArray[np.intp], diameter: float) -> int:
        nonlocal next_key
        if members.size == 1:
            return int(members[0])
        key = next_key
        next_key += 1
        heapq.heappush(heap, (-diameter, key, key, members))
        return key

    root = np.arange(n, dtype=np.intp)
    push(root, float(D.max()) if n else 0.0)
    splits: list[tuple[int, int, int, float, int]] = []
    level = 0
    while heap:
        neg_diameter, _, key, members = heapq.heappop(heap)
        level += 1
        D_sub = D[np.ix_(members, members)]
        in_S = _splinter_group(D_sub, _localize(constraints.get(level), members))
        S, R = members[in_S], members[~in_S]
        key_S = push(S, float(D_sub[np.ix_(in_S, in_S)].max()))
        key_R = push(R, float(D_sub[np.ix_(~in_S, ~in_S)].max()))
        splits.append((key, key_S, key_R, -neg_diameter, members.size))

    Z = np.empty((max(n - 1, 0), 4), dtype=np.float64)
    node_of = {i: i for i in range(n)}
    for row, (key, key_S, key_R, height, size) in enumerate(reversed(splits)):
        a, b = sorted((node_of[key_S], node_of[key_R]))
        Z[row] = (a, b, height, size)
        node_of[key] = n + row
    return Z


def cut_at_level(Z: NDArray[np.floating], level: int) -> NDArray[np.intp]:
    """The partition into ``level + 1`` clusters: the dendrogram without its last ``level`` rows.

    For a divisive tree (:func:`constrained_divisive_tree`) this is the state after the
    first ``level`` splits; for an agglomerative one, before its last ``level`` merges.

    Parameters
    ----------
    Z : ndarray of shape (n_samples - 1, 4)
    level : int
        ``0 <= level <= n_samples - 1``.

    Returns
    -------
    labels : ndarray of shape (n_samples,), int
        Cluster numbers ``0..level`` in order of each cluster's smallest member.
    """
    Z = np.asarray(Z)
    n = Z.shape[0] + 1
    if not 0 <= level <= n - 1:
        raise ValueError(f"level must be in [0, {n - 1}] for {n} documents, got {level!r}")
    n_rows = n - 1 - level
    parent = np.arange(2 * n - 1, dtype=np.intp)
    for k in range(n_rows):
        parent[int(Z[k, 0])] = n + k
        parent[int(Z[k, 1])] = n + k
    # pointer jumping until every item points at its cluster's top node
    top = parent.copy()
    while True:
        nxt = top[top]
        if np.array_equal(nxt, top):
            break
        top = nxt
    _, labels = np.unique(top[:n], return_inverse=True)
    first = np.full(labels.max() + 1, n, dtype=np.intp)
    np.minimum.at(first, labels, np.arange(n))
    rank = np.empty_like(first)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[labels].astype(np.intp)


class ConstrainedDivisive(BaseEstimator):
    """Semi-supervised divisive hierarchical clustering (002 sec. 3.2, Algorithm 1).

    Parameters
    ----------
    level : int or sequence of int, default=1
        The constrained level(s): split numbers, 1-based. With ``y`` the constraints of
        level ``L`` are the partition of the labeled documents by their folder at depth
        ``L`` (:func:`folder_level_partition`). Several levels give the multi-level
        extension of 002 sec. 3.2: each constraint set is used only at its level.
    must_link, cannot_link : sequence of (int, int) or mapping of int to such, optional
        Constraints given directly as document index pairs. A plain sequence applies to
        ``level`` (which must then be one int); a mapping gives one set per level. They are
        added to the ones derived from ``y``.
    metric : str, default="cosine"
        Dissimilarity for :func:`sklearn.metrics.pairwise_distances`, or ``"precomputed"``
        (``X`` is then a square distance matrix). 002 uses ``"euclidean"``.

    Attributes
    ----------
    linkage_ : ndarray of shape (n_samples - 1, 4)
        The dendrogram (see :func:`constrained_divisive_tree`).
    children_ : ndarray of shape (n_samples - 1, 2), int
        The two nodes joined by each row of ``linkage_``.
    distances_ : ndarray of shape (n_samples - 1,)
        Heights (split diameters).
    n_leaves_ : int
    constrained_levels_ : tuple of int
        Levels that had at least one constraint.
    """

    def __init__(
        self,
        level: int | Sequence[int] = 1,
        must_link: Sequence[Pair] | PairsByLevel | None = None,
        cannot_link: Sequence[Pair] | PairsByLevel | None = None,
        metric: str = "cosine",
    ) -> None:
        self.level = level
        self.must_link = must_link
        self.cannot_link = cannot_link
        self.metric = metric

    #: 002 takes its constraints from the labels (and ``must_link`` / ``cannot_link``);
    #: explicit MLB triples are accepted by :meth:`fit` for the common signature, not used.
    ignores_triples = True

    def fit(
        self, X: Any, y: Sequence[FolderPath | None] | None = None, triples: Any = None
    ) -> ConstrainedDivisive:
        """Build the dendrogram.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Documents (e.g. tf-idf rows), or distances if ``metric="precomputed"``.
        y : sequence of tuple of str or None, length n_samples, optional
            Folder path of each document, ``None`` for unlabeled documents.
        triples : ignored
            The estimators' common ``fit(X, y, triples)`` signature; see ``ignores_triples``.

        Returns
        -------
        self
        """
        X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"need at least 2 documents, got n_samples={n}")
        levels = _levels(self.level)
        must = _pairs_by_level(self.must_link, levels, "must_link")
        cannot = _pairs_by_level(self.cannot_link, levels, "cannot_link")
        if y is not None:
            if len(y) != n:
                raise ValueError(f"y has {len(y)} entries for {n} documents")
            for lv in levels:
                blocks = folder_level_partition(y, lv)
                if blocks.min() == blocks.max() == 0:
                    warnings.warn(
                        f"every document is in one folder at level {lv}: its must-links "
                        f"cannot survive a split, so level {lv} is split without constraints",
                        stacklevel=2,
                    )
                m, c = partition_constraints(blocks)
                must[lv] = [*must.get(lv, []), *map(tuple, m)]
                cannot[lv] = [*cannot.get(lv, []), *map(tuple, c)]
            if all(p is None for p in y):
                warnings.warn(
                    "y has no labeled document; clustering without constraints",
                    stacklevel=2,
                )
        constraints = {
            lv: close_constraints(n, must.get(lv, ()), cannot.get(lv, ()))
            for lv in sorted(set(must) | set(cannot))
            if len(must.get(lv, ())) or len(cannot.get(lv, ()))
        }
        # a precomputed matrix is the caller's: copy it before the in-place fixes below
        D = pairwise_distances(X, metric=self.metric).astype(
            np.float32, copy=self.metric == "precomputed"
        )
        # cosine distances of identical rows come out as tiny negatives
        np.maximum(D, 0, out=D)
        np.fill_diagonal(D, 0)
        if not D.any():
            warnings.warn(
                "all documents are at distance 0 from each other; the dendrogram has "
                "height 0 everywhere and its shape is arbitrary",
                stacklevel=2,
            )
        self.linkage_ = constrained_divisive_tree(D, constraints)
        # the attribute set of the HAC family (foldwise.core.hac._estimators)
        self.children_ = self.linkage_[:, :2].astype(np.intp)
        self.distances_ = self.linkage_[:, 2].copy()
        self.n_leaves_ = n
        self.constrained_levels_ = tuple(constraints)
        return self


def _splinter_group(
    D_sub: NDArray[np.floating],
    local: tuple[NDArray[np.intp], NDArray[np.bool_]] | None,
) -> NDArray[np.bool_]:
    """Steps 3-6 of 002 Algorithm 1 on one cluster: the splinter group's members.

    ``local`` is ``(unit, cannot)``: the must-link unit of each member and which units are
    cannot-linked, restricted to the cluster; ``None`` for an unconstrained split.
    """
    m = D_sub.shape[0]
    total = D_sub.sum(axis=1, dtype=np.float64)
    avg = total / (m - 1)
    in_S = np.zeros(m, dtype=bool)
    if local is not None:
        unit, cannot = local
        has_cannot: NDArray[np.bool_] = np.any(cannot, axis=1)
        unresolved = has_cannot[unit]
        # step 3: seed with the most remote element that has an unresolved cannot-link
        seed = (
            int(np.argmax(np.where(unresolved, avg, -np.inf)))
            if unresolved.any()
            else (int(np.argmax(avg)))
        )
        in_S[unit == unit[seed]] = True
        if in_S.all():
            # the cluster is one must-link group (e.g. exactly one folder's documents): a
            # binary split cannot keep it together, and nothing says how to cut it, so this
            # split goes unconstrained (the estimator warns when a whole level is like this)
            local = None
            in_S[:] = False
    if local is None:
        in_S[int(np.argmax(avg))] = True
    to_S = D_sub[in_S].sum(axis=0, dtype=np.float64)
    n_S = int(in_S.sum())
    if local is not None:
        unit, cannot = local
        n_units = cannot.shape[0]
        blocked = cannot[unit[in_S]].any(axis=0)
    while m - n_S > 1:
        n_R = m - n_S
        # step 4: average distance to the rest of the cluster minus to the splinter group
        diff = (total - to_S) / (n_R - 1) - to_S / n_S
        if local is None:
            diff[in_S] = -np.inf
            h = int(np.argmax(diff))
            if diff[h] <= 0:
                break
            move = np.zeros(m, dtype=bool)
            move[h] = True
        else:
            # must-linked members move at once, so a unit's gain is its members' mean gain
            rest = ~in_S
            size = np.bincount(unit[rest], minlength=n_units)
            gain = np.bincount(unit[rest], weights=diff[rest], minlength=n_units)
            with np.errstate(invalid="ignore", divide="ignore"):
                gain = np.where(size > 0, gain / size, -np.inf)
            # Diff(h) = 0 for a unit cannot-linked to the splinter group: it never moves
            # (but does not stop others from moving)
            gain[blocked] = np.minimum(gain[blocked], 0)
            gain[size == n_R] = -np.inf  # the rest must keep a member
            u = int(np.argmax(gain))
            if gain[u] <= 0:
                break
            move = rest & (unit == u)
            blocked |= cannot[u]
        in_S |= move
        n_S += int(move.sum())
        to_S += D_sub[move].sum(axis=0, dtype=np.float64)
    return in_S


def _localize(
    constraints: LevelConstraints | None, members: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.bool_]] | None:
    """Units and unit cannot-links of ``constraints`` within one cluster, or None if none bite."""
    if constraints is None:
        return None
    comps, unit = np.unique(constraints.component[members], return_inverse=True)
    rows = constraints.cannot_row[comps]
    has = rows >= 0
    cannot = np.zeros((comps.size, comps.size), dtype=bool)
    if has.sum() >= 2:
        idx = np.flatnonzero(has)
        cannot[np.ix_(idx, idx)] = constraints.cannot[np.ix_(rows[idx], rows[idx])]
    if comps.size == members.size and not cannot.any():
        return None
    return unit.astype(np.intp), cannot


def _levels(level: int | Sequence[int]) -> tuple[int, ...]:
    levels = (level,) if isinstance(level, int | np.integer) else tuple(level)
    if not levels or any(int(lv) < 1 for lv in levels):
        raise ValueError(f"level must be an int >= 1 or a sequence of them, got {level!r}")
    return tuple(int(lv) for lv in levels)


def _pairs_by_level(
    pairs: Sequence[Pair] | PairsByLevel | None, levels: tuple[int, ...], name: str
) -> dict[int, list[Any]]:
    if pairs is None:
        return {}
    if isinstance(pairs, Mapping):
        return {int(lv): list(p) for lv, p in pairs.items()}
    if len(levels) != 1:
        raise ValueError(
            f"{name} given as plain pairs needs one level, got level={levels!r}; "
            "pass a mapping {level: pairs} instead"
        )
    return {levels[0]: list(pairs)}
