"""A fitted placement model taught folders it was not fitted on, or rid of folders that are
gone, without a refit.

One-vs-rest SVMs are independent of each other: a folder's SVM is its own documents
against every other labeled document (or, above ``max_svm_pairs``, against its hardest
negatives and a sample: ``sampled_one_vs_rest``). So a folder created after the fit (an
accepted proposal, a folder the person made and filed into) gets the SVM a refit would give
it by fitting that one SVM, on the model's own features. What a refit would also change is
left as fitted: the term weights, LSA directions and cross-validated quantities, and the
other folders' SVMs, which do not count the new folder's documents among their negatives.
A "plain+nb" model's new folder gets its SVM alone: the naive Bayes term is scaled to the
spread of the fit's SVMs (``_naive_bayes``), and centred over the folders fitted, so its
absence shifts none of the new folder's decisions, it only leaves out what the term adds.
A "latent+plain+nb" model's new folder gets an SVM on each of its two blocks, summed as the
fit sums them.
At 100,000 filed documents in 1,000 folders a refit was most of the recluster that followed
a new folder (docs/recluster.md, "Kept placement model" and "Kept cross-validation").

A folder deleted (or emptied, or moved under another parent, which changes its path) since
the fit loses its SVM the same way (:func:`remove_folders`): a kept model must never place
a document in a folder that is not there.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._naive_bayes import is_both
from foldwise.core.placement._placement import FolderPlacement, side_by_side
from foldwise.core.placement._sampled_svm import binary_svm, sampled_one_vs_rest


def add_folders(
    model: FolderPlacement,
    X: sp.spmatrix | NDArray[np.floating],
    folders: Sequence[FolderPath | None],
    *,
    sample_weight: NDArray[np.floating] | None = None,
) -> FolderPlacement:
    """A copy of ``model`` with an SVM for each folder of ``folders`` it was not fitted on.

    Parameters
    ----------
    model : FolderPlacement
        Fitted; it is not changed.
    X : sparse matrix or ndarray of shape (n_docs, n_terms)
        L2-normalised tf-idf rows in the model's term space (as :meth:`FolderPlacement.fit`
        takes them) of the labeled documents: the new folders' documents and the others
        their SVMs are trained against.
    folders : sequence of FolderPath or None, length n_docs
        Folder of each row; None rows are left out.
    sample_weight : ndarray of shape (n_docs,), optional
        Weight of each row's hinge loss, as in :meth:`FolderPlacement.fit`.

    Returns
    -------
    FolderPlacement
        ``model`` itself when every folder is known; otherwise a new model whose
        ``folders_`` (sorted) include the new ones. A new folder's ``labeled_per_folder_``
        is its rows here, its ``cv_labeled_per_folder_`` 0 (the cross-validated
        quantities did not see it, as with a reused ``cross_validated``).
    """
    model._check_fitted()
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.shape[0] != len(folders):
        raise ValueError(f"folders has {len(folders)} entries for {X.shape[0]} rows")
    if X.shape[1] != model.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} terms, the model has {model.n_features_in_}")
    labeled = [i for i, f in enumerate(folders) if f is not None]
    paths = [tuple(folders[i]) for i in labeled]  # type: ignore[arg-type]
    new = sorted(set(paths) - set(model.folders_))
    if not new:
        return model
    every = sorted(set(model.folders_) | set(new))
    index = {f: j for j, f in enumerate(every)}
    y = np.array([index[p] for p in paths], dtype=np.intp)
    sw = np.ones(len(labeled)) if sample_weight is None else np.asarray(sample_weight)[labeled]
    F = model._feature_rows(X[labeled])
    targets = np.array([index[f] for f in new], dtype=np.intp)
    if is_both(model.representation_):
        # Each block's SVM, as the model's own folders have: their decisions are the sum.
        coef_new, intercept_new = side_by_side(
            F, model.n_features_in_, lambda block, _: _new_svms(block, y, sw, targets, every, model)
        )
    else:
        coef_new, intercept_new = _new_svms(F, y, sw, targets, every, model)

    old = np.array([index[f] for f in model.folders_], dtype=np.intp)
    coef = np.zeros((len(every), model.coef_.shape[1]))
    coef[old], coef[targets] = model.coef_, coef_new
    intercept = np.full(len(every), -1.0)
    intercept[old], intercept[targets] = model.intercept_, intercept_new
    labeled_per_folder = np.zeros(len(every), dtype=np.intp)
    labeled_per_folder[old] = model.labeled_per_folder_
    labeled_per_folder[targets] = np.bincount(y, minlength=len(every))[targets]
    cv_labeled_per_folder = np.zeros(len(every), dtype=np.intp)
    cv_labeled_per_folder[old] = model.cv_labeled_per_folder_
    column = {j: int(i) for j, i in enumerate(old)}
    return _with_folders(
        model, every, coef, intercept, labeled_per_folder, cv_labeled_per_folder, column
    )


def _new_svms(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    sw: NDArray[np.float64],
    targets: NDArray[np.intp],
    every: list[FolderPath],
    model: FolderPlacement,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The SVMs of the folders ``targets`` on the features ``F``, sampled where the model's
    would be: coef (n_targets, n_features), intercept (n_targets,)."""
    if np.unique(y).size > 2 and y.size * len(every) > model.max_svm_pairs:
        coef, intercept, _ = sampled_one_vs_rest(
            F, y, C=model.C, sample_weight=sw, random_state=model.random_state,
            n_jobs=model.n_jobs, only=targets,
        )  # fmt: skip
        return coef, intercept
    return _one_vs_rest(F, y, sw, targets, model)


def _one_vs_rest(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    sw: NDArray[np.floating],
    targets: NDArray[np.intp],
    model: FolderPlacement,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each folder of ``targets`` against every other row, as liblinear's one-vs-rest
    trains it: coef (n_targets, n_features), intercept (n_targets,)."""
    coef = np.zeros((targets.size, F.shape[1]))
    intercept = np.full(targets.size, -1.0)
    for i, j in enumerate(targets):
        positive = y == j
        if positive.all():  # no other folder to tell it from
            intercept[i] = 1.0
            continue
        coef[i], intercept[i] = binary_svm(
            F, positive, sw, C=model.C, random_state=model.random_state
        )
    return coef, intercept


def remove_folders(model: FolderPlacement, folders: Collection[FolderPath]) -> FolderPlacement:
    """A copy of ``model`` without the SVMs of ``folders`` (those it knows; others are
    ignored).

    The other folders' SVMs stay as fitted: they learned the removed folders' documents as
    negatives, which a refit without those documents would not. Their decisions are the
    fit's, so the posteriors are the softmax over the remaining folders (``temperature_``
    as fitted). Rows of the fitted collection labeled with a removed folder become
    unlabeled.

    Returns ``model`` itself when it knows none of ``folders``; ``ValueError`` when no
    folder would remain.
    """
    model._check_fitted()
    gone = {tuple(f) for f in folders} & set(model.folders_)
    if not gone:
        return model
    keep = np.array([j for j, f in enumerate(model.folders_) if f not in gone], dtype=np.intp)
    if keep.size == 0:
        raise ValueError("removing every folder leaves no model; fit one instead")
    return _with_folders(
        model,
        [model.folders_[j] for j in keep],
        model.coef_[keep],
        model.intercept_[keep],
        model.labeled_per_folder_[keep],
        model.cv_labeled_per_folder_[keep],
        {int(j): i for i, j in enumerate(keep)},
    )


def _with_folders(
    model: FolderPlacement,
    folders: list[FolderPath],
    coef: NDArray[np.float64],
    intercept: NDArray[np.float64],
    labeled_per_folder: NDArray[np.intp],
    cv_labeled_per_folder: NDArray[np.intp],
    column: dict[int, int],
) -> FolderPlacement:
    """A copy of ``model`` whose per-folder state (one row or entry per folder of
    ``folders``) is the given; ``column`` maps the model's old columns to the new ones
    (rows of the fitted collection whose folder has none become unlabeled)."""
    changed = copy.copy(model)
    changed.__dict__.pop("_coef_t", None)  # cached transpose of the old coef_
    changed.folders_ = folders
    changed.coef_, changed.intercept_ = coef, intercept
    changed.labeled_per_folder_ = labeled_per_folder
    changed.cv_labeled_per_folder_ = cv_labeled_per_folder
    changed._fit_labels = [None if j is None else column.get(j) for j in model._fit_labels]
    return changed
