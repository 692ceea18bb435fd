"""FolderPlacement: placement of new documents, level assignment (003 sec. 3.1), triples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC
from synthetic_topics import topic_corpus

from corpus_path import PYTHON_DOCS
from foldwise.core import FolderPlacement, text_features
from foldwise.core.placement import _calibration as calibration_module
from foldwise.core.placement import _placement as placement_module
from foldwise.core.placement import _representation as representation_module
from foldwise.core.placement._calibration import calibration_map


def _labels(truth, n_labeled=5, seed=0):
    rng = np.random.default_rng(seed)
    labels = [None] * len(truth)
    for f in sorted(set(truth)):
        idx = [i for i, t in enumerate(truth) if t == f]
        for i in rng.choice(idx, n_labeled, replace=False):
            labels[int(i)] = f
    return labels


def test_places_separated_topics_in_their_folder():
    X, _, truth = topic_corpus(seed=1)
    labels = _labels(truth)
    model = FolderPlacement().fit(X, labels)
    pred = model.predict(X)
    new = [i for i, f in enumerate(labels) if f is None]
    assert np.mean([pred[i] == truth[i] for i in new]) >= 0.95
    P = model.predict_proba(X)
    assert P.shape == (X.shape[0], len(model.folders_))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert model.folders_ == sorted(set(truth))


def test_uncertain_document_goes_only_as_deep_as_confident():
    X, names, truth = topic_corpus(seed=2)
    labels = _labels(truth)
    model = FolderPlacement().fit(X, labels)
    # A document made only of terms every sport folder shares: surely sport, unsure which.
    sport_terms = [j for j, t in enumerate(names) if t.startswith("sport") and t[5:].isdigit()]
    doc = np.zeros((1, X.shape[1]))
    doc[0, sport_terms] = 1.0
    doc = sp.csr_matrix(normalize(doc))
    placed = model.place(doc)
    assert placed.folder[0] == ("sport",)
    assert placed.depth[0] == 1
    assert placed.best_folder[0][:1] == ("sport",) and len(placed.best_folder[0]) == 2
    assert placed.confidence[0] > model.rho
    assert placed.best_confidence[0] < placed.confidence[0]
    # A clear football document goes all the way down.
    clear = model.place(X[[truth.index(("sport", "football"))]])
    assert clear.folder[0] == ("sport", "football") and clear.depth[0] == 2


def test_higher_rho_never_places_deeper():
    X, _, truth = topic_corpus(seed=3, own=2, parent=3, common=4)
    labels = _labels(truth)
    low = FolderPlacement(rho=0.3).fit(X, labels).place(X)
    high = FolderPlacement(rho=0.95).fit(X, labels).place(X)
    assert np.all(high.depth <= low.depth)
    assert high.depth.sum() < low.depth.sum()
    # Confident folders are always ancestors (or the same) of the most probable one.
    for f, best in zip(high.folder, high.best_folder, strict=True):
        assert best[: len(f)] == f


def test_documents_filed_in_an_inner_folder_are_a_folder_of_their_own():
    X, _, truth = topic_corpus(seed=4)
    # Football documents filed directly in "sport": the inner folder is a class.
    truth = [("sport",) if t == ("sport", "football") else t for t in truth]
    labels = _labels(truth)
    model = FolderPlacement().fit(X, labels)
    assert ("sport",) in model.folders_
    new = [i for i, f in enumerate(labels) if f is None and truth[i] == ("sport",)]
    placed = model.place(X[new])
    assert np.mean([f == ("sport",) for f in placed.best_folder]) >= 0.9


def test_supervised_term_weights_favour_folder_terms():
    X, names, truth = topic_corpus(seed=5)
    model = FolderPlacement().fit(X, _labels(truth))
    w = model.term_weights_
    assert w.shape == (X.shape[1],)
    assert np.all(w >= 0)
    assert w.sum() == pytest.approx(X.shape[1])
    common = [j for j, t in enumerate(names) if t.startswith("common")]
    own = [j for j, t in enumerate(names) if t.startswith("cooking")]
    assert w[own].mean() > 2 * w[common].mean()
    # Given (biHAC) weights multiply in on request only: a term weighted 0 stays 0.
    given = np.ones(X.shape[1])
    given[own[0]] = 0.0
    model2 = FolderPlacement(use_given_weights=True).fit(X, _labels(truth), weights=given)
    assert model2.term_weights_[own[0]] == 0.0
    model3 = FolderPlacement().fit(X, _labels(truth), weights=given)
    np.testing.assert_allclose(model3.term_weights_, w)


def test_explicit_triple_restricts_an_unlabeled_document():
    X, _, truth = topic_corpus(seed=6)
    labels = _labels(truth)
    x = next(i for i, f in enumerate(labels) if f is None and truth[i] == ("sport", "football"))
    y = next(i for i, f in enumerate(labels) if f == ("cooking",))
    z = next(i for i, f in enumerate(labels) if f == ("sport", "football"))
    # The person says x is closer to a cooking document than to a football one.
    model = FolderPlacement().fit(X, labels, triples=[(x, y, z)])
    assert model.predict(X)[x] == ("cooking",)
    assert FolderPlacement().fit(X, labels).predict(X)[x] == ("sport", "football")


def test_fitted_model_keeps_no_documents():
    X, _, truth = topic_corpus(seed=7)
    model = FolderPlacement().fit(X, _labels(truth))
    for name, value in vars(model).items():
        if sp.issparse(value) or isinstance(value, np.ndarray):
            assert value.shape[0] != X.shape[0], name


@pytest.mark.parametrize(
    "params, match",
    [
        ({"rho": 1.0}, "rho"),
        ({"C": 0}, "C"),
        ({"cv": 1}, "cv"),
        ({"n_components": -1}, "n_components"),
    ],
)
def test_invalid_parameters_raise(params, match):
    X, _, truth = topic_corpus(seed=8)
    with pytest.raises(ValueError, match=match):
        FolderPlacement(**params).fit(X, _labels(truth))


def test_invalid_inputs_raise():
    X, _, truth = topic_corpus(seed=9)
    labels = _labels(truth)
    with pytest.raises(ValueError, match="labeled"):
        FolderPlacement().fit(X, [None] * X.shape[0])
    with pytest.raises(ValueError, match="entries"):
        FolderPlacement().fit(X, labels[:-1])
    with pytest.raises(ValueError, match="weights"):
        FolderPlacement().fit(X, labels, weights=-np.ones(X.shape[1]))
    with pytest.raises(ValueError, match="outside"):
        FolderPlacement().fit(X, labels, triples=[(0, 1, X.shape[0])])
    with pytest.raises(ValueError, match="not fitted"):
        FolderPlacement().predict(X)


def test_single_folder_places_everything_there():
    X, _, _truth = topic_corpus(seed=10)
    labels = [("cooking",) if i < 3 else None for i in range(X.shape[0])]
    placed = FolderPlacement().fit(X, labels).place(X)
    assert set(placed.best_folder) == {("cooking",)}


def test_python_docs_quality_floor(corpus):
    """5 labeled documents per folder, seed 0: beat nearest centroid clearly, match the SVM."""
    files = sorted(PYTHON_DOCS.rglob("*.txt"))
    truth = [tuple(f.relative_to(PYTHON_DOCS).parent.parts) for f in files]
    X, _ = text_features([f.read_text(errors="replace") for f in files])
    rng = np.random.default_rng(0)
    labels = [None] * len(files)
    for f in sorted(set(truth)):
        idx = [i for i, t in enumerate(truth) if t == f]
        for i in rng.choice(idx, min(5, max(len(idx) - 1, 1)), replace=False):
            labels[int(i)] = f
    folders = sorted({f for f in labels if f is not None})
    y = np.array([folders.index(t) for t in truth])
    lab = np.array([f is not None for f in labels])
    new = ~lab

    pred = FolderPlacement().fit(X, labels).predict(X)
    ours = np.mean([pred[i] == truth[i] for i in np.flatnonzero(new)])
    C = normalize(
        np.vstack([np.asarray(X[lab & (y == j)].mean(axis=0)) for j in range(len(folders))])
    )
    centroid = np.mean(np.asarray(X @ C.T).argmax(axis=1)[new] == y[new])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = np.mean(LinearSVC().fit(X[lab], y[lab]).predict(X[new]) == y[new])
    # Measured on this sample: .593 vs centroid .537 and SVM .578 (bench: 10 seeds, +2-3 points).
    assert ours >= centroid + 0.04, (ours, centroid)
    assert ours >= svm - 0.01, (ours, svm)


def test_documents_of_a_hidden_folder_are_not_forced_into_a_sibling():
    """Setting 2 on synthetic data: golf is hidden; its documents stop at "sport"."""
    X, _, truth = topic_corpus(seed=11)
    hidden = ("sport", "golf")
    labels = _labels(truth)
    labels = [None if f == hidden else f for f in labels]
    model = FolderPlacement().fit(X, labels)
    assert model.novelty_coef_.shape == (3,)
    placed = model.place(X)
    golf = [i for i, t in enumerate(truth) if t == hidden]
    others = [i for i, f in enumerate(labels) if f is None and truth[i] != hidden]
    assert placed.known[golf].mean() < placed.known[others].mean() - 0.2
    # Most golf documents stay at their parent instead of a wrong sibling; none leaves sport.
    assert np.mean([placed.folder[i] == ("sport",) for i in golf]) >= 0.7
    assert all(placed.folder[i][:1] in ((), ("sport",)) for i in golf)
    # The known topics still go all the way down.
    assert np.mean([placed.folder[i] == truth[i] for i in others]) >= 0.8


def _noisy_corpus(seed: int):
    """Topic corpus with overlapping folders: own terms drawn half from a neighbour's block,
    so placements are wrong often enough for calibration to matter."""
    X, _, truth = topic_corpus(seed=seed, per_folder=40, own=1, parent=4, common=6)
    return X, truth


def test_calibrated_confidence_is_monotone_and_a_floor_on_held_out_documents():
    hits, shown = 0, 0
    for seed in range(4):
        X, truth = _noisy_corpus(seed)
        labels = _labels(truth, n_labeled=25, seed=seed)
        model = FolderPlacement().fit(X, labels)
        assert model.calibration_x_.size > 0
        grid = np.linspace(0, 1, 101)
        conf = model.calibrated_confidence(grid)
        assert np.all(np.diff(conf) >= -1e-12) and conf.min() >= 0 and conf.max() <= 1
        new = [i for i, f in enumerate(labels) if f is None]
        P = model.predict_proba(X[new])
        c = model.calibrated_confidence(P.max(axis=1))
        right = np.array(
            [model.folders_[j] == truth[i] for i, j in zip(new, P.argmax(1), strict=True)]
        )
        hits += int(right[c >= 0.9].sum())
        shown += int((c >= 0.9).sum())
    # Documents shown at >= .9 are right at least 90% of the time, and some are shown so.
    assert shown > 0 and hits / shown >= 0.9


def _count_svm_fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each FolderPlacement SVM fit from now on appends its number of training rows."""
    calls: list[int] = []
    fit_svm = FolderPlacement._fit_svm

    def counted(self, F, y, *args, **kwargs):
        calls.append(F.shape[0])
        return fit_svm(self, F, y, *args, **kwargs)

    monkeypatch.setattr(FolderPlacement, "_fit_svm", counted)
    return calls


def test_the_temperature_comes_from_the_representation_selection_folds(monkeypatch):
    """With "auto", the chosen representation's held-out decisions give the temperature:
    3 x 2 selection fits, which end in a near tie here, so 5 x 2 more at four fifths of the
    labels, then 5 novelty fits and the final one, and no temperature folds of its own; a
    fixed representation fits them (5). Where the SVMs are sampled, two first passes and
    one second pass select, and the final fit follows."""
    X, truth = _noisy_corpus(0)
    labels = _labels(truth, n_labeled=25)
    n_labeled = sum(f is not None for f in labels)
    calls = _count_svm_fits(monkeypatch)
    auto = FolderPlacement().fit(X, labels)
    auto_fits = len(calls)
    # The tie's second comparison: SVMs that learn from four fifths of the labels (stratified
    # per folder), where the first comparison's learned from two thirds.
    for rows in calls[: 3 * 2]:
        assert abs(rows - 2 / 3 * n_labeled) <= len(auto.folders_)
    for rows in calls[3 * 2 : 3 * 2 + 5 * 2]:
        assert abs(rows - 0.8 * n_labeled) <= len(auto.folders_)
    calls.clear()
    fixed = FolderPlacement(representation=auto.representation_).fit(X, labels)
    assert (auto_fits, len(calls)) == (3 * 2 + 5 * 2 + 5 + 1, 5 + 5 + 1)
    # Every labeled document is scored held out either way, and the two estimates agree.
    assert auto.held_out_top_.size == fixed.held_out_top_.size == n_labeled
    assert auto.temperature_ == pytest.approx(fixed.temperature_, rel=0.3)
    assert auto.calibration_x_.size > 0
    # Where the SVMs are sampled one selection fold runs, hiding the novelty model's first
    # group of folders too: it gives the temperature and the novelty model, and no
    # novelty fold is fitted (two selection fits and the final one). Where its decisions
    # would take too much memory it keeps those of a sample of the held-out documents.
    # The two representations are compared on the first pass of their sampled SVMs, and
    # only the chosen one's second pass is fitted.
    first_passes, second_passes = [], []
    first_pass, second_pass = FolderPlacement._first_pass, representation_module.second_pass
    monkeypatch.setattr(
        FolderPlacement,
        "_first_pass",
        lambda self, F, y: first_passes.append(F.shape[0]) or first_pass(self, F, y),
    )
    monkeypatch.setattr(
        representation_module,
        "second_pass",
        lambda F, *a, **k: second_passes.append(F.shape[0]) or second_pass(F, *a, **k),
    )
    calls.clear()
    sampled = FolderPlacement(max_svm_pairs=n_labeled).fit(X, labels)
    assert len(calls) == 1  # the final fit
    assert len(first_passes) == 2 and second_passes == first_passes[:1]
    assert first_passes[0] == first_passes[1] < 0.8 * n_labeled  # a fold and folders out
    assert sampled.novelty_coef_.shape == (3,)
    n_folders = len(sampled.folders_)
    monkeypatch.setattr(representation_module, "MAX_KEPT_DECISIONS", 2 * n_folders * 20)
    calls.clear()
    few = FolderPlacement(max_svm_pairs=n_labeled).fit(X, labels)
    assert len(calls) == 1
    # (a kept document whose folder has no training document left is not scored)
    assert few.held_out_top_.size <= 20 < sampled.held_out_top_.size
    assert few.temperature_ == pytest.approx(sampled.temperature_, rel=0.5)


def test_the_selection_stops_after_two_folds_when_one_representation_is_clearly_ahead(
    monkeypatch, corpus
):
    """python-docs with 5 labeled per folder: latent leads plain clearly after two of the
    three selection folds (docs/placement.md), so the third is not fitted; every fold
    scored chooses the same. On a near tie all three folds run, and then the five of the
    comparison at four fifths of the labels, unless a previous choice stands."""
    files = sorted(PYTHON_DOCS.rglob("*.txt"))
    truth = [tuple(f.relative_to(PYTHON_DOCS).parent.parts) for f in files]
    X, _ = text_features([f.read_text(errors="replace") for f in files])
    labels = _labels_up_to(truth, 5)
    calls = _count_svm_fits(monkeypatch)
    early = FolderPlacement().fit(X, labels)
    assert len(calls) == 2 * 2 + 5 + 1  # two folds of each representation, novelty, final
    calls.clear()
    monkeypatch.setattr(representation_module, "FIRST_SELECTION_FOLDS", 3)
    every = FolderPlacement().fit(X, labels)
    assert len(calls) == 3 * 2 + 5 + 1
    assert early.representation_ == every.representation_ == "latent"
    # The temperature comes from the two folds' held-out documents: fewer, same estimate.
    assert early.held_out_top_.size < every.held_out_top_.size
    assert early.temperature_ == pytest.approx(every.temperature_, rel=0.2)
    np.testing.assert_array_equal(early.coef_, every.coef_)

    monkeypatch.setattr(representation_module, "FIRST_SELECTION_FOLDS", 2)
    Xt, _, topics = topic_corpus(seed=12)  # both representations place every document right
    calls.clear()
    FolderPlacement().fit(Xt, _labels(topics))
    assert len(calls) == 3 * 2 + 5 * 2 + 5 + 1
    calls.clear()
    FolderPlacement(previous_representation="latent").fit(Xt, _labels(topics))
    assert len(calls) == 3 * 2 + 5 + 1  # the previous choice stands on a tie


def test_clear_winner_is_a_two_sided_sign_test():
    right_a = np.array([True] * 30 + [False] * 10 + [True] * 60)
    right_b = np.array([False] * 30 + [True] * 10 + [True] * 60)
    # 30 wins against 10 losses: 20 > 2 sqrt(40) = 12.6, either way round.
    assert representation_module.clear_winner(right_a, right_b)
    assert representation_module.clear_winner(right_b, right_a)
    # 20 against 10: 10 < 2 sqrt(30) = 11.0; no document placed differently: no evidence.
    assert not representation_module.clear_winner(right_a[10:], right_b[10:])
    assert not representation_module.clear_winner(right_a[40:], right_b[40:])


def test_calibration_map_corrects_an_overconfident_softmax():
    """Held-out posteriors of .95 that are right 60% of the time are shown at most .6."""
    rng = np.random.default_rng(0)
    n = 400
    top = np.r_[rng.uniform(0.9, 1.0, n), rng.uniform(0.4, 0.6, n)]
    P = np.column_stack([top, 1 - top])
    right = np.r_[rng.random(n) < 0.6, rng.random(n) < 0.5]
    t = np.where(right, 0, 1)
    model = FolderPlacement()
    model.folders_ = [("a",), ("b",)]
    model.coef_ = np.zeros((2, 1))  # marks the model fitted for calibrated_confidence
    model.calibration_x_, model.calibration_y_ = calibration_map(P, t)
    shown = model.calibrated_confidence(np.array([0.5, 0.95, 0.99]))
    assert shown[1] <= 0.62 and shown[2] <= 0.62 and shown[0] <= 0.55
    assert np.all(np.diff(shown) >= 0)


def test_a_small_block_all_right_is_shown_at_its_one_sided_95_percent_floor():
    """15 held-out documents at .99, all right, are consistent with 85% right: shown
    15 / (15 + 1.645^2) = .847, not .9 (one sigma showed 15 / 16 = .938). 30 of 30 earn
    30 / (30 + 1.645^2) = .917."""
    top = np.r_[np.full(15, 0.99), np.full(40, 0.5)]
    P = np.column_stack([top, 1 - top])
    t = np.r_[np.zeros(15, dtype=np.intp), np.tile([0, 1], 20)]
    model = FolderPlacement()
    model.folders_ = [("a",), ("b",)]
    model.coef_ = np.zeros((2, 1))  # marks the model fitted for calibrated_confidence
    model.calibration_x_, model.calibration_y_ = calibration_map(P, t)
    assert model.calibrated_confidence([0.99])[0] == pytest.approx(15 / (15 + 1.645**2))
    top = np.r_[np.full(30, 0.99), np.full(40, 0.5)]
    t = np.r_[np.zeros(30, dtype=np.intp), np.tile([0, 1], 20)]
    model.calibration_x_, model.calibration_y_ = calibration_map(np.column_stack([top, 1 - top]), t)
    assert model.calibrated_confidence([0.99])[0] == pytest.approx(30 / (30 + 1.645**2))


def test_sample_weight_moves_the_boundary_for_other_documents():
    X, truth = _noisy_corpus(0)
    labels = _labels(truth, n_labeled=10, seed=0)
    plain = FolderPlacement().fit(X, labels)
    new = [i for i, f in enumerate(labels) if f is None]
    # Relabel one labeled document of football as tennis and weigh it heavily: the person
    # "moved" it against the model. Other documents like it must feel the change.
    moved = next(i for i, f in enumerate(labels) if f == ("sport", "football"))
    labels2 = list(labels)
    labels2[moved] = ("sport", "tennis")
    weights = np.ones(len(labels))
    weights[moved] = 50.0
    heavy = FolderPlacement().fit(X, labels2, sample_weight=weights)
    light = FolderPlacement().fit(X, labels2)
    col = heavy.folders_.index(("sport", "tennis"))
    assert (heavy.predict_proba(X[new])[:, col] - light.predict_proba(X[new])[:, col]).max() > 0.01
    with pytest.raises(ValueError, match="sample_weight"):
        FolderPlacement().fit(X, labels, sample_weight=np.zeros(len(labels)))
    assert plain.folders_ == heavy.folders_


def test_the_previous_representation_stays_on_a_near_tie():
    """Topics both representations place perfectly: no evidence either way, so a model that
    replaces one keeps its representation (a flip would move many placements)."""
    X, _, truth = topic_corpus(seed=12)
    labels = _labels(truth)
    for previous in ("latent", "plain"):
        model = FolderPlacement(previous_representation=previous).fit(X, labels)
        assert model.representation_ == previous
    # With nothing to keep, the one with more held-out documents right (ties: latent).
    assert FolderPlacement().fit(X, labels).representation_ == "latent"
    with pytest.raises(ValueError, match="previous_representation"):
        FolderPlacement(previous_representation="dense").fit(X, labels)


def test_a_near_tie_among_big_folders_goes_to_plain():
    """Topics both representations place perfectly: cross-validation cannot tell them
    apart, and latent's lead shrinks as labels grow, so from a median of
    ``PLAIN_FROM_LABELED_PER_FOLDER`` labeled documents per folder the tie goes to plain;
    below, as before, to the one with more right (latent on a tie)."""
    X, _, truth = topic_corpus(seed=12, per_folder=25)
    many = representation_module.PLAIN_FROM_LABELED_PER_FOLDER
    assert FolderPlacement().fit(X, _labels(truth, many - 1)).representation_ == "latent"
    assert FolderPlacement().fit(X, _labels(truth, many)).representation_ == "plain"


def test_a_clear_lead_decides_and_a_near_tie_goes_to_the_prior():
    lead = np.array([True] * 30 + [False] * 10 + [True] * 60)
    behind = np.array([False] * 30 + [True] * 10 + [True] * 60)
    more_right = representation_module.more_right
    # 30 wins against 10 losses: the leader, whatever the prior.
    assert more_right({"latent": lead, "plain": behind}, None, "plain") == "latent"
    assert more_right({"latent": behind, "plain": lead}, None, "plain") == "plain"
    # 20 against 10 is within two standard deviations: the prior, though latent leads;
    # without one (small folders), the leader.
    assert more_right({"latent": lead[10:], "plain": behind[10:]}, None, "plain") == "plain"
    assert more_right({"latent": lead[10:], "plain": behind[10:]}, None, None) == "latent"
    assert more_right({"latent": behind[10:], "plain": lead[10:]}, None, None) == "plain"


def _labels_up_to(truth, n_labeled, seed=0):
    """Up to ``n_labeled`` labeled documents per folder, every folder keeping a new one."""
    rng = np.random.default_rng(seed)
    labels: list[tuple[str, ...] | None] = [None] * len(truth)
    for f in sorted(set(truth)):
        idx = [i for i, t in enumerate(truth) if t == f]
        for i in rng.choice(idx, min(n_labeled, max(len(idx) - 1, 1)), replace=False):
            labels[int(i)] = f
    return labels


def test_a_clearly_better_representation_replaces_the_previous_one(corpus):
    """python-docs with 5 labeled per folder: latent wins clearly (docs/placement.md), so a
    previous "plain" gives way to it."""
    files = sorted(PYTHON_DOCS.rglob("*.txt"))
    truth = [tuple(f.relative_to(PYTHON_DOCS).parent.parts) for f in files]
    X, _ = text_features([f.read_text(errors="replace") for f in files])
    labels = _labels_up_to(truth, 5)
    model = FolderPlacement(previous_representation="plain").fit(X, labels)
    assert model.representation_ == "latent"


def test_threads_fit_the_same_model():
    """n_jobs spreads the cross-validation fits over threads; the model is the same bit
    for bit (liblinear's fits, which share one process-wide random generator, take
    turns: concurrent ones had moved the cross-validated parts by up to 1.2e-4)."""
    X, _, truth = topic_corpus(seed=3)
    labels = _labels(truth)
    one = FolderPlacement().fit(X, labels)
    two = FolderPlacement(n_jobs=2).fit(X, labels)
    assert two.representation_ == one.representation_
    for name in ("coef_", "intercept_", "components_", "calibration_x_", "novelty_coef_"):
        np.testing.assert_array_equal(getattr(two, name), getattr(one, name))
    assert two.temperature_ == one.temperature_
    with pytest.raises(ValueError, match="n_jobs"):
        FolderPlacement(n_jobs=0).fit(X, labels)


def test_for_collection_is_a_fit_on_another_collection_with_the_same_labeled_documents():
    """Oracle: with the plain representation a fit reads only the labeled rows, so a fit
    on a collection with other unlabeled rows and triples is the kept model for it."""
    X, _, truth = topic_corpus(seed=6)
    labels = _labels(truth)
    unlabeled = [i for i, f in enumerate(labels) if f is None]
    labeled = [i for i, f in enumerate(labels) if f is not None]
    # Collection B: the same labeled documents in the same order, first, then half the
    # unlabeled ones in reverse.
    rows_b = labeled + unlabeled[::-2]
    X_b, labels_b = X[rows_b], [labels[i] for i in rows_b]
    x = next(
        i for i, r in enumerate(rows_b) if labels_b[i] is None and truth[r] == ("sport", "football")
    )
    y = labels_b.index(("cooking",))
    z = labels_b.index(("sport", "football"))
    fitted_a = FolderPlacement(representation="plain").fit(X, labels)
    fitted_b = FolderPlacement(representation="plain").fit(X_b, labels_b, triples=[(x, y, z)])

    kept = fitted_a.for_collection(labels_b, triples=[(x, y, z)])
    np.testing.assert_array_equal(kept.predict_proba(X_b), fitted_b.predict_proba(X_b))
    assert kept.predict(X_b)[x] == ("cooking",)  # the triple applies to B's rows
    assert len(fitted_a.triples_) == 0  # the model it came from is unchanged
    np.testing.assert_array_equal(
        fitted_a.predict_proba(X),
        FolderPlacement(representation="plain").fit(X, labels).predict_proba(X),
    )
    with pytest.raises(ValueError, match="not fitted on"):
        fitted_a.for_collection([("nowhere",)])


def test_the_lsa_in_single_precision_spans_what_double_precision_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    X = sp.csr_matrix(topic_corpus(seed=3, per_folder=30)[0], dtype=np.float64)
    seen: list[np.dtype] = []

    class Recording(TruncatedSVD):
        def fit(self, X, y=None):  # type: ignore[no-untyped-def]
            seen.append(X.dtype)
            return super().fit(X, y)

    monkeypatch.setattr(placement_module, "TruncatedSVD", Recording)
    model = FolderPlacement(n_components=20)
    model.folders_ = [("a",), ("b",)]
    single = model._fit_components(X, "latent")
    double = TruncatedSVD(single.shape[0], random_state=0).fit(X).components_

    assert seen == [np.float32]

    assert single.dtype == np.float64 and single.shape == double.shape == (20, X.shape[1])
    # Each direction is double precision's own (same sign), to single precision's rounding.
    np.testing.assert_allclose(np.sum(single * double, axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize(
    ("n_components", "n_folders", "expected"),
    [(5, 3, 5), (5, 8, 8), (5, 30, 10), (0, 30, 0), (100, 50, 45)],
)
def test_the_lsa_has_a_direction_per_folder_up_to_twice_n_components(
    n_components: int, n_folders: int, expected: int
) -> None:
    """``n_components`` directions, or one per folder where there are more folders, up to
    twice ``n_components`` and a quarter of the documents (180 here: at most 45)."""
    X = sp.csr_matrix(topic_corpus(seed=3, per_folder=30)[0], dtype=np.float64)
    assert X.shape[0] // 4 == 45
    model = FolderPlacement(n_components=n_components)
    model.folders_ = [(f"f{j}",) for j in range(n_folders)]
    assert model._fit_components(X, "latent").shape == (expected, X.shape[1])


@pytest.mark.parametrize("n_jobs", [None, 2, 4])
def test_top_two_decisions_are_those_of_one_product(n_jobs: int | None) -> None:
    """The novelty folds' features (top decision among the seen folders, its margin over the
    second), scored row by row on threads, against the whole product of the seen folders."""
    rng = np.random.default_rng(0)
    F = sp.random(50, 30, density=0.2, format="csr", random_state=1)
    coef, intercept = rng.normal(size=(6, 30)), rng.normal(size=6)
    rows, seen = np.array([3, 0, 49, 17, 8, 22, 5, 41, 30]), np.array([0, 2, 3, 5])
    D = np.sort(np.asarray(F[rows] @ coef[seen].T) + intercept[seen], axis=1)

    top = calibration_module.top_two_decisions(
        F, rows, np.ascontiguousarray(coef[seen].T), intercept[seen], n_jobs=n_jobs
    )

    np.testing.assert_array_equal(top, np.column_stack([D[:, -1], D[:, -1] - D[:, -2]]))
