"""The dendrogram stability experiment of 002 sec. 4 for Constrained-Divisive.

Each run holds out a share of the documents (10 % in the paper), draws random constrained
pairs from the reference partition of the kept documents, reclusters them, and cuts the
dendrogram at the chosen levels. Level 1 is compared with the reference partition (002
Table 1); every level is also compared between runs on the documents both runs kept (002
Table 2). Each comparison gives the Rand index (002 eq. 1) and the corrected Rand index
(002 sec. 4.2: the Rand index without the constrained pairs); the result is their median.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import pairwise_distances
from sklearn.utils import check_array

from foldwise.core.divisive._divisive import constrained_divisive_tree, cut_at_level
from foldwise.core.divisive._divisive_constraints import close_constraints, hashable_labels
from foldwise.core.measures._rand import corrected_rand_index, rand_index


@dataclass(frozen=True)
class StabilityResult:
    """Medians over runs (002 Tables 1 and 2).

    Attributes
    ----------
    rand, corrected_rand : dict of int to float
        Level -> median index between the runs' partitions at that level (002 Table 2).
        ``nan`` where fewer than two runs had enough documents for the level.
    reference_rand, reference_corrected_rand : float
        Median index of the level-1 partition against the reference partition (002
        Table 1); ``nan`` without a reference.
    correct_decisions : int
        Runs whose level-1 partition equals the reference exactly (002 Table 1, column 3).
    n_runs : int
    """

    rand: dict[int, float]
    corrected_rand: dict[int, float]
    reference_rand: float
    reference_corrected_rand: float
    correct_decisions: int
    n_runs: int
    per_run_reference_corrected_rand: list[float] = field(default_factory=list)


def divisive_stability(
    X: Any,
    reference: Sequence[Hashable | None] | None = None,
    *,
    constraint_fraction: float = 0.0,
    levels: Sequence[int] = (1, 5, 10),
    n_runs: int = 50,
    holdout: float = 0.1,
    metric: str = "euclidean",
    random_state: int | np.random.Generator | None = None,
) -> StabilityResult:
    """Run the stability experiment of 002 sec. 4.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Documents, or distances if ``metric="precomputed"``.
    reference : sequence of hashable or None, length n_samples, optional
        The external level-1 partition (e.g. each document's top-level folder); ``None``
        entries are unlabeled. Constraints are drawn from it, and level 1 is compared with it.
    constraint_fraction : float, default=0.0
        Share of the kept documents' pairs, drawn uniformly among labeled pairs, that become
        level-1 constraints (002 Table 1: 0.03 and 0.05). 0 runs plain divisive clustering.
    levels : sequence of int, default=(1, 5, 10)
        Levels (split numbers) at which partitions are compared.
    n_runs : int, default=50
    holdout : float, default=0.1
        Share of documents held out in each run.
    metric : str, default="euclidean"
        As in :class:`ConstrainedDivisive`.
    random_state : int or Generator, optional

    Returns
    -------
    StabilityResult
    """
    if not 0 <= holdout < 1:
        raise ValueError(f"holdout must be in [0, 1), got {holdout!r}")
    if not 0 <= constraint_fraction <= 1:
        raise ValueError(f"constraint_fraction must be in [0, 1], got {constraint_fraction!r}")
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs!r}")
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    n = X.shape[0]
    ref = None if reference is None else hashable_labels(reference)
    if ref is not None and ref.shape[0] != n:
        raise ValueError(f"reference has {ref.shape[0]} entries for {n} documents")
    if constraint_fraction > 0 and ref is None:
        raise ValueError("constraint_fraction > 0 needs a reference partition")
    rng = np.random.default_rng(random_state)
    # a precomputed matrix is the caller's: copy it before the in-place fixes below
    D = pairwise_distances(X, metric=metric).astype(np.float32, copy=metric == "precomputed")
    np.maximum(D, 0, out=D)
    np.fill_diagonal(D, 0)
    n_keep = n - round(holdout * n)
    if n_keep < 2:
        raise ValueError(f"holdout={holdout!r} leaves {n_keep} of {n} documents")

    runs: list[tuple[NDArray[np.intp], dict[int, NDArray[np.intp]], NDArray[np.intp]]] = []
    ref_ri: list[float] = []
    ref_cri: list[float] = []
    correct = 0
    for _ in range(n_runs):
        keep = np.sort(rng.choice(n, size=n_keep, replace=False))
        pairs = np.empty((0, 2), dtype=np.intp)
        constraints = None
        if ref is not None and constraint_fraction > 0:
            pairs = _random_pairs(ref[keep], constraint_fraction, rng)
            same = ref[keep][pairs[:, 0]] == ref[keep][pairs[:, 1]]
            constraints = {1: close_constraints(n_keep, pairs[same], pairs[~same])}
        Z = constrained_divisive_tree(D[np.ix_(keep, keep)], constraints)
        cuts = {lv: cut_at_level(Z, lv) for lv in levels if lv <= n_keep - 1}
        runs.append((keep, cuts, keep[pairs]))
        if ref is not None and 1 in cuts:
            labeled = ref[keep] >= 0
            local = np.full(n_keep, -1, dtype=np.intp)
            local[labeled] = np.arange(int(labeled.sum()))
            kept_pairs = local[pairs]
            kept_pairs = kept_pairs[(kept_pairs >= 0).all(axis=1)]
            a, b = ref[keep][labeled], cuts[1][labeled]
            ref_ri.append(rand_index(a, b))
            ref_cri.append(corrected_rand_index(a, b, constrained_pairs=kept_pairs))
            correct += int(ref_ri[-1] == 1.0)

    rand: dict[int, float] = {}
    corrected: dict[int, float] = {}
    for lv in levels:
        ri, cri = [], []
        for (keep_a, cuts_a, pairs_a), (keep_b, cuts_b, pairs_b) in combinations(runs, 2):
            if lv not in cuts_a or lv not in cuts_b:
                continue
            common, ia, ib = np.intersect1d(keep_a, keep_b, return_indices=True)
            pos = np.full(n, -1, dtype=np.intp)
            pos[common] = np.arange(common.size)
            both = pos[np.concatenate([pairs_a, pairs_b])]
            both = both[(both >= 0).all(axis=1)]
            la, lb = cuts_a[lv][ia], cuts_b[lv][ib]
            agree, total = _pair_agreements(la, lb)
            ri.append(agree / total if total else 1.0)
            # corrected_rand_index, inlined: sklearn's input checks dominate at 10^3 calls
            both = np.unique(np.sort(both, axis=1), axis=0)
            both = both[both[:, 0] != both[:, 1]]
            same = (la[both[:, 0]] == la[both[:, 1]]) == (lb[both[:, 0]] == lb[both[:, 1]])
            left = total - both.shape[0]
            cri.append((agree - int(same.sum())) / left if left else float("nan"))
        rand[lv] = float(np.median(ri)) if ri else float("nan")
        corrected[lv] = float(np.nanmedian(cri)) if cri else float("nan")
    return StabilityResult(
        rand=rand,
        corrected_rand=corrected,
        reference_rand=float(np.median(ref_ri)) if ref_ri else float("nan"),
        reference_corrected_rand=float(np.nanmedian(ref_cri)) if ref_cri else float("nan"),
        correct_decisions=correct,
        n_runs=n_runs,
        per_run_reference_corrected_rand=ref_cri,
    )


def _pair_agreements(a: NDArray[np.intp], b: NDArray[np.intp]) -> tuple[int, int]:
    """Pairs that two partitions treat alike (a + d of 002 eq. 1), and all pairs."""
    n = a.shape[0]
    _, joint = np.unique(a * (int(b.max(initial=0)) + 1) + b, return_inverse=True)

    def together(labels: NDArray[np.intp]) -> int:
        counts = np.bincount(labels)
        return int((counts * (counts - 1) // 2).sum())

    both = together(joint)
    total = n * (n - 1) // 2
    return total - together(a) - together(b) + 2 * both, total


def _random_pairs(
    labels: NDArray[np.intp], fraction: float, rng: np.random.Generator
) -> NDArray[np.intp]:
    """``fraction`` of all pairs, drawn without replacement among pairs of labeled documents."""
    labeled = np.flatnonzero(labels >= 0)
    n = labels.shape[0]
    want = round(fraction * n * (n - 1) / 2)
    a, b = np.triu_indices(labeled.size, k=1)
    if want == 0 or a.size == 0:
        return np.empty((0, 2), dtype=np.intp)
    pick = rng.choice(a.size, size=min(want, a.size), replace=False)
    return np.column_stack([labeled[a[pick]], labeled[b[pick]]]).astype(np.intp)
