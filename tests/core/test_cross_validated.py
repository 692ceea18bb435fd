"""Kept cross-validation: a placement model reuses an earlier fit's cross-validated quantities
(representation, temperature, calibration, novelty) while its labels barely changed."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_topics import label_some, topic_corpus

from foldwise.core import BiiHAC, CrossValidated, FolderPlacement, arrays_from_npz, arrays_to_npz

CV_ATTRIBUTES = ("calibration_x_", "calibration_y_", "held_out_top_", "novelty_coef_")


def _labels(truth, n_labeled=6, seed=0):
    return label_some(truth, n_labeled, set(), seed=seed)


@pytest.fixture(scope="module")
def fitted():
    X, _, truth = topic_corpus(seed=4)
    labels = _labels(truth)
    return X, truth, labels, FolderPlacement().fit(X, labels)


def _relabel(labels, truth, n):
    """``labels`` with ``n`` more unlabeled documents labeled with their true folder."""
    out = list(labels)
    for i in [i for i, f in enumerate(labels) if f is None][:n]:
        out[i] = truth[i]
    return out


def test_reuse_on_the_same_labels_gives_the_model_of_a_fresh_fit(fitted):
    """The oracle: on unchanged labels the kept quantities are the ones a fresh fit computes,
    so the model is identical, posteriors and open-set test included."""
    X, _, labels, fresh = fitted
    kept = FolderPlacement(cross_validated=fresh.cross_validated_state()).fit(X, labels)
    assert kept.cross_validated_reused_ and not fresh.cross_validated_reused_
    assert kept.representation_ == fresh.representation_
    assert kept.temperature_ == fresh.temperature_
    for name in ("coef_", "intercept_", "components_", *CV_ATTRIBUTES):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name))
    np.testing.assert_array_equal(kept.predict_proba(X), fresh.predict_proba(X))
    np.testing.assert_array_equal(kept.known_proba(X), fresh.known_proba(X))


def test_a_few_new_labels_refit_the_svms_and_keep_the_cross_validation(fitted):
    X, truth, labels, fresh = fitted
    n = fresh.labeled_per_folder_.sum()
    more = _relabel(labels, truth, 3)
    assert 0.1 * n >= 3  # within the default max_label_change
    kept = FolderPlacement(cross_validated=fresh.cross_validated_state()).fit(X, more)
    assert kept.cross_validated_reused_
    assert kept.temperature_ == fresh.temperature_
    np.testing.assert_array_equal(kept.held_out_top_, fresh.held_out_top_)
    # The final SVMs did learn the new labels ...
    assert not np.array_equal(kept.coef_, fresh.coef_)
    assert kept.labeled_per_folder_.sum() == fresh.labeled_per_folder_.sum() + 3
    # ... and the state remembers the counts it was estimated on, so drift adds up.
    np.testing.assert_array_equal(kept.cv_labeled_per_folder_, fresh.labeled_per_folder_)
    state = kept.cross_validated_state()
    np.testing.assert_array_equal(state.labeled_per_folder, fresh.labeled_per_folder_)


def test_too_many_new_labels_cross_validate_afresh(fitted):
    X, truth, labels, fresh = fitted
    more = _relabel(labels, truth, int(0.1 * fresh.labeled_per_folder_.sum()) + 1)
    again = FolderPlacement(cross_validated=fresh.cross_validated_state()).fit(X, more)
    assert not again.cross_validated_reused_
    np.testing.assert_array_equal(again.cv_labeled_per_folder_, again.labeled_per_folder_)
    exact = FolderPlacement(cross_validated=fresh.cross_validated_state(), max_label_change=0)
    assert exact.fit(X, labels).cross_validated_reused_
    assert not exact.fit(X, more).cross_validated_reused_


def test_other_folders_or_parameters_cross_validate_afresh(fitted):
    X, _, labels, fresh = fitted
    state = fresh.cross_validated_state()
    renamed = [None if f is None else ("x", *f) for f in labels]
    assert not FolderPlacement(cross_validated=state).fit(X, renamed).cross_validated_reused_
    for params in ({"C": 2.0}, {"cv": 4}, {"n_components": 10}, {"random_state": 1}):
        model = FolderPlacement(cross_validated=state, **params).fit(X, labels)
        assert not model.cross_validated_reused_, params
    other = "plain" if fresh.representation_ == "latent" else "latent"
    model = FolderPlacement(cross_validated=state, representation=other).fit(X, labels)
    assert not model.cross_validated_reused_ and model.representation_ == other


def test_invalid_reuse_parameters_raise(fitted):
    X, _, labels, _ = fitted
    with pytest.raises(ValueError, match="cross_validated"):
        FolderPlacement(cross_validated={"temperature": 1.0}).fit(X, labels)
    with pytest.raises(ValueError, match="max_label_change"):
        FolderPlacement(max_label_change=-0.1).fit(X, labels)


def test_state_round_trips_through_plain_arrays(fitted):
    _, _, _, fresh = fitted
    state = fresh.cross_validated_state()
    back = CrossValidated.from_arrays(arrays_from_npz(arrays_to_npz(state.to_arrays())))
    assert back.folders == state.folders and back.params == state.params
    assert (back.representation, back.temperature) == (state.representation, state.temperature)
    for name in ("labeled_per_folder", "calibration_x", "held_out_top", "novelty_coef"):
        np.testing.assert_array_equal(getattr(back, name), getattr(state, name))


@pytest.mark.parametrize(
    "change, match",
    [
        ({"temperature_": np.asarray(0.0)}, "temperature"),
        ({"cv_labeled_per_folder_": np.asarray([1, 2])}, "labeled_per_folder"),
        ({"novelty_coef_": np.asarray([1.0, 2.0])}, "novelty"),
        ({"held_out_top_": np.asarray([np.nan])}, "held_out_top"),
        ({"format_version": np.asarray(99)}, "format"),
    ],
)
def test_damaged_state_arrays_are_value_errors(fitted, change, match):
    arrays = {**fitted[3].cross_validated_state().to_arrays(), **change}
    with pytest.raises(ValueError, match=match):
        CrossValidated.from_arrays(arrays)
    arrays = fitted[3].cross_validated_state().to_arrays()
    del arrays["param_cv"]
    with pytest.raises(ValueError, match="param_cv"):
        CrossValidated.from_arrays(arrays)


def test_stored_model_keeps_the_counts_of_its_cross_validation(fitted):
    """``cv_labeled_per_folder_`` survives ``to_arrays``; an archive written before it
    existed reads as cross-validated on its own labels."""
    X, truth, labels, fresh = fitted
    kept = FolderPlacement(cross_validated=fresh.cross_validated_state())
    kept.fit(X, _relabel(labels, truth, 3))
    assert kept.cross_validated_reused_
    arrays = kept.to_arrays()
    back = FolderPlacement.from_arrays(arrays)
    np.testing.assert_array_equal(back.cv_labeled_per_folder_, fresh.labeled_per_folder_)
    del arrays["cv_labeled_per_folder_"]
    old = FolderPlacement.from_arrays(arrays)
    np.testing.assert_array_equal(old.cv_labeled_per_folder_, kept.labeled_per_folder_)


def test_npz_names_read_only_those_members(fitted):
    state = fitted[3].cross_validated_state().to_arrays()
    data = arrays_to_npz({**{"a." + k: v for k, v in state.items()}, "b.big": np.zeros(9)})
    part = arrays_from_npz(data, names=["a." + k for k in state] + ["c.absent"])
    assert set(part) == {"a." + k for k in state}


def test_biihac_self_labeling_model_reuses_a_state():
    X, _, truth = topic_corpus(seed=5)
    labels = _labels(truth, n_labeled=5)
    first = BiiHAC(r_max=3).fit(X, labels)
    assert first.placement_ is not None and not first.placement_.cross_validated_reused_
    state = first.placement_.cross_validated_state()
    second = BiiHAC(r_max=3, placement_state=state).fit(X, labels)
    assert second.placement_.cross_validated_reused_
    np.testing.assert_array_equal(second.linkage_, first.linkage_)
    np.testing.assert_array_equal(second.self_labeled_, first.self_labeled_)


def test_a_new_folder_keeps_the_cross_validation_and_counts_as_change(fitted):
    """A folder the person created (or a proposal accepted) joins the folders: the state is
    reused while its documents stay within the allowed change, and the kept counts give
    the new folder none, so its documents count as drift from then on."""
    X, _, labels, fresh = fitted
    state = fresh.cross_validated_state()
    n = int(fresh.labeled_per_folder_.sum())
    new_folder = ("new topic",)
    unlabeled = [i for i, f in enumerate(labels) if f is None]

    def with_new(k):
        out = list(labels)
        for i in unlabeled[:k]:
            out[i] = new_folder
        return out

    within = int(0.1 * n)
    kept = FolderPlacement(cross_validated=state).fit(X, with_new(within))
    assert kept.cross_validated_reused_ and new_folder in kept.folders_
    assert kept.temperature_ == fresh.temperature_
    j = kept.folders_.index(new_folder)
    assert kept.cv_labeled_per_folder_[j] == 0 and kept.labeled_per_folder_[j] == within
    others = [f for f in kept.folders_ if f != new_folder]
    assert others == fresh.folders_
    np.testing.assert_array_equal(
        np.delete(kept.cv_labeled_per_folder_, j), fresh.labeled_per_folder_
    )
    # One document more than the allowed change: cross-validated afresh.
    again = FolderPlacement(cross_validated=state).fit(X, with_new(within + 1))
    assert not again.cross_validated_reused_
    # A folder of the state gone (its documents unlabeled): afresh, whatever the counts.
    gone = fresh.folders_[0]
    dropped = [None if f == gone else f for f in labels]
    assert not FolderPlacement(cross_validated=state).fit(X, dropped).cross_validated_reused_


def test_counts_on_maps_the_state_onto_other_folders(fitted):
    state = fitted[3].cross_validated_state()
    folders = [*state.folders, ("zz",)]
    counts = state.counts_on(folders[::-1])
    assert counts is not None
    np.testing.assert_array_equal(counts[::-1], [*state.labeled_per_folder, 0])
    assert state.counts_on(state.folders[1:]) is None
