"""Exemplars per folder in the dendrogram: the settings' 6 + 2, fewer once folders are many
(``ReclusterSettings.max_exemplars``), so that biHAC's cost stops growing with folders."""

from __future__ import annotations

from collections import Counter

import pytest

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.recluster import core_adapter

from .recluster_support import fast_options, seed_user


@pytest.mark.parametrize(
    ("folders", "expected"),
    [(10, (6, 2)), (1000, (6, 2)), (1001, (5, 2)), (2000, (3, 1)), (3000, (2, 0)), (10**6, (2, 0))],
)
def test_exemplar_counts_shrink_past_the_budget(folders, expected):
    counts = core_adapter.exemplar_counts(folders, fast_options())
    assert counts == expected
    assert folders * sum(counts) <= max(8000, 2 * folders)


def test_exemplar_counts_never_exceed_the_settings():
    options = fast_options(exemplars_nearest=1, exemplars_random=0, max_exemplars=10)
    assert core_adapter.exemplar_counts(50, options) == (1, 0)


def test_a_recluster_takes_fewer_exemplars_of_each_folder_when_folders_are_many(
    sqlite_settings: Settings,
) -> None:
    folders = [
        "python-howtos",
        "the-python-tutorial",
        "what-s-new-in-python",
        "the-python-standard-library/data-types",
    ]
    # 4 folders x 8 would be 32 exemplars; at most 12: 3 each, 2 nearest and 1 at random.
    rt = app_runtime(sqlite_settings, fast_options(max_exemplars=12))
    try:
        alice = seed_user(rt, "alice", filed=dict.fromkeys(folders, 12), new={})
        with rt.sessions() as session:
            inputs = core_adapter.load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
    finally:
        rt.close()
    per_folder = Counter(f for f in inputs.folder_of if f is not None)
    assert sorted(per_folder.values()) == [3, 3, 3, 3]
    assert inputs.stats["placement_training"] == 48  # the classifier sees them all
