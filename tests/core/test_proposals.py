"""Proposal search internals on hand-made rows (``core/placement/_proposals.py``)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from foldwise.core.placement._levels import FolderTree
from foldwise.core.placement._proposals import Group, _Context, _merge


def _context(rows: np.ndarray, labels: list[tuple[str, ...] | None]) -> _Context:
    """What ``_merge`` reads: unit rows and the labeled documents' sums per folder."""
    Xw = sp.csr_matrix(normalize(rows))
    folders = sorted({f for f in labels if f is not None})
    sums = np.vstack([Xw[[i for i, f in enumerate(labels) if f == g]].sum(axis=0) for g in folders])
    n = Xw.shape[0]
    labeled = np.array([f is not None for f in labels])
    return _Context(
        Xw=Xw,
        plain=Xw,
        labeled=labeled,
        proba=np.zeros((n, len(folders))),
        placed=None,  # type: ignore[arg-type]  # not read by _merge
        folders=folders,
        rho=0.5,
        label_sums=np.asarray(sums),
        plain_label_sums=np.asarray(sums),
        label_counts=np.array([labels.count(g) for g in folders], dtype=float),
        label_folders=folders,
        baseline=np.zeros(len(folders)),
        tree=FolderTree(folders),
        children={},
        n=n,
        novel=~labeled,
        open_set=np.zeros(n, dtype=bool),
        not_ordinary=np.ones(n, dtype=bool),
        new_neighbourhood=np.zeros(n, dtype=bool),
    )


def _group(members: tuple[int, ...], parent: tuple[str, ...]) -> Group:
    return Group(members, parent, cohesion=0.0, affinity=0.0)


def _one_topic_beside_two_folders() -> _Context:
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
