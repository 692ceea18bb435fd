"""neighbourhood_novelty: new documents whose nearest neighbours are new more often than a
filed document's are (the open-set test of proposals, docs/placement.md "Open set")."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import normalize
from synthetic_topics import topic_corpus

from foldwise.core import neighbourhood_novelty, neighbourhood_p_values


def _split(seed: int, hidden: tuple[str, ...], filed_share: float, per_folder: int = 20):
    """Filed and new rows of the synthetic corpus: ``hidden`` has no filed document, every
    other folder ``filed_share`` of its documents filed."""
    X, _, truth = topic_corpus(seed=seed, per_folder=per_folder)
    rng = np.random.default_rng(seed)
    filed, new = [], []
    for i, t in enumerate(truth):
        (new if t == hidden or rng.random() >= filed_share else filed).append(i)
    is_hidden = np.array([truth[i] == hidden for i in new])
    return X[filed], X[new], is_hidden


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_documents_of_an_unfiled_topic_are_novel_and_the_others_are_not(seed):
    filed, new, is_hidden = _split(seed, ("music",), filed_share=0.6)
    novel = neighbourhood_novelty(new, filed)
    assert novel[is_hidden].mean() >= 0.8
    assert novel[~is_hidden].mean() <= 0.05


def test_a_sibling_topic_the_classifier_would_claim_is_still_found():
    """golf shares the sport terms with football and tennis, but its documents are each
    other's nearest neighbours."""
    filed, new, is_hidden = _split(0, ("sport", "golf"), filed_share=0.6)
    novel = neighbourhood_novelty(new, filed)
    assert novel[is_hidden].mean() >= 0.6
    assert novel[~is_hidden].mean() <= 0.05


def test_the_yardstick_is_the_share_of_new_documents():
    """When most documents are new, a known document's neighbours are mostly new too: the
    filed documents' neighbourhoods look the same, so that alone is not novelty."""
    filed, new, is_hidden = _split(1, ("music",), filed_share=0.15)
    novel = neighbourhood_novelty(new, filed)
    assert novel[~is_hidden].mean() <= 0.05


@pytest.mark.parametrize("seed", [0, 1])
def test_a_sample_of_a_large_archive_still_separates_the_unfiled_topic(seed):
    """Many filed documents per new one (an archive): neighbours looked for among a quarter
    of the filed documents (``max_filed``) still find the hidden topic and only it."""
    filed, new, is_hidden = _split(seed, ("music",), filed_share=0.95, per_folder=100)
    quarter = filed.shape[0] // 4
    sampled = neighbourhood_p_values(new, filed, max_filed=quarter)
    assert (sampled[is_hidden] <= 0.02).mean() >= 0.8
    assert (sampled[~is_hidden] <= 0.02).mean() <= 0.05
    everything = neighbourhood_p_values(new, filed, max_filed=None)
    assert not np.array_equal(sampled, everything)  # the sample was taken
    # At or under the cap nothing is sampled: the same draws as without one.
    at_cap = neighbourhood_p_values(new, filed, max_filed=filed.shape[0])
    np.testing.assert_array_equal(at_cap, everything)


def test_p_values_match_a_brute_force_count_and_the_test_is_p_below_alpha():
    """Oracle: for each document, the share of filed documents with at least as many new
    documents among their k nearest (cosine, itself excluded), counted with a dense sort."""
    filed, new, _ = _split(0, ("music",), filed_share=0.6)
    # A little noise: without ties in the similarities the k nearest are one set.
    rng = np.random.default_rng(0)
    filed = filed.toarray() + 0.01 * rng.random(filed.shape)
    new = new.toarray() + 0.01 * rng.random(new.shape)
    k = 5
    pool = normalize(np.vstack([filed, new]))
    is_new = np.arange(pool.shape[0]) >= filed.shape[0]
    S = pool @ pool.T
    np.fill_diagonal(S, -np.inf)
    counts = is_new[np.argsort(-S, axis=1, kind="stable")[:, :k]].sum(axis=1)
    expected = [(counts[~is_new] >= c).mean() for c in counts[is_new]]

    p = neighbourhood_p_values(new, filed, k=k)
    np.testing.assert_allclose(p, expected)
    np.testing.assert_array_equal(neighbourhood_novelty(new, filed, k=k, alpha=0.1), p <= 0.1)
    assert neighbourhood_p_values(new, filed[:0]).tolist() == [1.0] * new.shape[0]


def test_nothing_to_compare_gives_no_novelty():
    X, _, _ = topic_corpus(seed=0)
    assert neighbourhood_novelty(X[:5], X[:0]).tolist() == [False] * 5
    assert neighbourhood_novelty(X[:0], X).shape == (0,)
    # Fewer documents than k: k shrinks to what there is.
    assert neighbourhood_novelty(X[:2], X[2:4]).shape == (2,)


def test_dense_and_unnormalised_rows_give_the_same_answer():
    filed, new, _ = _split(2, ("music",), filed_share=0.6)
    sparse = neighbourhood_novelty(new, filed)
    dense = neighbourhood_novelty(3.0 * new.toarray(), sp.csr_matrix(normalize(filed)) * 7.0)
    np.testing.assert_array_equal(sparse, dense)


@pytest.mark.parametrize(
    "kwargs", [{"alpha": 0.0}, {"alpha": 1.0}, {"k": 0}, {"k": 2.5}, {"max_filed": 0}], ids=str
)
def test_bad_parameters_are_refused(kwargs):
    X, _, _ = topic_corpus(seed=0)
    with pytest.raises(ValueError):
        neighbourhood_novelty(X[:5], X[5:], **kwargs)


def test_rows_of_different_widths_are_refused():
    X, _, _ = topic_corpus(seed=0)
    with pytest.raises(ValueError, match="columns"):
        neighbourhood_novelty(X[:5, :10], X[5:])


def test_an_open_set_document_may_join_a_proposal_that_the_classifier_gates_keep_out():
    """find_proposals: with the classifier's rejection (``novel``) switched off for every
    document, the hidden topic is proposed only through the neighbourhood test."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import pdist
    from synthetic_topics import label_some

    from foldwise.core import FolderPlacement
    from foldwise.core.placement._levels import assign_folder_levels
    from foldwise.core.placement._proposals import find_proposals

    X, _, truth = topic_corpus(seed=0)
    labels = label_some(truth, 8, {("music",)}, seed=0)
    model = FolderPlacement().fit(X, labels)
    proba = model.predict_proba(X)
    placed = assign_folder_levels(proba, model.folders_, model.rho, known=model.known_proba(X))
    Z = linkage(pdist(X.toarray(), "cosine"), "average")
    filed = np.array([f is not None for f in labels])
    new = ~filed
    p_values = np.ones(len(truth))
    p_values[new] = neighbourhood_p_values(X[new], X[filed])
    hidden = {i for i, t in enumerate(truth) if t == ("music",)}

    def proposed(neighbourhood_p):
        groups = find_proposals(
            Z, X, labels, proba, placed, model.folders_, model.rho, 5, 0.1,
            novel=np.zeros(len(truth), dtype=bool), neighbourhood_p=neighbourhood_p,
        )  # fmt: skip
        return {d for g in groups for d in g.members}

    assert proposed(None) == set()
    found = proposed(p_values)
    assert len(found & hidden) >= 0.8 * len(hidden)
    assert found <= hidden
