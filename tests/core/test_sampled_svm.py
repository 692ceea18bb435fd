"""Sampled one-vs-rest SVMs (core/placement/_sampled_svm.py): with every negative they are
liblinear's one-vs-rest; with sampled ones they place as it does; FolderPlacement switches
to them above ``max_svm_pairs``, and stops cross-validating at ``max_held_out``."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC
from synthetic_topics import family_corpus as _families

from foldwise.core import FolderPlacement
from foldwise.core.placement import _sampled_svm
from foldwise.core.placement._decision_kernel import best_two, decision_rows
from foldwise.core.placement._sampled_svm import (
    SAMPLED_TOL,
    _cosines,
    _hardest_negatives,
    binary_svm,
    first_pass,
    sampled_one_vs_rest,
    second_pass,
)


def test_with_every_negative_it_is_liblinears_one_vs_rest() -> None:
    X, y = _families(0, families=3, per_family=3)
    coef, intercept, classes = sampled_one_vs_rest(X, y, C=1.0, n_near=8, n_random=10_000, tol=1e-4)
    full = LinearSVC(C=1.0, random_state=0).fit(X, y)

    assert classes.tolist() == full.classes_.tolist()
    # The same binary problems; rows in another order, so equal to liblinear's tolerance.
    np.testing.assert_allclose(coef, full.coef_, atol=0.05)
    np.testing.assert_allclose(intercept, full.intercept_, atol=0.05)


@pytest.mark.parametrize("n_rows", [60, 400])  # fewer rows than terms (dual), more (primal)
def test_a_binary_svm_is_linear_svcs_bit_for_bit(
    n_rows: int, capfd: pytest.CaptureFixture[str]
) -> None:
    """liblinear called directly gives LinearSVC's SVM: the same solver, seed and bias,
    and it prints nothing."""
    rng = np.random.default_rng(n_rows)
    F = sp.random(n_rows, 120, density=0.1, format="csr", random_state=n_rows)
    positive = rng.random(n_rows) < 0.3
    weight = rng.uniform(0.5, 40.0, n_rows)
    for target in (positive, positive.astype(np.intp)):
        for C, seed in ((1.0, 0), (0.3, 7)):
            coef, intercept = binary_svm(F, target, weight, C=C, random_state=seed)
            svc = LinearSVC(C=C, random_state=seed).fit(F, target, sample_weight=weight)
            np.testing.assert_array_equal(coef, svc.coef_[0])
            assert intercept == svc.intercept_[0]
    # 64-bit indices are read as liblinear's C ints, not reinterpreted.
    wide = sp.csr_matrix((F.data, F.indices.astype(np.int64), F.indptr.astype(np.int64)), F.shape)
    np.testing.assert_array_equal(
        binary_svm(wide, positive, weight, C=1.0, random_state=0)[0],
        binary_svm(F, positive, weight, C=1.0, random_state=0)[0],
    )
    # liblinear's own progress lines go to the C stdout unless it is told to be quiet;
    # LinearSVC does that on every fit, so a verbose one is the test.
    LinearSVC(verbose=1).fit(F, positive)
    capfd.readouterr()
    binary_svm(F, positive, weight, C=1.0, random_state=0)
    assert capfd.readouterr().out == ""


@pytest.mark.parametrize(
    ("positive", "weight", "message"),
    [
        (np.ones(5), np.ones(5), "positive and negative"),
        (np.arange(5), np.ones(5), "0 / 1"),
        (np.arange(5) % 2, np.ones(4), "weight has shape"),
    ],
)
def test_a_binary_svm_checks_what_liblinear_would_not(
    positive: np.ndarray, weight: np.ndarray, message: str
) -> None:
    F = sp.random(5, 8, density=0.5, format="csr", random_state=0)
    with pytest.raises(ValueError, match=message):
        binary_svm(F, positive, weight, C=1.0, random_state=0)


@pytest.mark.parametrize("n_jobs", [None, 2, 3, -1])
@pytest.mark.parametrize("n_hard", [7, 500])  # fewer than the negatives, more
def test_hardest_negatives_are_the_other_classes_top_decision_values(
    n_hard: int, n_jobs: int | None
) -> None:
    rng = np.random.default_rng(3)
    F = sp.random(300, 30, density=0.3, format="csr", random_state=3)
    yi = rng.integers(0, 140, 300)
    members = [np.flatnonzero(yi == j) for j in range(140)]
    coef, intercept = rng.normal(size=(140, 30)), rng.normal(size=140)
    targets = np.arange(1, 140)  # three blocks of classes; class targets[i] is not i
    hard = _hardest_negatives(
        F, members, coef[targets], intercept[targets], n_hard, targets, n_jobs=n_jobs
    )
    assert len(hard) == targets.size

    D = np.asarray(F @ coef.T) + intercept
    for j, rows in zip(targets, hard, strict=True):
        others = np.flatnonzero(yi != j)
        expected = others[np.argsort(-D[others, j])][:n_hard]
        assert sorted(rows.tolist()) == sorted(expected.tolist())


def test_the_two_passes_one_after_the_other_are_sampled_one_vs_rest() -> None:
    """first_pass then second_pass: the same SVMs bit for bit, a subset of classes too;
    a second pass refuses a first pass of other classes."""
    X, y = _families(1)
    only = np.unique(y)[::3]
    for subset in (None, only):
        coef, intercept, classes = sampled_one_vs_rest(
            X, y, C=1.0, n_near=15, n_random=200, only=subset
        )
        first = first_pass(X, y, C=1.0, n_near=15, n_random=200, only=subset)
        np.testing.assert_array_equal(first.classes, classes)
        assert first.coef.shape == coef.shape
        again = second_pass(X, y, first, C=1.0, n_random=200)
        np.testing.assert_array_equal(again[0], coef)
        np.testing.assert_array_equal(again[1], intercept)
        np.testing.assert_array_equal(again[2], classes)
    first = first_pass(X, y, C=1.0, n_near=15, n_random=200, only=only)
    with pytest.raises(ValueError, match="other classes"):
        second_pass(X, np.where(y == only[0], y.max() + 1, y), first, C=1.0)


def test_the_centroid_cosines_are_their_sparse_products(monkeypatch) -> None:
    """Dense blocks of columns (here 7 wide, so that blocks end inside the terms) give the
    sparse product's values."""
    monkeypatch.setattr(_sampled_svm, "_COLUMN_BLOCK", 7)
    centroids = sp.random(40, 30, density=0.4, format="csr", random_state=5)
    targets = np.array([3, 0, 39, 12])
    expected = (centroids[targets] @ centroids.T).toarray()
    np.testing.assert_allclose(_cosines(centroids, targets), expected, rtol=0, atol=1e-12)


def test_sampled_negatives_place_as_the_full_model_does() -> None:
    X, y = _families(1)
    test_X, test_y = _families(2)
    full = LinearSVC(C=1.0, random_state=0).fit(X, y)
    # 15 nearest classes (7 siblings) as hard negatives, 200 of the other ~950 rows.
    coef, intercept, classes = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200)
    D_full = full.decision_function(test_X)
    D = np.asarray(test_X @ coef.T) + intercept

    full_right = np.mean(full.classes_[D_full.argmax(1)] == test_y)
    right = np.mean(classes[D.argmax(1)] == test_y)
    assert right >= full_right - 0.03
    # Importance weights keep the decision values on the full model's scale.
    assert abs(D.mean() - D_full.mean()) < 0.05
    assert np.corrcoef(D.ravel(), D_full.ravel())[0, 1] > 0.98


def test_classes_spread_over_threads_give_the_same_svms() -> None:
    """Each class's draws are seeded by the class, not by the order of the fits, and
    liblinear fits one at a time (its shuffles come from one generator for the process):
    the same SVMs bit for bit."""
    X, y = _families(1)
    one = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200)
    two = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200, n_jobs=2)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(b, a)


def test_binary_svms_on_threads_are_the_ones_fitted_alone() -> None:
    """liblinear seeds one process-wide generator at the start of a fit and draws its
    coordinate order from it without the GIL: fits that overlapped got each other's draws
    (``LIBLINEAR_LOCK``)."""
    rng = np.random.default_rng(3)
    F = sp.random(1500, 4000, density=0.01, format="csr", random_state=3)
    targets = [rng.random(F.shape[0]) < 0.2 for _ in range(6)]
    weight = np.ones(F.shape[0])

    def fit(k: int) -> tuple[np.ndarray, float]:
        return binary_svm(F, targets[k], weight, C=1.0, random_state=k, tol=1e-6)

    alone = [fit(k) for k in range(6)]
    with ThreadPoolExecutor(3) as pool:
        for _ in range(3):
            for (coef, intercept), (want, want_b) in zip(
                pool.map(fit, range(6)), alone, strict=True
            ):
                np.testing.assert_array_equal(coef, want)
                assert intercept == want_b


def test_folder_placement_samples_above_max_svm_pairs() -> None:
    X, y = _families(3)
    folders = [(f"f{c // 8}", f"c{c}") for c in y]
    test_X, test_y = _families(4)
    truth = [(f"f{c // 8}", f"c{c}") for c in test_y]
    n = X.shape[0]
    rows = sp.vstack([X, test_X]).tocsr()
    labels = folders + [None] * test_X.shape[0]

    def placed(max_pairs: int) -> list[tuple[str, ...]]:
        model = FolderPlacement(max_svm_pairs=max_pairs, representation="plain").fit(rows, labels)
        return model.predict(rows[n:])

    full, sampled = placed(10**9), placed(0)
    assert (
        np.mean([p == t for p, t in zip(sampled, truth, strict=True)])
        >= np.mean([p == t for p, t in zip(full, truth, strict=True)]) - 0.03
    )
    assert np.mean([a == b for a, b in zip(sampled, full, strict=True)]) > 0.9


@pytest.mark.parametrize("bad", [-1, 1.5, "many"])
def test_max_svm_pairs_is_checked(bad: object) -> None:
    X, y = _families(0, families=2, per_family=2, per_class=5)
    with pytest.raises(ValueError, match="max_svm_pairs"):
        FolderPlacement(max_svm_pairs=bad).fit(X, [(str(c),) for c in y])  # type: ignore[arg-type]


#: X, y, folders, and the model fitted on them (``every_fold``).
EveryFold = tuple[sp.csr_matrix, np.ndarray, list[tuple[str, str]], FolderPlacement]


@pytest.fixture(scope="module")
def every_fold() -> EveryFold:
    """1,440 labeled documents in 48 folders and the plain model that cross-validates every
    fold on them: X, y, folders, model."""
    X, y = _families(5)
    folders = [(f"f{c // 8}", f"c{c}") for c in y]
    return X, y, folders, FolderPlacement(representation="plain").fit(X, folders)


def test_cross_validation_stops_once_enough_documents_are_held_out(
    every_fold: EveryFold,
) -> None:
    X, y, folders, every = every_fold
    # 1,440 labeled documents: one fold of five holds out 288, so 300 takes two folds.
    two = FolderPlacement(representation="plain", max_held_out=300).fit(X, folders)
    assert two._folds_used(5, y.size) == 2
    assert every._folds_used(5, y.size) == 5

    assert two.held_out_top_.size == 576 < every.held_out_top_.size == y.size
    # Two folds estimate what five do; the final SVMs are the same.
    assert two.temperature_ == pytest.approx(every.temperature_, rel=0.25)
    np.testing.assert_array_equal(two.coef_, every.coef_)


def test_where_the_svms_are_sampled_one_fold_is_cross_validated(
    every_fold: EveryFold,
) -> None:
    X, y, folders, every = every_fold
    # 1,440 labeled documents x 48 folders = 69,120 pairs, above this max_svm_pairs.
    sampled = FolderPlacement(representation="plain", max_svm_pairs=60_000).fit(X, folders)

    assert sampled._folds_used(5, y.size) == 1
    assert sampled.held_out_top_.size == 288 < every.held_out_top_.size == y.size
    # One fold estimates what five do.
    assert sampled.temperature_ == pytest.approx(every.temperature_, rel=0.25)
    assert sampled.novelty_coef_.shape == every.novelty_coef_.shape == (3,)


def _record_fits(monkeypatch: pytest.MonkeyPatch, wait_for_fold: bool) -> list[str]:
    """Patch ``FolderPlacement._fit_svm`` to log "final start", "final end" and "fold"
    (a cross-validation fit starting); with ``wait_for_fold`` the final fit waits (at most
    60 s) for a fold to start and logs "fold beside" if one did."""
    log: list[str] = []
    fold_started = threading.Event()
    fit_svm = FolderPlacement._fit_svm

    def recording(self: FolderPlacement, F: sp.csr_matrix, y: np.ndarray, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "n_jobs" not in kwargs:  # only the final fit passes its threads
            log.append("fold")
            fold_started.set()
            return fit_svm(self, F, y, *args, **kwargs)
        log.append("final start")
        if wait_for_fold and fold_started.wait(timeout=60):
            log.append("fold beside")
        fitted = fit_svm(self, F, y, *args, **kwargs)
        log.append("final end")
        return fitted

    monkeypatch.setattr(FolderPlacement, "_fit_svm", recording)
    return log


def test_where_the_svms_are_sampled_the_final_fit_runs_beside_the_folds(
    every_fold: EveryFold, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, _, folders, _ = every_fold
    params = {"representation": "plain", "max_svm_pairs": 60_000}
    alone = FolderPlacement(**params, n_jobs=1).fit(X, folders)  # type: ignore[arg-type]
    log = _record_fits(monkeypatch, wait_for_fold=True)
    beside = FolderPlacement(**params, n_jobs=2).fit(X, folders)  # type: ignore[arg-type]

    # A temperature fold and a novelty fold; the first starts while the final fit waits.
    assert log.count("fold") == 2
    assert log.index("fold beside") < log.index("final end")
    # The same fits as one after the other, bit for bit: liblinear fits one at a time.
    np.testing.assert_array_equal(beside.coef_, alone.coef_)
    np.testing.assert_array_equal(beside.intercept_, alone.intercept_)
    assert beside.temperature_ == alone.temperature_
    np.testing.assert_array_equal(beside.novelty_coef_, alone.novelty_coef_)


def test_below_max_svm_pairs_the_final_fit_runs_alone_before_the_folds(
    every_fold: EveryFold, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, _, folders, every = every_fold
    log = _record_fits(monkeypatch, wait_for_fold=False)
    model = FolderPlacement(representation="plain", n_jobs=2).fit(X, folders)

    assert log[:2] == ["final start", "final end"]
    assert log[2:] == ["fold"] * 10  # five temperature folds, five novelty folds
    np.testing.assert_array_equal(model.coef_, every.coef_)


def test_the_sampled_svms_stop_at_their_own_tolerance() -> None:
    """``tol`` reaches liblinear: the default is SAMPLED_TOL, and LinearSVC's 1e-4 gives
    other coefficients (a looser stop: fewer coordinate passes) that place alike."""
    X, y = _families(1)
    test_X, _ = _families(2)
    default = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200)
    explicit = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200, tol=SAMPLED_TOL)
    strict = sampled_one_vs_rest(X, y, C=1.0, n_near=15, n_random=200, tol=1e-4)
    np.testing.assert_array_equal(default[0], explicit[0])
    assert not np.array_equal(default[0], strict[0])
    D_default = np.asarray(test_X @ default[0].T) + default[1]
    D_strict = np.asarray(test_X @ strict[0].T) + strict[1]
    assert np.mean(D_default.argmax(1) == D_strict.argmax(1)) > 0.98


def _with_index_dtype(F: sp.csr_matrix, index_dtype: type) -> sp.csr_matrix:
    """``F`` with its index arrays of ``index_dtype``, set after construction: scipy's
    constructor narrows int64 indices that fit in int32."""
    F = F.copy()
    F.indices, F.indptr = F.indices.astype(index_dtype), F.indptr.astype(index_dtype)
    assert F.indices.dtype == index_dtype
    return F


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_decision_rows_are_the_products_bits_one_class_a_row(index_dtype: type) -> None:
    rng = np.random.default_rng(5)
    F = _with_index_dtype(sp.random(70, 40, density=0.2, format="csr", random_state=5), index_dtype)
    coef, intercept = rng.normal(size=(9, 40)), rng.normal(size=9)
    out = np.empty((9, 70))
    decision_rows(F.indptr, F.indices, F.data, np.ascontiguousarray(coef.T), intercept, out)

    expected = np.asarray(F @ coef.T)
    expected += intercept
    np.testing.assert_array_equal(out, expected.T)


@pytest.mark.parametrize("n_jobs", [None, 3, -1])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_best_two_are_the_products_argmax_and_top_two_bits(
    index_dtype: type, n_jobs: int | None
) -> None:
    """Each row's best class (ties to the first, as argmax), its value and its margin over
    the second, against the product; rows in any order, repeated, or none."""
    rng = np.random.default_rng(8)
    F = _with_index_dtype(sp.random(60, 40, density=0.2, format="csr", random_state=6), index_dtype)
    coef, intercept = rng.normal(size=(7, 40)), rng.normal(size=7)
    coef[4] = coef[2]  # two classes with the same values: a tie wherever class 2 leads
    intercept[4] = intercept[2]
    rows = np.array([59, 0, 7, 7, 31, 12, 45, 3])

    best, top = best_two(F, rows, np.ascontiguousarray(coef.T), intercept, n_jobs=n_jobs)

    D = np.asarray(F[rows] @ coef.T)
    D += intercept
    ordered = np.sort(D, axis=1)
    np.testing.assert_array_equal(best, D.argmax(axis=1))
    np.testing.assert_array_equal(top[:, 0], ordered[:, -1])
    np.testing.assert_array_equal(top[:, 1], ordered[:, -1] - ordered[:, -2])
    # The tie: class 2 before class 4, margin 0.
    assert (best == 2).any() and not (best == 4).any() and (top[best == 2, 1] == 0).all()
    empty_best, empty_top = best_two(F, rows[:0], np.ascontiguousarray(coef.T), intercept)
    assert empty_best.shape == (0,) and empty_top.shape == (0, 2)
