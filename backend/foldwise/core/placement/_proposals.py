"""Finding proposed folders in a dendrogram (001 Fig. 1, docs/architecture.md sec. 6).

A proposal is a group of new documents that

- no existing folder claims: the placement model is not confident of any of them in a single
  existing folder (so proposals never contradict confident placements), or their
  neighbourhood is new (``_novelty``); pages of one kind from many folders, which leave
  the classifier unsure but have an ordinary neighbourhood, stay out;
- is a new topic: its *cohesion* (average weighted cosine between its documents) exceeds its
  *affinity* to every existing folder (average weighted cosine to that folder's labeled
  documents), so average linkage would make it a cluster of its own;
- is a maximal dendrogram subtree with (almost) no labeled documents, searched top-down.

Refinements (001 Fig. 1 nodes B, C) are searched afterwards among the remaining new
documents: a sub-topic of a folder F that the model files confidently in F becomes a proposed
subfolder of F when it is a cluster of its own and less like F than anything the person filed
in F (:func:`_refinements`).

Documents whose neighbourhood is new but that the dendrogram scattered among a folder's
filed documents (a hidden sibling of that folder) are clustered again on their own, and so
are new documents that the model shows in a folder and a classifier tells from that folder's
filed ones (``_unlike_filed``), and documents whose neighbourhoods are each only somewhat
unusual but together far beyond chance (``_regroup``).

Pieces of one topic that a stray document separated in the dendrogram are joined when they
are closer to each other than to any existing folder. A proposal less cohesive than
three quarters of the person's folders is divided into subfolders where its documents form
groups as cohesive as their median, or no larger than it (``_subfolders``): the person's
granularity decides how fine proposals get, not a constant.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._levels import Placement, assign_folder_levels, folder_tree
from foldwise.core.placement._novelty import ALPHA
from foldwise.core.placement._proposal_groups import (
    CLASSIFIER_PATH_LEVEL,
    MIN_PIECE,
    Group,
    SearchContext,
    common_prefix,
    posterior_parent,
    with_members,
)
from foldwise.core.placement._regroup import (
    regroup_open_set,
    regroup_unusual,
    unlike_filed_siblings,
)
from foldwise.core.placement._subfolders import FolderCohesion, cohesion_of, folder_like_parts

#: Two proposals are "the same" when they share at least this share of the smaller one's
#: members (``same_proposal``): a rejected group is not proposed again, and a document taken
#: out of a proposal stays out of its successors.
SAME_PROPOSAL_OVERLAP = 0.5


def find_proposals(
    Z: NDArray[np.float64],
    Xw: sp.csr_matrix,
    labels: Sequence[FolderPath | None],
    proba: NDArray[np.float64],
    placed: Placement,
    folders: list[FolderPath],
    rho: float,
    min_size: int,
    max_labeled_share: float,
    novel: NDArray[np.bool_] | None = None,
    refinements: bool = False,
    neighbourhood_p: NDArray[np.float64] | None = None,
    plain: sp.csr_matrix | None = None,
    unlike_filed: Mapping[FolderPath, Sequence[int]] | None = None,
    folder_sizes: Sequence[int] | None = None,
    shown_before: NDArray[np.bool_] | None = None,
) -> list[Group]:
    """Proposed folders, each a :class:`Group` with its parent folder.

    Parameters
    ----------
    Z : ndarray of shape (n_docs - 1, 4)
        Linkage matrix over all documents.
    Xw : sparse matrix of shape (n_docs, n_terms)
        Unit rows under the learned term weights.
    labels : sequence of FolderPath or None, length n_docs
    proba : ndarray of shape (n_docs, n_folders)
        Folder posteriors of the new documents (rows of labeled documents unused).
    placed : Placement
        Level assignment of every document (003 eq. 9).
    folders : list of FolderPath
        The placement model's folders, in column order of ``proba``.
    rho : float
        Level-assignment threshold.
    min_size, max_labeled_share
        See :func:`foldwise.core.extended_tree`.
    novel : ndarray of shape (n_docs,), bool, optional
        New documents that may join a new-topic proposal (all, if omitted).
    refinements : bool
        Also look for subfolders of confidently claimed documents (``_refinements``).
    neighbourhood_p : ndarray of shape (n_docs,), float, optional
        The neighbourhood test of the new documents (``neighbourhood_p_values``; rows of
        labeled documents unused). At most ``ALPHA``, a document may join a proposal
        whatever the classifier says; above ``CLASSIFIER_PATH_LEVEL``, the classifier's
        tests alone cannot let it in (:meth:`SearchContext.unclaimed`). Without it, the
        classifier's tests decide alone.
    plain : sparse matrix of shape (n_docs, n_terms'), optional
        Unit rows of the documents without the learned term weights, where a proposal is
        divided into subfolders (``_subfolders``); ``Xw`` if omitted.
    unlike_filed : mapping of FolderPath to sequence of int, optional
        Per existing folder, the new documents shown there that are unlike its filed ones
        (``_unlike_filed.unlike_filed``, as rows of ``Xw``): candidates for a proposed
        sibling of that folder (:func:`unlike_filed_siblings`).
    folder_sizes : sequence of int, optional
        Documents the person filed in each folder, where ``labels`` holds a sample of them:
        how large a part of a divided proposal may be (``FolderCohesion``).
    shown_before : ndarray of shape (n_docs,), bool, optional
        New documents the previous tree showed in an existing folder: only the tests of
        single documents may take them into a proposal, not that of a group
        (:func:`regroup_unusual`).
    """
    n = Xw.shape[0]
    if n < 2:
        return []
    p_values = None if neighbourhood_p is None else np.asarray(neighbourhood_p, dtype=float)
    labeled = np.array([f is not None for f in labels])
    col = {f: j for j, f in enumerate(folders)}
    rows = [i for i, f in enumerate(labels) if f is not None]
    cols = [col[f] for f in labels if f is not None]
    Y = sp.csr_matrix((np.ones(len(rows)), (cols, rows)), shape=(len(folders), n))
    plain_rows = Xw if plain is None else sp.csr_matrix(plain)
    label_sums = np.asarray((Y @ Xw).todense())
    label_counts = np.asarray(Y.sum(axis=1)).ravel()
    keep = label_counts > 0
    new = ~labeled
    ctx = SearchContext(
        Xw=Xw,
        plain=plain_rows,
        labeled=labeled,
        proba=proba,
        placed=placed,
        folders=folders,
        rho=rho,
        label_sums=label_sums[keep],
        plain_label_sums=np.asarray((Y[keep] @ plain_rows).todense()),
        label_counts=label_counts[keep],
        label_folders=[f for f, k in zip(folders, keep, strict=True) if k],
        # What the model says of a new document on average: a group shows evidence for a
        # subtree only where it puts more mass there than this.
        baseline=proba[new].mean(axis=0) if new.any() else np.zeros(len(folders)),
        tree=folder_tree(tuple(tuple(f) for f in folders)),
        children={n + k: (int(Z[k, 0]), int(Z[k, 1])) for k in range(n - 1)},
        n=n,
        novel=np.ones(n, dtype=bool) if novel is None else np.asarray(novel, dtype=bool),
        open_set=np.zeros(n, dtype=bool) if p_values is None else p_values <= ALPHA,
        not_ordinary=_not_ordinary(p_values, labeled),
        neighbourhood_p=p_values,
        shown_before=None if shown_before is None else np.asarray(shown_before, dtype=bool),
    )
    groups = _search(ctx, Z, labels, max_labeled_share)
    groups = _absorb(ctx, _merge(ctx, groups, min_size))
    groups = groups + regroup_open_set(ctx, {d for g in groups for d in g.members})
    taken = {d for g in groups for d in g.members}
    groups = _merge(ctx, groups + unlike_filed_siblings(ctx, unlike_filed or {}, taken), min_size)
    groups = [g for g in groups if len(g.members) >= min_size]
    folder_cohesion = FolderCohesion.of(ctx.plain, labels, folder_sizes)
    # Only now: the pieces too small to be proposals have let their documents go.
    unusual = regroup_unusual(
        ctx, {d for g in groups for d in g.members}, folder_cohesion, min_size
    )
    if unusual:
        groups = _merge(ctx, groups + unusual, min_size)
    groups = [_divide(ctx, _prune(g, min_size), folder_cohesion, min_size) for g in groups]
    taken = {d for g in groups for d in g.members}
    if not refinements:
        return groups
    return groups + _refinements(ctx, labels, taken, max_labeled_share, min_size)


def _not_ordinary(
    p_values: NDArray[np.float64] | None, labeled: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """New documents whose neighbourhood is newer than three quarters of the filed
    documents' (``CLASSIFIER_PATH_LEVEL``), shape (n_docs,).

    Every document when there is no test, or when not one new document passes it: then
    the test has nothing to say. That happens when filed folders are smaller than the
    neighbourhoods (a new archive of a few documents per folder, and an upload of one new
    topic): the filed documents' neighbourhoods are then full of the new ones, and a new
    topic cannot stand out. The classifier decides alone, as it did before the test.
    """
    n = labeled.size
    if p_values is None:
        return np.ones(n, dtype=bool)
    passed = p_values <= CLASSIFIER_PATH_LEVEL
    if not passed[~labeled].any():
        return np.ones(n, dtype=bool)
    return passed


def _refinements(
    ctx: SearchContext,
    labels: Sequence[FolderPath | None],
    taken: set[int],
    share: float,
    min_size: int,
) -> list[Group]:
    """Proposed subfolders that refine an existing folder (001 Fig. 1 nodes B, C).

    The search above only takes documents no folder claims, and never proposes inside a leaf
    folder. A sub-topic of a folder F the person has not filed yet is claimed by F: the
    model files (some of) its documents confidently there. Such a group is a maximal
    dendrogram subtree made of (almost) only new documents, at least ``min_size``, where

    - the group's mean posterior, level-assigned (003 eq. 9), reaches F below the root: F is
      the folder it refines. Only documents whose confident folder is F or an ancestor of F
      join it: a document the model is sure of elsewhere (also in a subfolder of F) stays;
    - it is a cluster of its own: its cohesion exceeds its affinity to every existing
      folder and to F's whole subtree (the test every proposal passes);
    - it is less like F than anything the person filed in F: its affinity to F's labeled
      documents is below the lowest average cosine of one of those documents to the others.

    The last test keeps ordinary new documents of F in F, however tight the dendrogram makes
    a handful of them: documents of F's topic resemble F's filed documents about as much as
    those resemble each other, so their average falls below the least typical filed
    document's only by chance, and an average over ``min_size`` documents or more varies
    less than one document's. It compares the group with the person's own filing of F, not
    with a constant; F needs two labeled documents for it.
    """
    n = ctx.n
    free = np.array([not ctx.labeled[d] and d not in taken for d in range(n)])
    typical_of: dict[FolderPath, tuple[NDArray[np.float64], int, float]] = {}

    def typical(home: FolderPath) -> tuple[NDArray[np.float64], int, float]:
        """Row sum and count of the labeled documents of ``home``'s subtree, and the lowest
        average cosine of one of them to the others (-inf for fewer than two)."""
        if home not in typical_of:
            docs = [i for i, f in enumerate(labels) if f is not None and f[: len(home)] == home]
            s = ctx.sum_of(docs) if docs else np.zeros(ctx.Xw.shape[1])
            low = -np.inf
            if len(docs) >= 2:
                own = np.asarray(ctx.Xw[docs] @ s).ravel() - 1.0
                low = float(own.min() / (len(docs) - 1))
            typical_of[home] = (s, len(docs), low)
        return typical_of[home]

    def refine(leaves: list[int], candidates: list[int]) -> Group | None:
        mean = ctx.proba[candidates].mean(axis=0, keepdims=True)
        home = assign_folder_levels(mean, ctx.folders, ctx.rho).folder[0]
        if not home:
            return None
        members = [
            d for d in candidates if home[: len(ctx.placed.folder[d])] == ctx.placed.folder[d]
        ]
        if len(members) < min_size or len(members) < (1.0 - share) * len(leaves):
            return None
        home_sum, home_count, least = typical(home)
        s, m = ctx.sum_of(members), len(members)
        cohesion = cohesion_of(s, m)
        to_home = float(home_sum @ s) / (home_count * m)
        affinity = max(ctx.affinity(s, m), to_home)
        if cohesion > affinity and to_home < least:
            return Group(tuple(members), home, cohesion, affinity, refines=True)
        return None

    # Free documents and all documents below each dendrogram node, bottom-up.
    n_free = np.zeros(2 * n - 1)
    size = np.ones(2 * n - 1)
    n_free[:n] = free
    for k in range(n - 1):
        a, b = ctx.children[n + k]
        n_free[n + k] = n_free[a] + n_free[b]
        size[n + k] = size[a] + size[b]

    groups: list[Group] = []
    stack = [2 * n - 2]
    while stack:
        v = stack.pop()
        if n_free[v] < min_size:
            continue
        group = None
        if n_free[v] >= (1.0 - share) * size[v]:
            leaves = ctx.leaves(v)
            group = refine(leaves, [d for d in leaves if free[d]])
        if group is not None:
            groups.append(group)
        elif v >= n:
            stack.extend(ctx.children[v])
    return groups


def _prune(group: Group, min_size: int) -> Group:
    """Keep joined pieces as subfolders only if at least two are big enough to be folders."""
    parts = tuple(_prune(p, min_size) for p in group.parts if len(p.members) >= min_size)
    if len(parts) < 2:
        parts = ()
    return Group(group.members, group.parent, group.cohesion, group.affinity, parts)


def _search(
    ctx: SearchContext, Z: NDArray[np.float64], labels: Sequence[FolderPath | None], share: float
) -> list[Group]:
    """Maximal qualifying dendrogram subtrees, top-down."""
    n = ctx.n
    n_lab = np.zeros(2 * n - 1)
    size = np.ones(2 * n - 1)
    n_lab[:n] = ctx.labeled
    # Deepest folder holding every labeled document of each node (None: none there).
    lca: list[FolderPath | None] = [labels[i] for i in range(n)] + [None] * (n - 1)
    up = np.full(2 * n - 1, -1, dtype=np.intp)
    for k in range(n - 1):
        a, b = ctx.children[n + k]
        n_lab[n + k] = n_lab[a] + n_lab[b]
        size[n + k] = size[a] + size[b]
        up[a] = up[b] = n + k
        la, lb = lca[a], lca[b]
        lca[n + k] = lb if la is None else la if lb is None else common_prefix(la, lb)

    def anchor(v: int) -> FolderPath:
        """The folder of the labeled documents met first going up from v (docs/architecture.md
        sec. 6)."""
        while up[v] >= 0:
            a, b = ctx.children[int(up[v])]
            other = lca[b if a == v else a]
            if other is not None:
                return other
            v = int(up[v])
        return ()

    groups: list[Group] = []
    stack = [2 * n - 2]
    while stack:
        v = stack.pop()
        if size[v] - n_lab[v] < MIN_PIECE:
            continue
        group = None
        if n_lab[v] <= share * size[v]:
            group = _qualify(ctx, v, anchor(v))
        if group is not None:
            groups.append(group)
        elif v >= n:
            stack.extend(ctx.children[v])
    return groups


def _qualify(ctx: SearchContext, v: int, anchor: FolderPath) -> Group | None:
    """The proposal dendrogram node ``v`` makes, or None if it holds no new topic."""
    members = np.array(
        [d for d in ctx.leaves(v) if ctx.unclaimed(d)],
        dtype=np.intp,
    )
    if members.size < MIN_PIECE:
        return None
    s = ctx.sum_of(members)
    m = members.size
    cohesion = cohesion_of(s, m)
    affinity = ctx.affinity(s, m)
    if cohesion <= affinity:
        return None
    # Where the group belongs: as deep as two witnesses agree. One is the level assignment
    # (003 eq. 9) of the group's mean posterior, counting only mass above what an average
    # new document puts there (a document of an unseen topic spreads its posterior, so big
    # subtrees collect mass without evidence). The other is the dendrogram: the folder of
    # the labeled documents the group meets first (docs/architecture.md sec. 6).
    parent = common_prefix(posterior_parent(ctx, members), anchor)
    return Group(tuple(int(d) for d in members), parent, cohesion, affinity)


def _merge(ctx: SearchContext, groups: list[Group], min_size: int) -> list[Group]:
    """Join pieces that are closer to each other than to any folder.

    The top-down search stops at the first subtree that qualifies, so one topic can come out
    in pieces when a stray document sits between them in the dendrogram. Two pieces are
    joined when the average cosine between them exceeds the affinity of their union to
    every existing folder, the test that made each a proposal. The pieces are kept as parts.

    Pieces whose parents differ are joined too, under the deepest folder both parents lie
    in, when each is big enough to be a proposal (``min_size``): each piece's parent is
    where two witnesses (posterior and dendrogram) agreed for that piece, and the union
    keeps what holds for both. Requiring one parent kept the hidden C API manual of
    python-docs in two proposals, one under the root and one under "extending and
    embedding", though the two were closer to each other (.187) than their union to any
    folder (.115). Smaller pieces under two parents stay apart: on the PHP manual two such
    handfuls of class-overview pages from four extensions made a false proposal together
    (docs/placement.md, "Pieces under two parents").

    Both cosines are taken on the plain rows, not under the learned weights: pieces of one
    new topic share its own words, which no filed folder needed and the weights played down
    (docs/placement.md, "Subfolders of a proposal"). The joined group's cohesion and
    affinity are the weighted ones, as every group's.
    """
    plain = [ctx.sum_of(g.members, plain=True) for g in groups]
    sums = [ctx.sum_of(g.members) for g in groups]
    groups = list(groups)
    while True:
        candidates = []
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                if groups[a].parent != groups[b].parent and (
                    min(len(groups[a].members), len(groups[b].members)) < min_size
                ):
                    continue
                size = len(groups[a].members) * len(groups[b].members)
                candidates.append((float(plain[a] @ plain[b]) / size, a, b))
        for cross, a, b in sorted(candidates, reverse=True):
            m = len(groups[a].members) + len(groups[b].members)
            if cross > ctx.affinity(plain[a] + plain[b], m, plain=True):
                ga, gb = groups[a], groups[b]
                s = sums[a] + sums[b]
                joined = Group(
                    ga.members + gb.members,
                    common_prefix(ga.parent, gb.parent),
                    cohesion_of(s, m),
                    ctx.affinity(s, m),
                    parts=(ga.parts or (ga,)) + (gb.parts or (gb,)),
                )
                kept = [k for k in range(len(groups)) if k not in (a, b)]
                groups = [groups[k] for k in kept] + [joined]
                sums = [sums[k] for k in kept] + [s]
                plain = [plain[k] for k in kept] + [plain[a] + plain[b]]
                break
        else:
            return groups


def _absorb(ctx: SearchContext, groups: list[Group]) -> list[Group]:
    """Add new documents the dendrogram left elsewhere to the proposal they are closest to.

    A document no existing folder claims joins the proposal whose documents it is most
    similar to on average, if that beats its average similarity to every existing folder's
    documents (the test a proposal passes, applied to one document) and is at least that of
    the proposal's weakest member to the others. A stray document between pieces in the
    dendrogram is what keeps such documents out of the search.
    """
    taken = {d for g in groups for d in g.members}
    free = [d for d in range(ctx.n) if ctx.unclaimed(d) and d not in taken]
    if not free or not groups:
        return groups
    sums = np.vstack([ctx.sum_of(g.members) for g in groups])
    sizes = np.array([len(g.members) for g in groups], dtype=np.float64)
    rows = ctx.Xw[free]
    to_group = np.asarray(rows @ sums.T) / sizes
    to_folder = ctx.row_affinities(rows)
    # A proposal's weakest member: the lowest average similarity of one member to the others.
    weakest = np.array([ctx.to_others(g.members).min() for g in groups])
    best = to_group.argmax(axis=1)
    extra: dict[int, list[int]] = {}
    for d, g, sim, other in zip(free, best, to_group.max(axis=1), to_folder, strict=True):
        if sim > other and sim >= weakest[g]:
            extra.setdefault(int(g), []).append(d)
    return [
        with_members(ctx, g, g.members + tuple(extra[k])) if k in extra else g
        for k, g in enumerate(groups)
    ]


def _divide(ctx: SearchContext, group: Group, folders: FolderCohesion, min_size: int) -> Group:
    """``group`` with proposed subfolders where it holds groups as cohesive as the person's
    folders (``_subfolders.folder_like_parts``). Pieces joined by ``_merge`` stay its parts,
    each divided in turn."""
    if group.parts:
        return replace(group, parts=tuple(_divide(ctx, p, folders, min_size) for p in group.parts))
    parts = []
    for docs in folder_like_parts(ctx.plain, group.members, folders, min_size):
        s, m = ctx.sum_of(docs), len(docs)
        parts.append(Group(docs, group.parent, cohesion_of(s, m), ctx.affinity(s, m)))
    return replace(group, parts=tuple(parts))


def same_proposal(a: Collection[int], b: Collection[int]) -> bool:
    """Whether member sets ``a`` and ``b`` are one proposal: they share at least
    ``SAME_PROPOSAL_OVERLAP`` of the smaller one's members."""
    a, b = set(a), set(b)
    return bool(a and b) and len(a & b) >= SAME_PROPOSAL_OVERLAP * min(len(a), len(b))


def honour_critiques(
    groups: list[Group],
    rejected: Sequence[Collection[int]],
    taken_out: Sequence[tuple[int, Collection[int]]],
) -> list[Group]:
    """``groups`` as the person's critiques of earlier proposals allow (docs/placement.md,
    "Critiques that stick").

    A group that is the same proposal as one the person rejected (``same_proposal``) is
    dropped: its documents are placed in existing folders like any other. A document the
    person took out of a proposal ("doesn't belong here") leaves every group that is the same
    proposal as that one. A group left without documents is dropped.
    """
    out = []
    for group in groups:
        members = set(group.members)
        if any(same_proposal(members, r) for r in rejected):
            continue
        drop = {d for d, source in taken_out if d in members and same_proposal(members, source)}
        kept = _without(group, drop) if drop else group
        if kept is not None:
            out.append(kept)
    return out


def _without(group: Group, drop: set[int]) -> Group | None:
    members = tuple(d for d in group.members if d not in drop)
    if not members:
        return None
    parts = tuple(p for p in (_without(p, drop) for p in group.parts) if p is not None)
    return replace(group, members=members, parts=parts)
