"""The classifier two-sample test of a folder's shown new documents against its filed ones
(``foldwise.core.placement._unlike_filed``)."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_topics import topic_corpus

from foldwise.core.placement._unlike_filed import _tail, unlike_filed

FOOTBALL, GOLF = ("sport", "football"), ("sport", "golf")


def _filed(truth, seed, hidden=(), share=0.6):
    """Which documents are filed: ``share`` of every folder but the ``hidden`` ones, drawn
    at random, as the service benchmark splits a corpus."""
    rng = np.random.default_rng(seed)
    filed = np.zeros(len(truth), dtype=bool)
    for folder in sorted(set(truth) - set(hidden)):
        docs = [i for i, t in enumerate(truth) if t == folder]
        filed[rng.choice(docs, round(share * len(docs)), replace=False)] = True
    return filed


def _split(seed, per_folder=30):
    """Every folder's documents, 60% of them filed; the rest new and shown in their own
    folder, golf's (none filed) shown in football."""
    X, _, truth = topic_corpus(seed=seed, per_folder=per_folder)
    filed = _filed(truth, seed, hidden=[GOLF])
    new = np.flatnonzero(~filed)
    shown = [FOOTBALL if truth[i] == GOLF else truth[i] for i in new]
    filed_folders = [truth[i] for i in np.flatnonzero(filed)]
    return X[new], shown, X[filed], filed_folders, [truth[i] for i in new]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_hidden_sibling_shown_in_a_folder_is_told_from_its_filed_documents(seed):
    new_rows, shown, filed_rows, filed_folders, truth = _split(seed)
    found = unlike_filed(new_rows, shown, filed_rows, filed_folders)
    assert list(found) == [FOOTBALL]
    flagged = [truth[i] for i in found[FOOTBALL]]
    assert flagged.count(GOLF) >= 0.8 * truth.count(GOLF)
    # An ordinary new document lies above every filed one of its half about once in ten.
    assert flagged.count(FOOTBALL) <= 3


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_new_documents_like_the_filed_ones_flag_no_folder(seed):
    """Golf filed like every other folder: each folder's new documents are a random part
    of it, and no folder is flagged (the hypergeometric test at .05 over all folders)."""
    X, _, truth = topic_corpus(seed=seed, per_folder=30)
    filed = _filed(truth, seed)
    new = np.flatnonzero(~filed)
    found = unlike_filed(
        X[new], [truth[i] for i in new], X[filed], [truth[i] for i in np.flatnonzero(filed)]
    )
    assert found == {}


def test_folders_with_few_new_documents_are_not_tested():
    new_rows, shown, filed_rows, filed_folders, _ = _split(0)
    assert unlike_filed(new_rows, shown, filed_rows, filed_folders, min_size=100) == {}


def test_the_tail_is_hypergeometric():
    """Hand-computed: r = 1 of 3 filed scores; 2 of 3 new scores above the top filed one.
    All six exchangeable, the top two are both new with chance 3/6 * 2/5."""
    p, above = _tail(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 0.0]), 0.05)
    assert above.tolist() == [0, 1]
    assert p == pytest.approx(0.2)
    # A share of .5 of 5 filed scores: the 3rd highest (3.0) is the threshold, and k = 2
    # or more new above it when the top 4 hold at most 2 filed, that is both new ones:
    # C(5,2) C(2,2) / C(7,4).
    p, above = _tail(np.arange(1.0, 6.0), np.array([3.5, 9.0]), 0.5)
    assert above.tolist() == [0, 1]
    assert p == pytest.approx(10 / 35)


def test_small_folders_lack_the_power():
    """Nine filed documents per folder: the test rarely finds the sibling (module
    docstring); what it flags is still the sibling's."""
    new_rows, shown, filed_rows, filed_folders, truth = _split(0, per_folder=15)
    found = unlike_filed(new_rows, shown, filed_rows, filed_folders)
    assert all(truth[i] == GOLF for rows in found.values() for i in rows)


def test_invalid_inputs_raise():
    new_rows, shown, filed_rows, filed_folders, _ = _split(0)
    with pytest.raises(ValueError, match="level"):
        unlike_filed(new_rows, shown, filed_rows, filed_folders, level=0.0)
    with pytest.raises(ValueError, match="alpha"):
        unlike_filed(new_rows, shown, filed_rows, filed_folders, alpha=1.0)
    with pytest.raises(ValueError, match="one folder per row"):
        unlike_filed(new_rows, shown[:-1], filed_rows, filed_folders)
