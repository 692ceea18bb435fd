"""Proposal search internals on hand-made rows (``core/placement/_proposals.py``)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from foldwise.core.placement._levels import FolderTree
from foldwise.core.placement._proposal_groups import Group, SearchContext
from foldwise.core.placement._proposals import _merge


def _context(
    rows: np.ndarray, labels: list[tuple[str, ...] | None], weights: np.ndarray | None = None
) -> SearchContext:
    """What ``_merge`` reads: unit rows under the term ``weights`` (all 1 if omitted) and
    without them, and the labeled documents' sums per folder of both."""
    plain = sp.csr_matrix(normalize(rows))
    Xw = plain if weights is None else sp.csr_matrix(normalize(rows * np.sqrt(weights)))
    folders = sorted({f for f in labels if f is not None})

    def sums(M: sp.csr_matrix) -> np.ndarray:
        return np.asarray(
            np.vstack([M[[i for i, f in enumerate(labels) if f == g]].sum(axis=0) for g in folders])
        )

    n = Xw.shape[0]
    labeled = np.array([f is not None for f in labels])
    return SearchContext(
        Xw=Xw,
        plain=plain,
        labeled=labeled,
        proba=np.zeros((n, len(folders))),
        placed=None,  # type: ignore[arg-type]  # not read by _merge
        folders=folders,
        rho=0.5,
        label_sums=sums(Xw),
        plain_label_sums=sums(plain),
        label_counts=np.array([labels.count(g) for g in folders], dtype=float),
        label_folders=folders,
        baseline=np.zeros(len(folders)),
        tree=FolderTree(folders),
        children={},
        n=n,
        novel=~labeled,
        open_set=np.zeros(n, dtype=bool),
        not_ordinary=np.ones(n, dtype=bool),
    )


def _group(members: tuple[int, ...], parent: tuple[str, ...]) -> Group:
    return Group(members, parent, cohesion=0.0, affinity=0.0)


def _one_topic_beside_two_folders() -> SearchContext:
    """Two filed folders a/x and b/y on terms 0-1 (rows 0-5); six new documents of one new
    topic on terms 2-3 (rows 6-11)."""
    rng = np.random.default_rng(0)
    filed = np.zeros((6, 4))
    filed[:3, 0] = 1.0
    filed[3:, 1] = 1.0
    topic = np.zeros((6, 4))
    topic[:, 2:] = 1.0 + 0.1 * rng.random((6, 2))
    return _context(np.vstack([filed, topic]), [("a", "x")] * 3 + [("b", "y")] * 3 + [None] * 6)


def test_pieces_of_one_topic_are_joined_under_their_parents_common_ancestor():
    # The topic found as two pieces whose parents the search judged differently.
    ctx = _one_topic_beside_two_folders()
    pieces = [_group((6, 7, 8), ("a",)), _group((9, 10, 11), ())]
    joined = _merge(ctx, pieces, min_size=3)
    assert len(joined) == 1
    assert sorted(joined[0].members) == list(range(6, 12))
    assert joined[0].parent == ()
    assert [p.parent for p in joined[0].parts] == [("a",), ()]


def test_pieces_closer_to_a_folder_than_to_each_other_stay_apart():
    # Each piece is a new document set right beside a different filed folder.
    rows = np.zeros((12, 4))
    rows[:3, 0] = 1.0
    rows[3:6, 1] = 1.0
    rows[6:9, 0] = 1.0
    rows[6:9, 2] = 0.3
    rows[9:, 1] = 1.0
    rows[9:, 3] = 0.3
    ctx = _context(rows, [("a",)] * 3 + [("b",)] * 3 + [None] * 6)
    pieces = [_group((6, 7, 8), ("a",)), _group((9, 10, 11), ("b",))]
    groups = _merge(ctx, pieces, min_size=3)
    assert [g.members for g in groups] == [(6, 7, 8), (9, 10, 11)]


def test_pieces_under_two_parents_too_small_to_be_proposals_stay_apart():
    # The same pieces, each smaller than a proposal: under one parent they are joined,
    # under two they are not.
    ctx = _one_topic_beside_two_folders()
    apart = [_group((6, 7, 8), ("a",)), _group((9, 10, 11), ())]
    assert len(_merge(ctx, apart, min_size=5)) == 2
    together = [_group((6, 7, 8), ("a",)), _group((9, 10, 11), ("a",))]
    assert len(_merge(ctx, together, min_size=5)) == 1


def test_pieces_are_judged_on_the_plain_rows():
    """Two pieces of a new topic share its own words (terms 2-3), which no filed folder
    needed: learned weights put 0 on them. Under the weights each piece looks like the folder
    it borrows a word from (a: term 0, b: term 1) and the two stay apart; on the plain rows
    they are one topic and are joined."""
    rows = np.zeros((12, 4))
    rows[:3, 0] = 1.0
    rows[3:6, 1] = 1.0
    rows[6:, 2:] = 1.0
    rows[6:9, 0] = 0.3
    rows[9:, 1] = 0.3
    labels = [("a",)] * 3 + [("b",)] * 3 + [None] * 6
    weights = np.array([2.0, 2.0, 0.0, 0.0])  # sum = n_terms (000 eq. 3)
    pieces = [_group((6, 7, 8), ()), _group((9, 10, 11), ())]
    # Under the weights alone, as before: apart.
    blind = _context(rows * np.sqrt(weights), labels)
    assert len(_merge(blind, pieces, min_size=3)) == 2
    (joined,) = _merge(_context(rows, labels, weights), pieces, min_size=3)
    assert sorted(joined.members) == list(range(6, 12))
    # Its cohesion and affinity stay the weighted ones, as every group's: each piece is
    # one word under the weights, orthogonal to the other.
    assert joined.cohesion < 0.5
