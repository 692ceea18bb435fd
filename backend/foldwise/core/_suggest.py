"""Instant suggestions: a new document placed by the last fitted model, without a recluster.

A recluster fits a :class:`~foldwise.core.FolderPlacement` on its own tf-idf vocabulary
(:class:`~foldwise.core.TextFeatures`); kept as plain arrays (``to_arrays``), the two place a
document that arrives later in milliseconds (docs/recluster.md, "Instant suggestions"). What
is computed is what ``extended_tree`` serves for a document shown in an existing folder:
the most probable folder with its calibrated confidence, the runner-up, margin and pair mass,
and the confident depth (003 eq. 9). Proposals of new folders need a dendrogram and wait for
the next recluster.

Triples never apply here: they name documents of the fitted collection, and a new
document is none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._features import TextFeatures
from foldwise.core._hierarchy import FolderPath
from foldwise.core._levels import assign_folder_levels
from foldwise.core._placement import FolderPlacement, _log_softmax, _scale_columns


@dataclass(frozen=True)
class Suggestion:
    """Where the model puts one new document, and why.

    Attributes
    ----------
    folder : FolderPath
        The most probable existing folder (shown there, however uncertain).
    confidence : float
        Calibrated probability that ``folder`` is right
        (``FolderPlacement.calibrated_confidence`` of the top posterior).
    confident_folder : FolderPath
        The deepest folder the model is confident of (level assignment, 003 eq. 9, gated
        by ``known``); ``()`` is the root.
    runner_up : FolderPath or None
        The second most probable folder; ``None`` with a single folder.
    margin, pair_mass : float or None
        Posterior of ``folder`` minus / plus that of ``runner_up``.
    known : float
        Probability that the document belongs to an existing folder at all.
    terms : tuple of str
        The document's terms that add most to ``folder``'s SVM decision value, best first
        (readable names, ``TextFeatures.vocabulary_``); only terms that add.
    """

    folder: FolderPath
    confidence: float
    confident_folder: FolderPath
    runner_up: FolderPath | None
    margin: float | None
    pair_mass: float | None
    known: float
    terms: tuple[str, ...]


def suggest(
    features: TextFeatures,
    model: FolderPlacement,
    texts: Sequence[str],
    *,
    n_terms: int = 5,
) -> list[Suggestion]:
    """Suggestions for ``texts`` from fitted placement ``features`` and ``model``.

    Parameters
    ----------
    features : TextFeatures
        The features ``model`` was fitted on (same vocabulary, column order).
    model : FolderPlacement
    texts : sequence of str, length n_docs
    n_terms : int, default=5
        Explanation terms per document.

    Returns
    -------
    list of Suggestion, length n_docs
    """
    if len(texts) == 0:
        return []
    X = features.transform(texts)
    return suggest_rows(model, X, [str(t) for t in features.vocabulary_], n_terms=n_terms)


def suggest_rows(
    model: FolderPlacement,
    X: sp.spmatrix | NDArray[np.floating],
    term_names: Sequence[str],
    *,
    n_terms: int = 5,
) -> list[Suggestion]:
    """:func:`suggest` on feature rows ``X`` of shape (n_docs, n_terms) already computed."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if len(term_names) != X.shape[1]:
        raise ValueError(f"term_names has {len(term_names)} entries for {X.shape[1]} terms")
    if X.shape[0] == 0:
        return []
    D = model.decision_function(X)
    P = np.exp(_log_softmax(D / model.temperature_))
    known = model.known_proba(X)
    levels = assign_folder_levels(P, model.folders_, model.rho, known=known)
    calibrated = model.calibrated_confidence(P.max(axis=1))
    order = np.argsort(-P, axis=1, kind="stable")
    best = order[:, 0]
    contrib = term_contributions(model, X, best)
    out = []
    for i in range(X.shape[0]):
        j = int(best[i])
        runner = margin = pair_mass = None
        if P.shape[1] > 1:
            k = int(order[i, 1])
            runner = model.folders_[k]
            margin, pair_mass = float(P[i, j] - P[i, k]), float(P[i, j] + P[i, k])
        row = contrib.getrow(i)
        top = np.argsort(-row.data, kind="stable")[:n_terms]
        terms = tuple(term_names[int(row.indices[t])] for t in top if row.data[t] > 0)
        out.append(
            Suggestion(
                folder=model.folders_[j],
                confidence=float(min(1.0, max(0.0, calibrated[i]))),
                confident_folder=levels.folder[i],
                runner_up=runner,
                margin=margin,
                pair_mass=pair_mass,
                known=float(known[i]),
                terms=terms,
            )
        )
    return out


def term_contributions(
    model: FolderPlacement, X: sp.spmatrix, folders: NDArray[np.integer]
) -> sp.csr_matrix:
    """Each document term's share of the decision value of folder ``folders[i]``.

    The features are ``F = normalize([normalize(Xw), normalize(Xw C^T)])`` (``Xw``: the
    weighted tf-idf, ``C``: LSA directions), so the decision value minus the intercept is
    linear in the terms of ``Xw``: term ``t`` adds
    ``xw_t (coef_t / |xw| + (C^T coef_latent)_t / |xw C^T|) / s``, ``s`` the norm of the
    concatenation. The contributions of a row sum to its decision value minus intercept.

    Parameters
    ----------
    model : FolderPlacement
    X : sparse matrix of shape (n_docs, n_terms)
    folders : ndarray of shape (n_docs,), int
        Column of ``model.folders_`` whose decision value each row explains.

    Returns
    -------
    sparse matrix of shape (n_docs, n_terms), nonzero only at the document's terms
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    folders = np.asarray(folders, dtype=np.intp)
    Xw = _scale_columns(X, np.sqrt(model.term_weights_))
    n_terms = Xw.shape[1]
    a = np.sqrt(np.asarray(Xw.multiply(Xw).sum(axis=1)).ravel())
    C = model.components_
    coef_t = model.coef_[:, :n_terms]
    if C.shape[0]:
        L = np.asarray(Xw @ C.T)
        lat = np.linalg.norm(L, axis=1)
        used = np.unique(folders)
        # The latent part's weights pulled back to terms, only for the folders asked about.
        back = dict(zip(used.tolist(), model.coef_[used, n_terms:] @ C, strict=True))
    else:
        lat = np.zeros(X.shape[0])
        back = {}
    s = np.sqrt((a > 0).astype(float) + (lat > 0).astype(float))
    out = Xw.copy()
    for i in range(Xw.shape[0]):
        lo, hi = Xw.indptr[i], Xw.indptr[i + 1]
        if lo == hi or s[i] == 0:
            out.data[lo:hi] = 0.0
            continue
        idx, j = Xw.indices[lo:hi], int(folders[i])
        w = coef_t[j, idx] / a[i] if a[i] > 0 else np.zeros(hi - lo)
        if lat[i] > 0:
            w = w + back[j][idx] / lat[i]
        out.data[lo:hi] = Xw.data[lo:hi] * w / s[i]
    return out
