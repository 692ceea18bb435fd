"""The cross-validated quantities of a :class:`~_placement.FolderPlacement` fit: the
softmax temperature with its calibration map, and the open-set (novelty) model.

Both are learned from SVMs that did not see the documents they score, fitted fold by fold
beside the final fit on one pool of ``n_jobs`` threads (:func:`fit_final_and_held_out`).
Where the representation selection already scored held-out documents, its folds are reused
(:mod:`_representation`). Functions of the model, as :mod:`_representation`'s: they read
its parameters and fit its SVMs (``FolderPlacement._fit_svm``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core.placement._calibration import (
    novelty_coefficients,
    temperature_from,
    top_two_decisions,
)

if TYPE_CHECKING:
    from foldwise.core.placement._placement import FolderPlacement
    from foldwise.core.placement._representation import HeldOut, NoveltyExamples

_T = TypeVar("_T")
Coefficients = tuple[NDArray[np.float64], NDArray[np.float64]]


def fit_final_and_held_out(
    model: FolderPlacement,
    final: Callable[[], Coefficients],
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    held_out: HeldOut | None = None,
    novelty: NoveltyExamples | None = None,
) -> tuple[Coefficients, float, NDArray[np.float64]]:
    """The ``final`` fit's (coef, intercept), the temperature (:func:`temperature_folds`)
    and the novelty model (:func:`novelty_folds`), the fold fits on one pool of
    ``n_jobs`` threads. ``F``: the labeled rows' features (n_labeled, n_features), ``y``
    their folders.

    ``held_out``: the representation selection's folds and held-out decisions of the
    chosen representation (:func:`_representation.choose_representation`). The temperature
    is then fitted on them instead of on folds of its own: five of the first fit's 17 SVM
    fits fewer (docs/placement.md, "Temperature from the selection's folds"). ``novelty``:
    the novelty model's examples from the selection's fold, where it hid folders; the
    novelty model then runs no fold of its own.

    The two cross-validations are independent. Each on its own pool left a thread
    idle whenever its folds did not divide among the threads, and where the SVMs are
    sampled each runs one fold: one after the other, on one thread, 54 s and 42 s on
    the generated 100,000-document archive (docs/recluster.md, "Temperature and
    novelty side by side").

    Where the SVMs are sampled the final fit joins the same pool: one novelty fold is
    all that is left to run there, and after the final fit it ran alone on one thread
    while the other idled (docs/recluster.md, "The novelty fold beside the final fit").
    Below that the final fit runs first, alone, on liblinear's one-vs-rest (which
    takes no threads of its own). Either way the fitted model does not depend on the
    threads: liblinear's fits take turns (``_sampled_svm.LIBLINEAR_LOCK``).
    """
    beside = model._sampled(y.size)
    fitted = None if beside else final()
    temperature_fits, temperature_of = temperature_folds(model, F, y, held_out)
    if novelty is None:
        novelty_fits, novelty_of = novelty_folds(model, F, y)
    else:
        novelty_fits, novelty_of = [], lambda _: novelty_coefficients([novelty])
    done = model._parallel(_call, ([final] if beside else []) + temperature_fits + novelty_fits)
    if fitted is None:
        fitted, done = done[0], done[1:]
    k = len(temperature_fits)
    return fitted, temperature_of(done[:k]), novelty_of(done[k:])


def temperature_folds(
    model: FolderPlacement,
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    held_out: HeldOut | None = None,
) -> tuple[list[Callable[[], Any]], Callable[[list[Any]], float]]:
    """Softmax temperature minimising the held-out log-loss of the labeled documents.

    Each labeled document is scored by SVMs that did not see it, so the posteriors are
    as sure as the classifier is on new documents, not on its own training data.
    Returns the fold fits to run and the function that turns their results into the
    temperature (setting the model's calibration and ``held_out_top_`` on the way). With
    ``held_out`` (the selection's folds and decisions) there is nothing to fit, and the
    temperature's own search is the one task: it runs beside the final fit instead of
    after it (1.7 s of one thread at 100,000 documents in 1,000 folders, while the
    final fit's mining left the other core half idle; docs/recluster.md, "Hard
    negatives on both cores").
    """
    if held_out is not None:
        return [functools.partial(_temperature_from, model, y, *held_out)], lambda done: done[0]
    fold = stratified_folds(y, model.cv, np.random.default_rng(model.random_state))

    def fold_decisions(f: int) -> NDArray[np.float64] | None:
        test = fold == f
        train = ~test
        # A folder whose only labeled documents are held out cannot be predicted: its
        # documents tell nothing about the temperature.
        if not test.any() or np.unique(y[train]).size < 2:
            return None
        coef, intercept = model._fit_svm(F[train], y[train], representation=model.representation_)
        D = np.asarray(F[test] @ coef.T)
        # In place: at 1,000 folders the held-out decisions are 160 MB, and the two
        # cross-validations fit side by side (fit_final_and_held_out).
        D += intercept
        return D

    used = list(range(model._folds_used(model.cv, y.size)))
    fits: list[Callable[[], Any]] = [functools.partial(fold_decisions, f) for f in used]
    return fits, functools.partial(_temperature_from, model, y, fold, used)


def _temperature_from(
    model: FolderPlacement,
    y: NDArray[np.intp],
    fold: NDArray[np.intp],
    used: list[int],
    decisions: list[NDArray[np.float64] | None],
) -> float:
    """The temperature from the held-out ``decisions`` of the folds ``used``; sets the
    model's calibration map and ``held_out_top_`` on the way
    (``_calibration.temperature_from``)."""
    fit = temperature_from(y, fold, used, decisions, len(model.folders_))
    model.calibration_x_, model.calibration_y_ = fit.calibration_x, fit.calibration_y
    model.held_out_top_ = fit.held_out_top
    return fit.temperature


def novelty_folds(
    model: FolderPlacement, F: sp.csr_matrix, y: NDArray[np.intp]
) -> tuple[list[Callable[[], Any]], Callable[[list[Any]], NDArray[np.float64]]]:
    """Logistic model of "belongs to an existing folder" from the top decision values.

    New topics are simulated with the labeled data: folders are split into ``cv``
    groups, and each group in turn is hidden from the SVMs. Held-out documents of the
    seen folders are examples of known documents, all documents of the hidden folders
    examples of new ones (settings 2-3 of 001 sec. 5.2, played on the training data).
    Features: the highest decision value and its margin over the second. Both kinds are
    weighted equally: how many new documents come from new topics is not known.

    Returns the fold fits to run and the function that turns their results into the
    coefficients (a, b, c) of ``sigmoid(a d1 + b (d1 - d2) + c)``, or an empty array
    when there are too few folders to hide some.
    """
    present = np.unique(y)
    if present.size < 3:
        return [], lambda _: np.zeros(0)
    group, n_groups, rng = novelty_groups(model, y)
    fold = stratified_folds(y, model.cv, rng)

    def hide_group(g: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]] | None:
        hidden = group == g
        train = ~hidden & (fold != g)
        seen = np.unique(y[train])
        if seen.size < 2:
            return None
        coef, intercept = model._fit_svm(F[train], y[train], representation=model.representation_)
        # The seen folders' coefficients as columns: one copy, not one per block of rows.
        W = np.ascontiguousarray(coef.T[:, seen])
        del coef
        test = hidden | ((fold == g) & np.isin(y, seen))
        return top_two_decisions(F, np.flatnonzero(test), W, intercept[seen]), ~hidden[test]

    groups = range(model._folds_used(n_groups, y.size))
    return [functools.partial(hide_group, g) for g in groups], novelty_coefficients


def stratified_folds(
    y: NDArray[np.intp], n_folds: int, rng: np.random.Generator
) -> NDArray[np.intp]:
    """The fold of each labeled document (n_labeled,): each folder's documents dealt
    round-robin over ``n_folds`` folds in an order ``rng`` draws, folder by folder in
    the order of their indices."""
    fold = np.empty(y.size, dtype=np.intp)
    for j in np.unique(y):
        members = np.flatnonzero(y == j)
        fold[members] = rng.permutation(members.size) % n_folds
    return fold


def novelty_groups(
    model: FolderPlacement, y: NDArray[np.intp]
) -> tuple[NDArray[np.intp], int, np.random.Generator]:
    """The group of each labeled document's folder (n_labeled,), the number of groups
    (``cv``, at most one per folder present), and the generator that drew them, for
    the draws that follow."""
    present = np.unique(y)
    rng = np.random.default_rng(model.random_state + 1)
    n_groups = min(model.cv, present.size)
    group_of = dict(zip(present.tolist(), rng.permutation(present.size) % n_groups, strict=True))
    return np.array([group_of[int(c)] for c in y], dtype=np.intp), n_groups, rng


def _call(fit: Callable[[], _T]) -> _T:
    return fit()
