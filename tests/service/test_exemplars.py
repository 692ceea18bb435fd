"""Exemplars per folder in the dendrogram: the settings' 6 + 2, fewer once folders are many
(``ReclusterSettings.max_exemplars``), so that biHAC's cost stops growing with folders."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.recluster_input import exemplar_counts, load_inputs

from .recluster_support import fast_options, seed_user

FOUR_FOLDERS = [
    "python-howtos",
    "the-python-tutorial",
    "what-s-new-in-python",
    "the-python-standard-library/data-types",
]


@pytest.mark.parametrize(
    ("folders", "counts"),
    [
        (10, {(6, 2): 10}),
        (1000, {(6, 2): 1000}),
        (1001, {(6, 2): 993, (5, 2): 8}),
        (2000, {(3, 1): 2000}),
        (2001, {(3, 1): 1997, (2, 1): 4}),
        (3000, {(2, 1): 2000, (2, 0): 1000}),
        (5000, {(2, 0): 5000}),
    ],
)
def test_folders_share_the_exemplar_budget(folders, counts):
    per_folder = exemplar_counts(list(range(folders)), fast_options())
    assert Counter(per_folder.values()) == counts
    assert sum(map(sum, per_folder.values())) == max(min(8000, 8 * folders), 2 * folders)
    # The oldest folders (lowest ids) keep the larger share.
    assert sum(per_folder[0]) == max(sum(c) for c in per_folder.values())


def test_a_new_folder_past_the_budget_takes_exemplars_from_a_few_folders():
    before = exemplar_counts(list(range(1000)), fast_options())
    after = exemplar_counts(list(range(1001)), fast_options())
    changed = [f for f in before if after[f] != before[f]]
    # The new folder's 7 come from 7 folders, one each, not from all 1,000.
    assert changed == list(range(993, 1000))
    assert after[1000] == (5, 2)
    assert sum(map(sum, after.values())) == sum(map(sum, before.values())) == 8000


def test_exemplar_counts_never_exceed_the_settings():
    options = fast_options(exemplars_nearest=1, exemplars_random=0, max_exemplars=10)
    assert set(exemplar_counts(list(range(50)), options).values()) == {(1, 0)}


def test_a_recluster_takes_fewer_exemplars_of_each_folder_when_folders_are_many(
    sqlite_settings: Settings,
) -> None:
    # 4 folders x 8 would be 32 exemplars; at most 12: 3 each, 2 nearest and 1 at random.
    rt = app_runtime(sqlite_settings, fast_options(max_exemplars=12))
    try:
        alice = seed_user(rt, "alice", filed=dict.fromkeys(FOUR_FOLDERS, 12), new={})
        with rt.sessions() as session:
            inputs = load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
    finally:
        rt.close()
    per_folder = Counter(f for f in inputs.folder_of if f is not None)
    assert sorted(per_folder.values()) == [3, 3, 3, 3]
    assert inputs.stats["placement_training"] == 48  # the classifier sees them all


def test_filing_in_one_folder_leaves_the_other_folders_exemplars(
    sqlite_settings: Settings,
) -> None:
    first = "python-howtos"  # its documents come first, so its draws came first
    rt = app_runtime(sqlite_settings, fast_options(max_exemplars=12))

    def exemplars() -> dict[int, set[int]]:
        with rt.sessions() as session:
            inputs = load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
        out: dict[int, set[int]] = {}
        for doc, folder in zip(inputs.doc_ids, inputs.folder_of, strict=True):
            if folder is not None:
                out.setdefault(folder, set()).add(doc)
        return out

    try:
        alice = seed_user(rt, "alice", filed=dict.fromkeys(FOUR_FOLDERS, 12), new={first: 5})
        before = exemplars()
        with rt.sessions() as session:
            target = session.scalar(
                select(Folder.id).where(Folder.user_id == alice["user_id"], Folder.name == first)
            )
            for doc_id in alice["new"][first]:
                session.get(Document, doc_id).folder_id = target
            session.commit()
        after = exemplars()
    finally:
        rt.close()
    assert set(before) == set(after)
    others = [f for f in before if f != target]
    assert len(others) == 3
    assert all(after[f] == before[f] for f in others)
