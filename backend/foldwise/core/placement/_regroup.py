"""Proposals the first dendrogram misses: new documents clustered again on their own
(docs/placement.md, "Open set", "Unlike what the person filed", "Neighbourhoods new
together").

The dendrogram over all documents may scatter the documents of a new topic among the filed
documents of the folders they resemble. Three steps of ``find_proposals`` look for such
topics among chosen new documents alone: those whose neighbourhood is new one by one
(:func:`regroup_open_set`), those whose neighbourhoods are new together
(:func:`regroup_unusual`), and those a classifier tells from the filed documents of the
folder they are shown in (:func:`unlike_filed_siblings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.cluster.hierarchy import leaves_list
from scipy.stats import chi2

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._proposal_groups import (
    CLASSIFIER_PATH_LEVEL,
    MIN_PIECE,
    NOVELTY_GATE,
    Group,
    SearchContext,
    own_cluster,
    with_members,
)
from foldwise.core.placement._subfolders import (
    FolderCohesion,
    cohesion_of,
    cosine_average_linkage,
)

#: Level of the test that a group's neighbourhoods are new together (``regroup_unusual``),
#: over all the subtrees it looks at.
GROUP_ALPHA = 0.01


def regroup_open_set(ctx: SearchContext, taken: set[int]) -> list[Group]:
    """Proposals among the open-set documents the dendrogram scattered.

    The dendrogram over all documents may join the documents of a new topic with the filed
    exemplars of a folder they resemble: the pages of a hidden sibling of a folder sit
    between that folder's filed pages, in no subtree of (almost) only new documents. Yet
    their neighbourhoods are new (``open_set``), and taken together they may be closer to
    each other than to any folder. Average linkage of those documents alone (cosine, 001
    sec. 3) gives them a dendrogram of their own, searched top-down like the first for
    maximal subtrees whose cohesion exceeds their affinity to every existing folder. (The
    documents the classifier lets in as well, with a neighbourhood newer than three quarters
    of the filed ones', put 8-12 known pages per run into proposals on a PHP manual of 347
    folders: docs/placement.md "Open set".)

    The anchor, which the first dendrogram finds in the labeled documents a group meets, is
    here the folder of highest affinity (the one average linkage would join the group with
    first). A group must share more than the root with it: documents that resemble a folder
    belong near it. A group whose parent would be the root is left out: a new topic that
    resembles no folder has a subtree of its own in the first dendrogram already, and on
    the PHP manual such groups were pages of one kind (class synopses, setup pages) drawn
    from many extensions, each filed in its own folder (docs/placement.md, "Open set").
    """
    pool = np.array(
        [d for d in range(ctx.n) if d not in taken and ctx.open_set[d] and ctx.unclaimed(d)],
        np.intp,
    )

    def qualify(docs: NDArray[np.intp]) -> Group | None:
        group = own_cluster(ctx, docs)
        return group if group is not None and group.parent else None

    return _pool_subtrees(ctx, pool, MIN_PIECE, qualify)


def regroup_unusual(
    ctx: SearchContext, taken: set[int], folders: FolderCohesion, min_size: int
) -> list[Group]:
    """Proposals among the documents whose neighbourhoods are new together, not one by one.

    A page of a hidden folder finds its siblings among its nearest neighbours, but also
    filed pages of the folders it resembles, so that alone its neighbourhood is seldom new
    enough for the open-set test (``ALPHA``). Taken together, a group of such pages is:
    members whose neighbourhoods are each unusual (newer than three quarters of the filed
    documents', ``CLASSIFIER_PATH_LEVEL``) and that the novelty model does not place in an
    existing folder (``known < NOVELTY_GATE``) are clustered on their own, and a maximal
    subtree becomes a proposal when

    - each member is more like the others than like any folder
      (``SearchContext.like_each_other``, as ``unlike_filed_siblings`` asks);
    - its members' p-values together reject "ordinary neighbourhoods" (Fisher's method on
      the p-values rescaled to the pool's level, Bonferroni over the subtrees tested, at
      ``GROUP_ALPHA``);
    - it is a cluster of its own, as every proposal is (cohesion above its affinity to
      every existing folder);
    - it is as cohesive as a quarter of the person's folders (``folders.one_folder``, on
      the plain rows): a loose heap of unusual pages is not a folder.

    Unlike ``regroup_open_set``, the group may lie under the root: a hidden subtree at the
    top of the hierarchy has no folder to sit under. A document the previous tree showed in an
    existing folder is taken out of the groups found (``shown_before``): the person has
    seen it placed, and the group test shifts with every critique (moved documents become
    filed ones, and the neighbourhoods with them); in the service benchmark a recluster
    after feedback pulled known documents into such groups. It is taken out after the
    search, not before: a pool without them changed the groups of a recluster with no new
    input. (docs/placement.md, "Neighbourhoods new together".)
    """
    p = ctx.neighbourhood_p
    if p is None or not ctx.label_counts.size:
        return []
    pool = np.array(
        [
            d
            for d in range(ctx.n)
            if d not in taken
            and not ctx.labeled[d]
            and p[d] <= CLASSIFIER_PATH_LEVEL
            and ctx.placed.known[d] < NOVELTY_GATE
        ],
        np.intp,
    )
    # Bonferroni over the subtrees the search may look at: a dendrogram of the pool has
    # one fewer than the pool's documents.
    n_tests = max(pool.size - 1, 1)

    def qualify(docs: NDArray[np.intp]) -> Group | None:
        docs = ctx.like_each_other(docs)
        if docs.size < min_size:
            return None
        rescaled = np.maximum(p[docs] / CLASSIFIER_PATH_LEVEL, np.finfo(float).tiny)
        if chi2.sf(-2.0 * np.log(rescaled).sum(), 2 * docs.size) * n_tests > GROUP_ALPHA:
            return None
        if cohesion_of(ctx.sum_of(docs, plain=True), docs.size) < folders.one_folder:
            return None
        return own_cluster(ctx, docs)

    groups = _pool_subtrees(ctx, pool, min_size, qualify)
    if ctx.shown_before is None:
        return groups
    # Found as before, then without what the previous tree showed in a folder: the search
    # itself sees the same pool at every recluster with the same input, so that its groups
    # stay put.
    kept = [(g, tuple(d for d in g.members if not ctx.shown_before[d])) for g in groups]
    return [with_members(ctx, g, members) for g, members in kept if len(members) >= min_size]


def _pool_subtrees(
    ctx: SearchContext,
    pool: NDArray[np.intp],
    smallest: int,
    qualify: Callable[[NDArray[np.intp]], Group | None],
) -> list[Group]:
    """The maximal subtrees of the average-linkage dendrogram of ``pool`` alone (cosine
    under the weights, 001 sec. 3) that ``qualify`` makes a group of, searched top-down;
    subtrees of fewer than ``smallest`` documents are not looked at."""
    if pool.size < max(smallest, MIN_PIECE) or not ctx.label_counts.size:
        return []
    Z = cosine_average_linkage(ctx.Xw[pool])
    m = pool.size
    children = {m + k: (int(Z[k, 0]), int(Z[k, 1])) for k in range(m - 1)}
    # The leaves of every subtree are a contiguous run of the dendrogram's leaf order.
    order = leaves_list(Z)
    start = np.empty(2 * m - 1, dtype=np.intp)
    start[order] = np.arange(m)
    size = np.ones(2 * m - 1, dtype=np.intp)
    for k in range(m - 1):
        a, b = children[m + k]
        start[m + k] = min(start[a], start[b])
        size[m + k] = size[a] + size[b]

    groups: list[Group] = []
    stack = [2 * m - 2]
    while stack:
        v = stack.pop()
        if size[v] < max(smallest, MIN_PIECE):
            continue
        group = qualify(np.sort(pool[order[start[v] : start[v] + size[v]]]))
        if group is not None:
            groups.append(group)
        elif v >= m:
            stack.extend(children[v])
    return groups


def unlike_filed_siblings(
    ctx: SearchContext, candidates: Mapping[FolderPath, Sequence[int]], taken: set[int]
) -> list[Group]:
    """Proposed siblings of folders whose shown new documents hold another topic.

    ``candidates`` are, per folder F, the new documents shown in F that a classifier tells
    from F's filed documents (``_unlike_filed.unlike_filed``). Besides the other topic's
    documents, now and then one of F's own new documents is flagged by chance (it lies
    above every filed document of its half in both splits). Those are not like the others:
    a flagged document stays only if its neighbourhood is not an ordinary one
    (``not_ordinary``, as on the classifier's path) and it is more like the other flagged
    ones on average than like any existing folder (``SearchContext.like_each_other``, the
    test ``_absorb`` applies to one document). What
    stays, and no other proposal took, becomes a proposal beside F (under F's parent)
    when it is a cluster of its own, as every proposal is (cohesion above its affinity to
    every existing folder; docs/placement.md, "Unlike what the person filed").
    """
    groups = []
    for folder, docs in candidates.items():
        members = np.array(sorted(d for d in docs if d not in taken and ctx.not_ordinary[d]))
        if members.size < MIN_PIECE or not ctx.label_counts.size:
            continue
        members = ctx.like_each_other(members)
        if members.size < MIN_PIECE:
            continue
        s, k = ctx.sum_of(members), members.size
        cohesion = cohesion_of(s, k)
        affinity = ctx.affinity(s, k)
        if cohesion > affinity:
            groups.append(Group(tuple(int(d) for d in members), folder[:-1], cohesion, affinity))
    return groups
