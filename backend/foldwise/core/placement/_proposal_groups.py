"""The groups the proposal search builds and what each of its steps reads
(``_proposals``, ``_regroup``; docs/placement.md, "Extended tree").

A :class:`Group` is a set of new documents proposed as one folder under a parent folder. A
:class:`SearchContext` holds the rows, posteriors and tests of one call of
``find_proposals``, with the cosines every step takes: a group's cohesion (average cosine
between its documents) and its affinity to each existing folder (average cosine to that
folder's labeled documents).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._levels import FolderTree, Placement
from foldwise.core.placement._subfolders import cohesion_of

# Smallest group that may be a piece of a proposal: the cohesion of a pair is one cosine,
# too noisy to call a topic.
MIN_PIECE = 3


@dataclass(frozen=True)
class Group:
    """New documents proposed as one folder, with proposed subfolders in ``parts``."""

    members: tuple[int, ...]
    parent: FolderPath
    cohesion: float
    affinity: float
    parts: tuple[Group, ...] = ()
    # A subfolder refining ``parent`` whose documents the model files there (001 Fig. 1 B, C).
    refines: bool = False


#: A new document joins a proposal only if the novelty model gives it less than this
#: probability of belonging to an existing folder: a document that more likely belongs to
#: one of the person's folders is left to the placement (a known document pulled into a
#: proposal is a wrong placement for the person). Service benchmark, docs/placement.md.
NOVELTY_GATE = 0.5

#: A document whose neighbourhood is new still stays out of proposals when the novelty model
#: gives it at least this probability of belonging to an existing folder (on the PHP manual,
#: 10 instead of 13-15 known documents per run in proposals, the hidden ones as before).
OPEN_SET_GATE = 0.9

#: A document the classifier rejects still stays out of proposals when its neighbourhood is
#: no newer than that of a quarter of the filed documents (neighbourhood p-value above
#: this). Pages of one kind from many folders (setup pages, indexes of guides) leave the
#: classifier unsure of their folder, but their nearest neighbours are filed pages of the
#: same kind, as often as any filed page's are. A document of a new topic finds new
#: documents near it (on the PHP manual, 0-9 known documents per run in proposals instead
#: of 2-33, the hidden folders found as before; docs/placement.md, "Open set").
CLASSIFIER_PATH_LEVEL = 0.25


@dataclass
class SearchContext:
    """What every step of the search reads; built once per call."""

    Xw: sp.csr_matrix
    #: Unit rows without the learned term weights: where a proposal divides (``_subfolders``).
    plain: sp.csr_matrix
    labeled: NDArray[np.bool_]
    proba: NDArray[np.float64]
    placed: Placement
    folders: list[FolderPath]
    rho: float
    label_sums: NDArray[np.float64]
    #: The same sums on the plain rows.
    plain_label_sums: NDArray[np.float64]
    label_counts: NDArray[np.float64]
    #: The folder of each row of ``label_sums``.
    label_folders: list[FolderPath]
    baseline: NDArray[np.float64]
    tree: FolderTree
    children: dict[int, tuple[int, int]]
    n: int
    #: New documents the placement model rejects (may join a new-topic proposal).
    novel: NDArray[np.bool_]
    #: New documents whose nearest neighbours are unusually often new (``_novelty``).
    open_set: NDArray[np.bool_]
    #: New documents whose nearest neighbours are new at least as often as those of all but
    #: a quarter of the filed documents (every document when there is no such test).
    not_ordinary: NDArray[np.bool_]
    #: The neighbourhood test's p-value of each document (rows of labeled ones unused); None
    #: where there is no test.
    neighbourhood_p: NDArray[np.float64] | None = None
    #: New documents the previous tree showed in an existing folder (none: no previous tree).
    shown_before: NDArray[np.bool_] | None = None

    def unclaimed(self, d: int) -> bool:
        """Whether new document ``d`` may join a proposal.

        Either its neighbourhood says so (``open_set``: its nearest neighbours are new
        documents more often than a filed document's are) and the novelty model is not
        all but sure it belongs to an existing folder (``known < OPEN_SET_GATE``); or the
        classifier says so: no folder claims it (posterior of its best folder, times
        ``known``, below ``rho``), the novelty model does not think it belongs to an
        existing folder (``known < NOVELTY_GATE``), and the placement model rejects it
        (``novel``: ``FolderPlacement.is_novel``), while its neighbourhood is not an
        ordinary one (``not_ordinary``: ``CLASSIFIER_PATH_LEVEL``). The classifier alone
        kept out most documents of hidden folders that resemble a known one
        (docs/placement.md, "Open set").
        """
        if self.labeled[d]:
            return False
        if self.open_set[d] and self.placed.known[d] < OPEN_SET_GATE:
            return True
        return (
            bool(self.not_ordinary[d])
            and self.placed.best_confidence[d] < self.rho
            and self.placed.known[d] < NOVELTY_GATE
            and bool(self.novel[d])
        )

    def leaves(self, v: int) -> list[int]:
        out, stack = [], [v]
        while stack:
            u = stack.pop()
            if u < self.n:
                out.append(u)
            else:
                stack.extend(self.children[u])
        return out

    def sum_of(
        self, docs: Sequence[int] | NDArray[np.intp], plain: bool = False
    ) -> NDArray[np.float64]:
        """Row sum of ``docs`` under the weights (or on the plain rows)."""
        rows = self.plain if plain else self.Xw
        return np.asarray(rows[list(docs)].sum(axis=0)).ravel()

    def to_others(self, docs: Sequence[int] | NDArray[np.intp]) -> NDArray[np.float64]:
        """Average cosine of each of ``docs`` (two or more) to the others, shape (len(docs),)."""
        inner = np.asarray(self.Xw[list(docs)] @ self.sum_of(docs)).ravel() - 1.0
        return inner / (len(docs) - 1)

    def like_each_other(self, docs: NDArray[np.intp]) -> NDArray[np.intp]:
        """Those of ``docs`` (two or more) more like the others on average than like any
        existing folder's documents: a document of another topic among them is not."""
        return docs[self.to_others(docs) > self.row_affinities(self.Xw[docs])]

    def affinities(
        self, s: NDArray[np.float64], m: int, plain: bool = False
    ) -> NDArray[np.float64]:
        """Average cosine of m documents (row sum s) to each existing folder's documents,
        shape (n_folders_with_labels,), in the order of ``label_folders``."""
        sums = self.plain_label_sums if plain else self.label_sums
        return np.asarray(sums @ s / (self.label_counts * m))

    def row_affinities(self, rows: sp.csr_matrix) -> NDArray[np.float64]:
        """Highest average cosine of each of ``rows`` to an existing folder's documents,
        shape (n_rows,); 0 without labeled documents."""
        if not self.label_counts.size:
            return np.zeros(rows.shape[0])
        return np.asarray((rows @ self.label_sums.T) / self.label_counts).max(axis=1)

    def affinity(self, s: NDArray[np.float64], m: int, plain: bool = False) -> float:
        """Highest average cosine of m documents (row sum s) to an existing folder's documents."""
        if not self.label_counts.size:
            return 0.0
        return float(np.max(self.affinities(s, m, plain)))


def own_cluster(ctx: SearchContext, docs: NDArray[np.intp]) -> Group | None:
    """``docs`` as a group where they are a cluster of their own (cohesion above their
    affinity to every existing folder), under the folder two witnesses agree on: their
    posterior and the folder they are most like (its parent may be the root)."""
    s, k = ctx.sum_of(docs), docs.size
    cohesion = cohesion_of(s, k)
    to_folders = ctx.affinities(s, k)
    j = int(to_folders.argmax())
    if cohesion <= to_folders[j]:
        return None
    parent = common_prefix(posterior_parent(ctx, docs), ctx.label_folders[j])
    return Group(tuple(int(d) for d in docs), parent, cohesion, float(to_folders[j]))


def posterior_parent(ctx: SearchContext, members: NDArray[np.intp]) -> FolderPath:
    """The deepest folder with subfolders that the level assignment (003 eq. 9) of the
    members' mean posterior reaches, counting only mass above both ``rho`` and what an
    average new document puts there (``baseline``)."""
    tree = ctx.tree
    mass = tree.subtree @ ctx.proba[members].mean(axis=0)
    base = tree.subtree @ ctx.baseline
    node = 0
    while tree.children[node]:
        best = max(tree.children[node], key=lambda c: mass[c])
        # Never into a folder without subfolders: a new topic there would be a refinement
        # of it, which only the dendrogram anchor may suggest.
        if not tree.children[best] or mass[best] <= max(ctx.rho, base[best]):
            break
        node = best
    return tree.paths[node]


def with_members(ctx: SearchContext, group: Group, members: tuple[int, ...]) -> Group:
    """``group`` holding ``members``; added documents go to the part they are closest to."""
    added = [d for d in members if d not in set(group.members)]
    parts = list(group.parts)
    if parts and added:
        sums = np.vstack([ctx.sum_of(p.members) for p in parts])
        sizes = np.array([len(p.members) for p in parts], dtype=np.float64)
        nearest = (np.asarray(ctx.Xw[added] @ sums.T) / sizes).argmax(axis=1)
        for k in range(len(parts)):
            mine = tuple(d for d, j in zip(added, nearest, strict=True) if j == k)
            if mine:
                parts[k] = with_members(ctx, parts[k], parts[k].members + mine)
    s, m = ctx.sum_of(members), len(members)
    return Group(
        members,
        group.parent,
        cohesion_of(s, m),
        ctx.affinity(s, m),
        tuple(parts),
    )


def common_prefix(a: FolderPath, b: FolderPath) -> FolderPath:
    """Deepest common ancestor-or-self of two folder paths."""
    d = 0
    while d < min(len(a), len(b)) and a[d] == b[d]:
        d += 1
    return a[:d]
