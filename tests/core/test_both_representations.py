"""The "latent+plain+nb" representation: latent's and plain's models side by side, their
decisions summed (docs/placement.md, "Both representations at once")."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_topics import topic_corpus

from foldwise.core import CrossValidated, FolderPlacement, add_folders
from foldwise.core.placement._representation import both_right, led_choice
from foldwise.core.placement._suggest import term_contributions

BOTH = "latent+plain+nb"


def _fits() -> tuple:
    """Rows, labels (60% of the documents of overlapping topics) and the fits of
    "latent+nb", "plain+nb" and their sum."""
    X, _, truth = topic_corpus(seed=3, per_folder=20, own=1, parent=4, common=6)
    rng = np.random.default_rng(0)
    labels = [t if rng.random() < 0.6 else None for t in truth]
    latent, plain, both = (
        FolderPlacement(representation=r).fit(X, labels) for r in ("latent+nb", "plain+nb", BOTH)
    )
    return X, labels, latent, plain, both


def test_its_decisions_are_the_sum_of_latent_nb_and_plain_nbs_and_it_round_trips():
    X, labels, latent, plain, both = _fits()
    n_terms = X.shape[1]
    assert both.representation_ == BOTH
    # Latent's block, then plain's: each as its own model fitted it.
    assert both.coef_.shape[1] == latent.coef_.shape[1] + n_terms
    np.testing.assert_allclose(both.components_, latent.components_)
    np.testing.assert_allclose(both.term_weights_, latent.term_weights_)
    np.testing.assert_allclose(both.plain_weights_, plain.term_weights_)
    np.testing.assert_allclose(
        both.decision_function(X),
        latent.decision_function(X) + plain.decision_function(X),
        atol=1e-9,
    )
    again = FolderPlacement.from_arrays(both.to_arrays())
    assert again.representation_ == BOTH
    np.testing.assert_allclose(again.predict_proba(X), both.predict_proba(X))
    # A later fit may reuse its cross-validated state, and fits both blocks again.
    state = CrossValidated.from_arrays(both.cross_validated_state().to_arrays())
    reused = FolderPlacement(cross_validated=state).fit(X, labels)
    assert reused.cross_validated_reused_ and reused.representation_ == BOTH
    np.testing.assert_allclose(reused.coef_, both.coef_)
    # An archive whose plain block does not fit its representation is refused.
    arrays = both.to_arrays()
    arrays["representation_"] = np.frombuffer(b"latent+nb", dtype=np.uint8)
    arrays["representation_offsets"] = np.array([0, 9])
    with pytest.raises(ValueError, match="plain_weights_"):
        FolderPlacement.from_arrays(arrays)


def test_term_contributions_of_both_blocks_add_up_to_the_decision_value():
    X, _, _, _, both = _fits()
    D = both.decision_function(X)
    best = D.argmax(axis=1)
    total = np.asarray(term_contributions(both, X, best).sum(axis=1)).ravel()
    np.testing.assert_allclose(total, D[np.arange(X.shape[0]), best] - both.intercept_[best])


def test_a_new_folder_gets_an_svm_on_each_block():
    X, labels, latent, plain, both = _fits()
    moved = [i for i, f in enumerate(labels) if f is not None][:6]
    relabeled = list(labels)
    for i in moved:
        relabeled[i] = ("new",)
    with_new = {m.representation_: add_folders(m, X, relabeled) for m in (latent, plain, both)}
    column = with_new[BOTH].folders_.index(("new",))
    # Without the naive Bayes term (a new folder's SVM alone): the sum of the two blocks'.
    np.testing.assert_allclose(
        with_new[BOTH].decision_function(X)[:, column],
        with_new["latent+nb"].decision_function(X)[:, column]
        + with_new["plain+nb"].decision_function(X)[:, column],
        atol=1e-9,
    )
    # Fitted on the moved documents: they score above the others there.
    D = with_new[BOTH].decision_function(X)[:, column]
    others = np.setdiff1d(np.arange(X.shape[0]), moved)
    assert D[moved].min() > np.median(D[others])


def test_the_sums_are_scored_fold_by_fold_and_taken_on_a_lead():
    y = np.array([0, 1, 0, 1, 0, 1])
    fold = np.array([0, 0, 1, 1, 2, 2])
    hidden = np.array([False, False, False, False, False, True])
    # Fold 0: each part alone gets one of two right, their sum both; fold 1 unscorable.
    latent = [np.array([[1.0, 0.0], [0.6, 0.5]]), None, np.array([[2.0, 0.0]])]
    plain = [np.array([[0.2, 0.4], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), None]
    parts = {"latent+nb": latent, "plain+nb": plain}
    right, into = both_right(parts, fold, [0, 1, 2], hidden, y)
    np.testing.assert_array_equal(right, [True, True, False, False, False, False])
    np.testing.assert_allclose(into[0], latent[0] + plain[0])
    assert into[1] is None and into[2] is None
    # Taken where it leads by more than a standard deviation on ten or more documents;
    # once taken it stays unless the choice alone leads by as much.
    ahead = np.array([True] * 20 + [False] * 10 + [True] * 50)
    behind = np.array([False] * 20 + [True] * 10 + [True] * 50)
    assert led_choice({BOTH: ahead, "latent": behind}, None, "latent", BOTH) == BOTH
    close = {BOTH: ahead[7:], "latent": behind[7:]}
    assert led_choice(close, None, "latent", BOTH) == "latent"
    assert led_choice(close, BOTH, "latent", BOTH) == BOTH


def test_a_fit_after_both_compares_the_representations_afresh():
    X, labels, _, _, _ = _fits()
    model = FolderPlacement(previous_representation=BOTH).fit(X, labels)
    assert model.representation_ in ("latent", "plain", "plain+nb", "latent+nb", BOTH)
