"""A fitted placement model taught a folder created after its fit (core ``add_folders``):
the new folder's SVM is the one a refit trains for it, every other part stays the fit's;
and rid of a folder gone since (``remove_folders``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from synthetic_topics import family_corpus

from foldwise.core import FolderPlacement, add_folders, remove_folders
from foldwise.core.placement._sampled_svm import sampled_one_vs_rest


def _labels(y: np.ndarray) -> list[tuple[str, ...]]:
    return [(f"f{c // 8}", f"c{c}") for c in y]


def test_the_new_folders_svm_is_the_one_a_refit_trains() -> None:
    """With every negative (liblinear's one-vs-rest) and the plain representation, whose
    features do not depend on the labels, the added row is the refit's row."""
    X, y = family_corpus(0, families=3, per_family=3)
    labels = _labels(y)
    new = labels[-1]
    before = [None if f == new else f for f in labels]
    fitted = FolderPlacement(representation="plain").fit(X, before)
    refit = FolderPlacement(representation="plain").fit(X, labels)

    added = add_folders(fitted, X, labels)

    assert added.folders_ == refit.folders_
    j = added.folders_.index(new)
    # The same binary problem; liblinear's shuffles differ, so equal to its tolerance.
    np.testing.assert_allclose(added.coef_[j], refit.coef_[j], atol=0.05)
    assert added.intercept_[j] == pytest.approx(refit.intercept_[j], abs=0.05)
    # Every other folder keeps the SVM, and the model the calibration, of its fit.
    others = [i for i in range(len(added.folders_)) if i != j]
    np.testing.assert_array_equal(added.coef_[others], fitted.coef_)
    np.testing.assert_array_equal(added.intercept_[others], fitted.intercept_)
    assert added.temperature_ == fitted.temperature_
    assert added.labeled_per_folder_[j] == sum(f == new for f in labels)
    assert added.cv_labeled_per_folder_[j] == 0
    assert fitted.folders_ == sorted(set(before) - {None})  # the fitted model is unchanged


def test_a_sampled_class_is_fitted_alone_as_among_all() -> None:
    X, y = family_corpus(1)
    every = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200)
    only = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200, only=np.array([5, 30]))
    assert only[2].tolist() == [5, 30]
    np.testing.assert_allclose(only[0], every[0][[5, 30]], atol=1e-8)
    np.testing.assert_allclose(only[1], every[1][[5, 30]], atol=1e-8)


def test_documents_of_a_new_folder_are_placed_in_it_above_max_svm_pairs() -> None:
    X, y = family_corpus(3)
    test_X, test_y = family_corpus(4)
    labels, truth = _labels(y), _labels(test_y)
    new = ("f2", "c17")
    rows = sp.vstack([X, test_X]).tocsr()
    before = [None if f == new else f for f in labels] + [None] * test_X.shape[0]
    fitted = FolderPlacement(max_svm_pairs=0, representation="plain").fit(rows, before)

    added = add_folders(fitted, X, labels)

    # As a refit that knew the folder places them, give or take one document: the other
    # folders' SVMs differ (the refit's count the folder's documents among their negatives).
    refit = FolderPlacement(max_svm_pairs=0, representation="plain").fit(
        rows, labels + [None] * test_X.shape[0]
    )
    of_new = [i for i, f in enumerate(truth) if f == new]
    placed = np.mean([p == new for p in added.predict(test_X[of_new])])
    by_refit = np.mean([p == new for p in refit.predict(test_X[of_new])])
    assert by_refit >= 0.7
    assert placed >= by_refit - 1 / len(of_new)
    # The other folders' documents stay where the fitted model put them, nearly all.
    rest = [i for i, f in enumerate(truth) if f != new]
    now, then = added.predict(test_X[rest]), fitted.predict(test_X[rest])
    unchanged = np.mean([a == b for a, b in zip(now, then, strict=True)])
    assert unchanged >= 0.97


def test_known_folders_only_give_the_model_itself() -> None:
    X, y = family_corpus(0, families=2, per_family=3, per_class=10)
    labels = _labels(y)
    fitted = FolderPlacement(representation="plain").fit(X, labels)
    assert add_folders(fitted, X, labels) is fitted


def test_rows_must_match_folders_and_terms() -> None:
    X, y = family_corpus(0, families=2, per_family=3, per_class=10)
    labels = _labels(y)
    fitted = FolderPlacement(representation="plain").fit(X, labels)
    with pytest.raises(ValueError, match="entries"):
        add_folders(fitted, X, labels[:-1])
    with pytest.raises(ValueError, match="terms"):
        add_folders(fitted, X[:, :-1], labels)


def test_a_removed_folder_is_never_predicted_and_the_others_keep_their_svms() -> None:
    X, y = family_corpus(5, families=3, per_family=3)
    labels = _labels(y)
    fitted = FolderPlacement(representation="plain").fit(X, labels)
    gone = labels[0]

    removed = remove_folders(fitted, [gone, ("never", "there")])

    keep = [j for j, f in enumerate(fitted.folders_) if f != gone]
    assert removed.folders_ == [fitted.folders_[j] for j in keep]
    # The oracle: the fit's decisions without the removed folder's column.
    np.testing.assert_array_equal(
        removed.decision_function(X), fitted.decision_function(X)[:, keep]
    )
    assert gone not in set(removed.predict(X))
    proba = removed.predict_proba(X)
    assert proba.shape == (X.shape[0], len(keep))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert removed.labeled_per_folder_.tolist() == fitted.labeled_per_folder_[keep].tolist()
    # The fitted collection's rows of the removed folder are unlabeled now.
    assert [f is None for f in removed._fit_labels] == [f == gone for f in labels]
    assert gone in fitted.folders_  # the fitted model is unchanged
    assert remove_folders(fitted, [("never", "there")]) is fitted
    with pytest.raises(ValueError, match="leaves no model"):
        remove_folders(fitted, fitted.folders_)
