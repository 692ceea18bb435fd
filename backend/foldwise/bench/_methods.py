"""The methods ``foldwise bench`` compares, each as ``run(X, labels, seed) -> MethodOutput``.

A method returns a dendrogram over the sampled documents (``None`` for the supervised
baseline) and a folder for every new document. How each method decides a folder:

* ``scipy``, ``hac``, ``ihac``, ``bihac``: the majority folder of the labeled documents in
  the smallest dendrogram cluster that holds the new document and at least one labeled
  document (ties go to the folder whose labeled document joined first) -- a dendrogram
  decides like a nearest neighbour (docs/architecture.md sec. 6).
* ``biihac``: its extended tree. ``placement_known`` scores the existing folder the tree
  proposes for the document (the placement model, ``foldwise.core.FolderPlacement``, fitted
  on the labeled and the new documents); ``placement_confident`` scores the folder the tree
  files it in, only as deep as the model is confident (003 sec. 3.1), and
  ``placement_ancestor`` counts that folder as right when it is the true folder or one of
  its ancestors.
* ``divisive`` (constraints on level 1), ``divisive-all`` (one constraint set per level,
  002 sec. 3.2), ``ggm`` (modified L2), ``ggm-l2``, ``ggm-confusion``, ``ggm-sample``: the
  dendrogram majority rule, as for HAC.
* ``svm``: a linear SVM trained on the labeled documents' folders (what paperless-ngx does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core import (
    HAC,
    IHAC,
    BiHAC,
    BiiHAC,
    ConstrainedDivisive,
    FolderPath,
    FolderPlacement,
    ProbabilisticHierarchy,
)

Labels = Sequence[FolderPath | None]


@dataclass
class MethodOutput:
    """A method's answer: a dendrogram (or None) and a folder per document (None = unplaced).

    ``placement`` is a fitted placement model to reuse for the extended tree;
    ``tree_placement`` says the method places documents where its extended tree puts them.
    """

    linkage: NDArray[np.float64] | None
    placements: list[FolderPath | None]
    weights: NDArray[np.float64] | None = None
    placement: FolderPlacement | None = None
    tree_placement: bool = False


def majority_of_nearest_labeled(Z: NDArray[np.float64], labels: Labels) -> list[FolderPath | None]:
    """For each document, the majority folder of the labeled documents it first meets in Z."""
    n = len(labels)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    votes: dict[int, Counter[FolderPath]] = {i: Counter() for i in range(n)}
    first_seen: dict[int, dict[FolderPath, int]] = {i: {} for i in range(n)}
    for i, label in enumerate(labels):
        if label is not None:
            votes[i][label] += 1
            first_seen[i][label] = 0
    placed: list[FolderPath | None] = list(labels)
    for k in range(n - 1):
        a, b = int(Z[k, 0]), int(Z[k, 1])
        for side, other in ((a, b), (b, a)):
            if not votes[side] and votes[other]:
                best = max(votes[other].values())
                ties = [f for f, c in votes[other].items() if c == best]
                winner = min(ties, key=lambda f: first_seen[other][f])
                for doc in members[side]:
                    placed[doc] = winner
        new = n + k
        members[new] = members.pop(a) + members.pop(b)
        votes[new] = votes.pop(a) + votes.pop(b)
        seen = first_seen.pop(a)
        for folder, step in first_seen.pop(b).items():
            seen.setdefault(folder, step)
        for folder in votes[new]:
            seen.setdefault(folder, k + 1)
        first_seen[new] = seen
    return placed


def _dendrogram_method(make: Callable[..., Any]) -> Callable[..., MethodOutput]:
    def run(X: sp.csr_matrix, labels: Labels, seed: int) -> MethodOutput:
        model = make(seed).fit(X, labels)
        Z = model.linkage_
        return MethodOutput(
            Z, majority_of_nearest_labeled(Z, labels), getattr(model, "weights_", None)
        )

    return run


def _scipy(X: sp.csr_matrix, labels: Labels, seed: int) -> MethodOutput:
    """scipy's average linkage on the same cosine distances: the reference HAC should match."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    from foldwise.core import cosine_distances

    Z = linkage(squareform(cosine_distances(X, dtype=np.float64), checks=False), method="average")
    return MethodOutput(Z, majority_of_nearest_labeled(Z, labels))


def _biihac(X: sp.csr_matrix, labels: Labels, seed: int) -> MethodOutput:
    model = BiiHAC().fit(X, labels)
    return MethodOutput(
        model.linkage_, list(labels), model.weights_, model.placement_, tree_placement=True
    )


def _svm(X: sp.csr_matrix, labels: Labels, seed: int) -> MethodOutput:
    from sklearn.svm import LinearSVC

    labeled = [i for i, p in enumerate(labels) if p is not None]
    classes = sorted({labels[i] for i in labeled})  # type: ignore[type-var]
    placed: list[FolderPath | None] = list(labels)
    if len(classes) == 1:
        for i, p in enumerate(labels):
            placed[i] = classes[0] if p is None else p
        return MethodOutput(None, placed)
    index = {c: k for k, c in enumerate(classes)}
    clf = LinearSVC(random_state=seed).fit(X[labeled], [index[labels[i]] for i in labeled])  # type: ignore[index]
    new = [i for i, p in enumerate(labels) if p is None]
    if new:
        for i, k in zip(new, clf.predict(X[new]), strict=True):
            placed[i] = classes[int(k)]
    return MethodOutput(None, placed)


METHODS: dict[str, Callable[..., MethodOutput]] = {
    "scipy": _scipy,
    "hac": _dendrogram_method(lambda seed: HAC()),
    "ihac": _dendrogram_method(lambda seed: IHAC()),
    "bihac": _dendrogram_method(lambda seed: BiHAC()),
    "biihac": _biihac,
    "divisive": _dendrogram_method(lambda seed: ConstrainedDivisive(level=1)),
    "divisive-all": _dendrogram_method(lambda seed: ConstrainedDivisive(level=(1, 2, 3))),
    "ggm": _dendrogram_method(lambda seed: ProbabilisticHierarchy(random_state=seed)),
    "ggm-l2": _dendrogram_method(
        lambda seed: ProbabilisticHierarchy(similarity="l2", random_state=seed)
    ),
    "ggm-confusion": _dendrogram_method(
        lambda seed: ProbabilisticHierarchy(similarity="confusion", random_state=seed)
    ),
    "ggm-sample": _dendrogram_method(
        lambda seed: ProbabilisticHierarchy(similarity="sample", random_state=seed)
    ),
    "svm": _svm,
}
