"""Proposed subfolders inside a proposal (docs/placement.md, "Subfolders of a proposal").

A proposal may hold the documents of several folders the person does not have yet: a hidden
subtree, such as the classes of an extension the person never filed. One less cohesive than
three quarters of the person's folders is divided into subfolders where its documents form
groups as cohesive as the person's median folder, or no larger than it: the person's
granularity decides how fine proposals get, not a constant.

Two choices here differ from the proposal search (``_proposals``):

- The groups are found in a dendrogram of the proposal's own documents, not in the one over
  all documents: that one was built for the person's folders.
- Cosines are taken on the plain rows (unweighted tf-idf), not under the learned term
  weights. The weights (000 eq. 3) are learned to reproduce the person's folders; inside a
  new topic the terms that separate its parts are ones those folders never needed. On the
  PHP manual's hidden ``ui`` extension, average linkage of its 252 new pages cut into its 41
  folders (mostly classes) agrees with them far better on plain rows (adjusted Rand .59)
  than under the weights (.40).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.cluster.hierarchy import linkage

from foldwise.core._hierarchy import FolderPath


def cohesion_of(s: NDArray[np.float64], m: int) -> float:
    """Average cosine over the distinct pairs of m unit rows with row sum ``s``: ``|s|^2``
    counts each row with itself once."""
    return float((s @ s - m) / (m * (m - 1)))


#: Rows of the similarity matrix computed at once by ``cosine_average_linkage``.
SIMILARITY_BLOCK = 512


def cosine_average_linkage(
    rows: sp.csr_matrix, block: int = SIMILARITY_BLOCK
) -> NDArray[np.float64]:
    """Average-linkage matrix (001 sec. 3) of unit ``rows`` (shape (m, n_terms), m >= 2)
    under the cosine distance ``max(0, 1 - cos)``, shape (m - 1, 4).

    The distances go straight into condensed form, ``block`` rows of similarities at a
    time: for a pool of 5,000 new documents the full m x m product (sparse, then dense)
    peaked at 470 MB above the rows, the blocks at 220 MB (docs/placement.md, "Memory of
    the regrouping").
    """
    rows = sp.csr_matrix(rows)
    m = rows.shape[0]
    condensed = np.empty(m * (m - 1) // 2)
    for first in range(0, m, block):
        similarity = (rows[first : first + block] @ rows.T).toarray()
        for i in range(first, min(first + block, m)):
            # Row i's pairs (i, j > i) are one run of the condensed vector.
            start = m * i - i * (i + 1) // 2
            condensed[start : start + m - i - 1] = similarity[i - first, i + 1 :]
    np.subtract(1.0, condensed, out=condensed)
    np.maximum(condensed, 0.0, out=condensed)
    return linkage(condensed, method="average")


def cohesion(rows: sp.csr_matrix, docs: Sequence[int] | NDArray[np.intp]) -> float:
    """Average cosine over the distinct pairs of ``docs`` (unit rows of ``rows``); at least
    two documents."""
    return cohesion_of(np.asarray(rows[list(docs)].sum(axis=0)).ravel(), len(docs))


@dataclass(frozen=True)
class FolderCohesion:
    """How cohesive the person's folders are: the yardsticks a proposal is divided by.

    Attributes
    ----------
    one_folder : float
        Lower quartile of the folders' cohesions. A proposal at least this cohesive is as
        tight as a quarter of the person's folders: it may well be one folder, and stays
        whole.
    typical : float
        Their median. A part of a divided proposal is at least this cohesive, or no larger
        than ``typical_size``.
    typical_size : float
        The median number of documents the person filed in a folder (0: no part by size).
        Pages of a new topic may be looser than the person's folders (SciPy's hidden
        ``dev`` guide: cohesion .14-.27 against a median folder of .33), so that no part of
        their proposal is as cohesive as ``typical``; parts of the person's size still
        follow their own dendrogram (docs/placement.md, "Subfolders of a proposal").

    ``one_folder`` and ``typical`` are inf, and ``typical_size`` 0, when no folder has two
    filed documents: then no proposal is divided.
    """

    one_folder: float
    typical: float
    typical_size: float = 0.0

    @classmethod
    def of(
        cls,
        rows: sp.csr_matrix,
        labels: Sequence[FolderPath | None],
        folder_sizes: Sequence[int] | None = None,
    ) -> FolderCohesion:
        """The cohesions of the folders of ``labels`` that hold two or more filed documents.

        Parameters
        ----------
        rows : sparse matrix of shape (n_docs, n_terms)
            Unit rows of every document.
        labels : sequence of FolderPath or None, length n_docs
            Folder of each filed document; None for a new one.
        folder_sizes : sequence of int, optional
            Documents filed in each of the person's folders, where ``labels`` holds only a
            sample of them (the service's dendrogram takes 8 exemplars per folder); by
            default the counts of ``labels``.
        """
        docs: dict[FolderPath, list[int]] = {}
        for i, folder in enumerate(labels):
            if folder is not None:
                docs.setdefault(folder, []).append(i)
        values = [cohesion(rows, d) for d in docs.values() if len(d) >= 2]
        if not values:
            return cls(np.inf, np.inf)
        low, median = np.percentile(values, [25, 50])
        sizes = [len(d) for d in docs.values()] if folder_sizes is None else list(folder_sizes)
        return cls(float(low), float(median), float(np.median(sizes)) if sizes else 0.0)


def folder_like_parts(
    rows: sp.csr_matrix, members: Sequence[int], folders: FolderCohesion, min_size: int
) -> list[tuple[int, ...]]:
    """Disjoint groups of ``members`` that are each like a typical folder of the person's.

    The groups are the maximal subtrees of the members' own average-linkage dendrogram
    (cosine on ``rows``) with at least ``min_size`` documents and either a cohesion of at
    least ``folders.typical`` or at most ``folders.typical_size`` documents, searched
    top-down. Members in no such subtree belong to the proposal itself.

    Parameters
    ----------
    rows : sparse matrix of shape (n_docs, n_terms)
        Unit rows of every document.
    members : sequence of int
        The proposal's documents (rows of ``rows``).
    folders : FolderCohesion
        How cohesive the person's folders are.
    min_size : int
        Fewest documents of a part (the smallest proposal).

    Returns
    -------
    list of tuple of int
        Two or more parts, each sorted; empty when the proposal is one folder: it is as
        cohesive as a quarter of the person's folders (``folders.one_folder``), holds
        fewer than ``2 * min_size`` documents, or fewer than two of its subtrees qualify.
    """
    docs = np.array(sorted(members), dtype=np.intp)
    m = docs.size
    if m < 2 * min_size or cohesion(rows, docs) >= folders.one_folder:
        return []
    Z = cosine_average_linkage(rows[docs])
    children = {m + k: (int(Z[k, 0]), int(Z[k, 1])) for k in range(m - 1)}
    # Size and sum of cosines over the distinct pairs of every subtree, bottom-up: average
    # linkage merges at the mean distance of the pairs it joins (001 sec. 3), so a merge
    # adds |a| |b| (1 - height) to the sum. Linear in m, where summing rows per subtree
    # was quadratic on an unbalanced dendrogram.
    size = np.ones(2 * m - 1)
    pair_sum = np.zeros(2 * m - 1)
    for k, (a, b) in enumerate(Z[:, :2].astype(np.intp)):
        size[m + k] = size[a] + size[b]
        pair_sum[m + k] = pair_sum[a] + pair_sum[b] + size[a] * size[b] * (1.0 - Z[k, 2])

    def leaves(v: int) -> tuple[int, ...]:
        out, stack = [], [v]
        while stack:
            u = stack.pop()
            if u < m:
                out.append(int(docs[u]))
            else:
                stack.extend(children[u])
        return tuple(sorted(out))

    parts: list[tuple[int, ...]] = []
    stack = list(children[2 * m - 2])
    while stack:
        v = stack.pop()
        if size[v] < min_size:
            continue
        if (
            size[v] <= folders.typical_size
            or pair_sum[v] / (size[v] * (size[v] - 1) / 2) >= folders.typical
        ):
            parts.append(leaves(v))
        elif v >= m:
            stack.extend(children[v])
    return parts if len(parts) >= 2 else []
