"""Proposed subfolders inside a proposal (``_subfolders``, docs/placement.md "Subfolders of a
proposal"): parts as cohesive as the person's typical folder, or no larger than it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist
from sklearn.preprocessing import normalize

from foldwise.core.placement._subfolders import (
    FolderCohesion,
    cohesion,
    cosine_average_linkage,
    folder_like_parts,
)


def _rows(vectors) -> sp.csr_matrix:
    return sp.csr_matrix(normalize(np.asarray(vectors, dtype=float)))


@pytest.mark.parametrize("m", [2, 3, 40, 130])
def test_cosine_average_linkage_is_scipys_on_cosine_distances(m):
    """Blocks of 16 rows (fewer than m, and not dividing it) give the merges and heights of
    scipy's average linkage on the full cosine distances."""
    rows = sp.csr_matrix(normalize(sp.random(m, 60, density=0.2, random_state=m)))
    oracle = linkage(pdist(rows.toarray(), "cosine"), "average")
    found = cosine_average_linkage(rows, block=16)
    assert np.array_equal(found[:, [0, 1, 3]], oracle[:, [0, 1, 3]])
    np.testing.assert_allclose(found[:, 2], oracle[:, 2], atol=1e-12)


def test_cohesion_is_the_average_cosine_of_distinct_pairs():
    rows = _rows([[1, 0], [1, 0], [0, 1]])
    # Pairs (0,1), (0,2), (1,2): cosines 1, 0, 0.
    assert cohesion(rows, [0, 1, 2]) == pytest.approx(1 / 3)
    assert cohesion(rows, [0, 1]) == pytest.approx(1.0)


def test_folder_cohesion_is_taken_over_folders_with_two_filed_documents():
    rows = _rows([[1, 0], [1, 0], [1, 0], [0, 1], [1, 0], [1, 0], [0, 1], [1, 1], [0, 1]])
    labels = [("a",), ("a",), ("b",), ("b",), ("c",), ("c",), ("c",), ("d",), None]
    # a: 1; b: 0; c: pairs 1, 0, 0 -> 1/3; d has one document, the last row none: ignored.
    folders = FolderCohesion.of(rows, labels)
    assert folders.typical == pytest.approx(1 / 3)  # the median of 0, 1/3, 1
    assert folders.one_folder == pytest.approx(1 / 6)  # the lower quartile
    alone = FolderCohesion.of(rows, [("a",), ("b",), None, None, None, None, None, None, None])
    assert alone == FolderCohesion(np.inf, np.inf, typical_size=0.0)


def test_the_typical_size_is_the_median_folder_the_person_filed():
    rows = _rows([[1, 0]] * 6)
    labels = [("a",), ("a",), ("b",), ("b",), ("b",), ("c",)]
    assert FolderCohesion.of(rows, labels).typical_size == 2.0  # median of 2, 3, 1
    # The rows may be a sample of each folder (the service's exemplars): the person's own
    # counts decide.
    assert FolderCohesion.of(rows, labels, folder_sizes=[40, 7, 12, 9]).typical_size == 10.5
    # Without two filed documents in a folder nothing is divided, whatever the sizes.
    assert FolderCohesion.of(rows, [None] * 6, folder_sizes=[9, 9]).typical_size == 0.0


def _two_topics(rng, per_topic=8, noise=0.1):
    """Rows of two topics on terms 0-4 and 5-9, with a little noise on those ten terms, and
    three more terms no topic uses."""
    out = []
    for topic in (0, 1):
        for _ in range(per_topic):
            v = np.zeros(13)
            v[:10] = rng.random(10) * noise
            v[topic * 5 : topic * 5 + 5] += 1.0
            out.append(v)
    return _rows(out)


def test_a_proposal_of_two_topics_divides_into_them():
    rows = _two_topics(np.random.default_rng(0))
    level = 0.7  # the person's folders: average cosine .7 between two of their documents
    folders = FolderCohesion(one_folder=level, typical=level)
    assert (
        cohesion(rows, range(16))
        < level
        < min(cohesion(rows, range(8)), cohesion(rows, range(8, 16)))
    )
    parts = folder_like_parts(rows, list(range(16)), folders, min_size=5)
    assert sorted(parts) == [tuple(range(8)), tuple(range(8, 16))]


def test_a_proposal_as_cohesive_as_a_typical_folder_stays_one():
    rows = _two_topics(np.random.default_rng(0))
    whole = cohesion(rows, range(16))
    # As cohesive as a quarter of the person's folders: maybe one folder, so not divided,
    # although each topic alone is as cohesive as their median.
    assert folder_like_parts(rows, list(range(16)), FolderCohesion(whole, 0.7), min_size=5) == []
    # Too few documents for two parts of min_size.
    assert folder_like_parts(rows, list(range(16)), FolderCohesion(0.7, 0.7), min_size=9) == []


def test_documents_in_no_folder_like_group_stay_in_the_proposal():
    rng = np.random.default_rng(1)
    rows = sp.vstack([_two_topics(rng), _rows(np.eye(13)[10:])]).tocsr()  # 3 strays
    parts = folder_like_parts(rows, list(range(19)), FolderCohesion(0.7, 0.7), min_size=5)
    assert sorted(parts) == [tuple(range(8)), tuple(range(8, 16))]


def _loose_topics(rng, n_topics=3, per_topic=6):
    """Rows of topics on terms 5t..5t+4 over much noise on all of them: each topic holds
    together, but less than the person's folders of ``test_a_loose_proposal...``."""
    out = []
    for topic in range(n_topics):
        for _ in range(per_topic):
            v = rng.random(5 * n_topics) * 0.9
            v[topic * 5 : topic * 5 + 5] += rng.random(5) + 0.3
            out.append(v)
    return _rows(out)


def test_a_loose_proposal_divides_into_parts_the_size_of_the_persons_folders():
    rows = _loose_topics(np.random.default_rng(0))
    topics = [tuple(range(t * 6, t * 6 + 6)) for t in range(3)]
    level = 0.95  # the person's folders are tighter than any of the topics
    assert max(cohesion(rows, t) for t in topics) < level
    # No part is as cohesive as the median folder, and no size bound: one proposal.
    assert folder_like_parts(rows, list(range(18)), FolderCohesion(level, level), min_size=5) == []
    # Folders of six documents: the proposal's own dendrogram gives parts of that size,
    # and they are the topics.
    folders = FolderCohesion(level, level, typical_size=6)
    assert sorted(folder_like_parts(rows, list(range(18)), folders, min_size=5)) == topics
    # A size bound below the smallest proposal divides nothing.
    folders = FolderCohesion(level, level, typical_size=4)
    assert folder_like_parts(rows, list(range(18)), folders, min_size=5) == []
