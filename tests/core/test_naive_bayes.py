"""The complement naive Bayes term beside the plain SVMs ("plain+nb", docs/placement.md)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import ComplementNB
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC
from synthetic_topics import topic_corpus

from foldwise.core import CrossValidated, FolderPlacement
from foldwise.core.placement import _naive_bayes
from foldwise.core.placement import _representation as representation_module
from foldwise.core.placement._representation import naive_bayes_choice


def _rows(seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(4), 15)
    counts = rng.poisson(0.3, size=(y.size, 40)).astype(float)
    counts[np.arange(y.size), 10 * y + rng.integers(0, 10, y.size)] += 2  # each class's terms
    return sp.csr_matrix(normalize(counts)), y


def test_the_term_is_complement_naive_bayes_centred_and_scaled_to_the_svms_spread(monkeypatch):
    F, y = _rows()
    weight = np.linspace(0.5, 2.0, y.size)
    svm = LinearSVC(random_state=0).fit(F, y)
    present = np.arange(4)
    added = _naive_bayes.naive_bayes_term(
        F, y, present, svm.coef_, svm.intercept_, sample_weight=weight
    )
    # Oracle: scikit-learn's complement naive Bayes on the same weighted rows.
    nb = ComplementNB(alpha=_naive_bayes.NB_ALPHA).fit(F, y, sample_weight=weight)
    centred = nb.feature_log_prob_ - nb.feature_log_prob_.mean(axis=0)
    # A positive multiple of its log weights, centred over folders:
    scale = added.ravel() @ centred.ravel() / (centred.ravel() @ centred.ravel())
    assert scale > 0
    np.testing.assert_allclose(added, scale * centred, atol=1e-12)
    bayes = np.asarray(F @ added.T)
    # ... so each document's values keep their mean, and alone they rank as naive Bayes does,
    np.testing.assert_allclose(bayes.sum(axis=1), 0, atol=1e-9)
    np.testing.assert_array_equal(bayes.argmax(axis=1), nb.predict(F))
    # ... and they spread NB_WEIGHT times as much as the SVMs' (each row centred).
    svm_values = np.asarray(F @ svm.coef_.T) + svm.intercept_
    svm_values -= svm_values.mean(axis=1, keepdims=True)
    assert bayes.std() == pytest.approx(_naive_bayes.NB_WEIGHT * svm_values.std())
    # Where there are many training rows the spread is measured on evenly spaced ones:
    # the same weights, scaled a little differently.
    whole = _naive_bayes.naive_bayes_term(F, y, present, svm.coef_, svm.intercept_)
    monkeypatch.setattr(_naive_bayes, "MAX_SPREAD_ROWS", 20)
    sampled = _naive_bayes.naive_bayes_term(F, y, present, svm.coef_, svm.intercept_)
    ratio = sampled.ravel() @ whole.ravel() / (whole.ravel() @ whole.ravel())
    np.testing.assert_allclose(sampled, ratio * whole, atol=1e-12)
    assert ratio == pytest.approx(1.0, abs=0.3) and ratio != 1.0
    with pytest.raises(ValueError, match="sorted folders"):
        _naive_bayes.naive_bayes_term(F, y, np.arange(3), svm.coef_[:3], svm.intercept_[:3])


@pytest.mark.parametrize("chosen", ["plain", "latent"])
def test_the_term_is_added_where_it_leads_and_stays_unless_the_representation_alone_leads(
    chosen,
):
    twenty = np.array([True] * 20 + [False] * 10 + [True] * 50)
    ten = np.array([False] * 20 + [True] * 10 + [True] * 50)
    with_term = chosen + "+nb"
    other = {"plain": "latent", "latent": "plain"}[chosen]
    # 20 wins against 10 losses: beyond one standard deviation (sqrt(30) = 5.5).
    assert naive_bayes_choice({with_term: twenty, chosen: ten}, None, chosen) == with_term
    assert naive_bayes_choice({with_term: twenty, chosen: ten}, other, chosen) == with_term
    # 13 against 10 is within it: the representation alone stays, and so does a previous
    # choice of the term, but not the other representation's.
    close = {with_term: twenty[7:], chosen: ten[7:]}
    assert naive_bayes_choice(close, None, chosen) == chosen
    assert naive_bayes_choice(close, with_term, chosen) == with_term
    assert naive_bayes_choice(close, other + "+nb", chosen) == chosen
    # A previous choice of the term gives way to a clear lead without it.
    assert naive_bayes_choice({with_term: ten, chosen: twenty}, with_term, chosen) == chosen
    # Fewer than ten documents placed differently are no evidence: what stands stays.
    few = representation_module.MIN_DIFFERENT_FOR_TERM - 1
    lead = {with_term: np.arange(few + 5) < few, chosen: np.zeros(few + 5, dtype=bool)}
    assert naive_bayes_choice(lead, None, chosen) == chosen
    assert (
        naive_bayes_choice({with_term: lead[chosen], chosen: lead[with_term]}, with_term, chosen)
        == with_term
    )
    lead[with_term][few] = True  # one more: ten, all for the term
    assert naive_bayes_choice(lead, None, chosen) == with_term


def _fits(representation: str) -> tuple[sp.csr_matrix, list, FolderPlacement, FolderPlacement]:
    """Rows, labels (60% of the documents of overlapping topics) and the fits of
    ``representation`` without and with the naive Bayes term."""
    X, _, truth = topic_corpus(seed=3, per_folder=20, own=1, parent=4, common=6)
    rng = np.random.default_rng(0)
    labels = [t if rng.random() < 0.6 else None for t in truth]
    alone = FolderPlacement(representation=representation).fit(X, labels)
    with_nb = FolderPlacement(representation=representation + "+nb").fit(X, labels)
    return X, labels, alone, with_nb


def test_a_plain_nb_model_is_the_plain_one_with_the_term_and_round_trips():
    X, labels, plain, with_nb = _fits("plain")
    assert with_nb.representation_ == "plain+nb"
    np.testing.assert_array_equal(plain.intercept_, with_nb.intercept_)
    assert not np.allclose(plain.coef_, with_nb.coef_)
    # The term's part of each folder's coefficients sums to zero over the folders.
    np.testing.assert_allclose((with_nb.coef_ - plain.coef_).sum(axis=0), 0, atol=1e-9)
    again = FolderPlacement.from_arrays(with_nb.to_arrays())
    assert again.representation_ == "plain+nb"
    np.testing.assert_allclose(again.decision_function(X), with_nb.decision_function(X))
    state = CrossValidated.from_arrays(with_nb.cross_validated_state().to_arrays())
    assert state.representation == "plain+nb"
    # A later fit may reuse that state, and keeps the term in its final SVMs.
    reused = FolderPlacement(cross_validated=state).fit(X, labels)
    assert reused.cross_validated_reused_ and reused.representation_ == "plain+nb"
    np.testing.assert_allclose(reused.coef_, with_nb.coef_)
    arrays = with_nb.cross_validated_state().to_arrays()
    arrays["representation_"] = np.frombuffer(b"dense", dtype=np.uint8)
    arrays["representation_offsets"] = np.array([0, 5])
    with pytest.raises(ValueError, match="unknown representation"):
        CrossValidated.from_arrays(arrays)
    with pytest.raises(ValueError, match="representation"):
        FolderPlacement(representation="plain+svm").fit(X, labels)


def test_a_latent_nb_model_adds_the_term_to_the_tf_idf_columns_only():
    X, _, latent, with_nb = _fits("latent")
    n_terms = X.shape[1]
    assert with_nb.components_.shape == latent.components_.shape
    assert with_nb.coef_.shape == latent.coef_.shape and latent.coef_.shape[1] > n_terms
    added = with_nb.coef_ - latent.coef_
    np.testing.assert_array_equal(added[:, n_terms:], 0)  # the LSA coordinates' weights
    assert np.abs(added[:, :n_terms]).max() > 0
    np.testing.assert_allclose(added.sum(axis=0), 0, atol=1e-9)
    again = FolderPlacement.from_arrays(with_nb.to_arrays())
    assert again.representation_ == "latent+nb"
    np.testing.assert_allclose(again.decision_function(X), with_nb.decision_function(X))
