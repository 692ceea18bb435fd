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
from foldwise.core.placement._calibration import log_softmax
from foldwise.core.placement._kept import KEEP_MARGIN, kept_folders
from foldwise.core.placement._levels import assign_folder_levels
from foldwise.core.placement._placement import FolderPlacement, _scale_columns


@dataclass(frozen=True)
class Suggestion:
    """Where the model puts one new document, and why.

    Attributes
    ----------
    folder : FolderPath
        The most probable existing folder (shown there, however uncertain), or the one a
        tree showed it in while the recluster would keep it there
        (``suggest_rows(previous=...)``).
    confidence : float
        Calibrated probability that ``folder`` is right
        (``FolderPlacement.calibrated_confidence`` of its posterior).
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


#: "x is closer to the documents of folder ``a`` than to those of folder ``b``" (an answered
#: question, 001 sec. 3), as a restriction of one new document's admissible folders.
Closer = tuple[FolderPath, FolderPath]


def suggest(
    features: TextFeatures,
    model: FolderPlacement,
    texts: Sequence[str],
    *,
    n_terms: int = 5,
    closer: Sequence[Sequence[Closer]] | None = None,
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
    closer : sequence of length n_docs of sequences of (FolderPath, FolderPath), optional
        Per document, answers "closer to folder a than to folder b": its folders are
        restricted as ``FolderPlacement`` restricts those of a fitted row by a triple.

    Returns
    -------
    list of Suggestion, length n_docs
    """
    if len(texts) == 0:
        return []
    X = features.transform(texts)
    names = [str(t) for t in features.vocabulary_]
    return suggest_rows(model, X, names, n_terms=n_terms, closer=closer)


def suggest_rows(
    model: FolderPlacement,
    X: sp.spmatrix | NDArray[np.floating],
    term_names: Sequence[str],
    *,
    n_terms: int = 5,
    closer: Sequence[Sequence[Closer]] | None = None,
    previous: Sequence[FolderPath | None] | None = None,
    previous_confidence: Sequence[float] | NDArray[np.float64] | None = None,
    keep_margin: float = KEEP_MARGIN,
) -> list[Suggestion]:
    """:func:`suggest` on feature rows ``X`` of shape (n_docs, n_terms) already computed.

    With ``previous`` (per row, the existing folder a tree showed it in, or None) and
    ``previous_confidence`` (the calibrated confidence it was shown with there, 0-1), each
    suggestion's ``folder`` is where the recluster would show the row
    (``_kept.kept_folders``): the previous folder while the model's most probable one is
    within ``keep_margin`` of it, or shown below ``MIN_MOVE_CONFIDENCE`` or below
    ``previous_confidence``; ``confidence`` is that of the folder shown, and ``runner_up``
    the strongest other folder. A re-placement that follows this rule is not undone by
    the next recluster.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    if len(term_names) != X.shape[1]:
        raise ValueError(f"term_names has {len(term_names)} entries for {X.shape[1]} terms")
    if previous is not None and len(previous) != X.shape[0]:
        raise ValueError(f"previous has {len(previous)} entries for {X.shape[0]} rows")
    if previous_confidence is not None and len(previous_confidence) != X.shape[0]:
        raise ValueError(
            f"previous_confidence has {len(previous_confidence)} entries for {X.shape[0]} rows"
        )
    if X.shape[0] == 0:
        return []
    D = model.decision_function(X)
    P = np.exp(log_softmax(D / model.temperature_))
    if closer is not None:
        P = restrict_closer(P, model.folders_, closer)
    known = model.known_from_decisions(D)
    levels = assign_folder_levels(P, model.folders_, model.rho, known=known)
    order = np.argsort(-P, axis=1, kind="stable")
    best = order[:, 0]
    if previous is not None:
        best, _ = kept_folders(
            P,
            model.folders_,
            np.arange(X.shape[0]),
            [None if f is None else tuple(f) for f in previous],
            keep_margin,
            None
            if previous_confidence is None
            else np.asarray(previous_confidence, dtype=np.float64),
            model.calibrated_confidence,
        )
    calibrated = model.calibrated_confidence(P[np.arange(X.shape[0]), best])
    contrib = term_contributions(model, X, best)
    out = []
    for i in range(X.shape[0]):
        j = int(best[i])
        runner = margin = pair_mass = None
        if P.shape[1] > 1:
            # The strongest other folder: the most probable one where a kept folder is shown.
            k = int(order[i, 1] if order[i, 0] == j else order[i, 0])
            runner = model.folders_[k]
            margin, pair_mass = float(P[i, j] - P[i, k]), float(P[i, j] + P[i, k])
        lo, hi = contrib.indptr[i], contrib.indptr[i + 1]
        data, columns = contrib.data[lo:hi], contrib.indices[lo:hi]
        top = np.argsort(-data, kind="stable")[:n_terms]
        terms = tuple(term_names[int(columns[t])] for t in top if data[t] > 0)
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
    concatenation. "latent+plain+nb" appends plain's unit-length block, whose term ``t``
    adds ``xp_t coef_plain_t / |xp|`` (``xp``: plain's weighted tf-idf). The contributions
    of a row sum to its decision value minus intercept.

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
    # Per stored term (the non-zeros of Xw, row by row): its row and the folder asked about.
    row = np.repeat(np.arange(Xw.shape[0]), np.diff(Xw.indptr))
    idx, j = Xw.indices, folders[row]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(a[row] > 0, coef_t[j, idx] / a[row], 0.0)
        if C.shape[0]:
            lat = np.linalg.norm(np.asarray(Xw @ C.T), axis=1)
            used, position = np.unique(folders, return_inverse=True)
            # The latent part's weights pulled back to terms, only for the folders asked
            # about: (n_used, n_terms).
            back = model.coef_[used, n_terms : n_terms + C.shape[0]] @ C
            w += np.where(lat[row] > 0, back[position[row], idx] / lat[row], 0.0)
        else:
            lat = np.zeros(X.shape[0])
        s = np.sqrt((a > 0).astype(float) + (lat > 0).astype(float))
        data = np.where(s[row] > 0, Xw.data * w / s[row], 0.0)
    out = sp.csr_matrix((data, Xw.indices.copy(), Xw.indptr.copy()), shape=Xw.shape)
    Xp = model._plain_block(X)
    if Xp is None:
        return out
    # Plain's block: the last n_terms columns, on its own term weights.
    p = np.sqrt(np.asarray(Xp.multiply(Xp).sum(axis=1)).ravel())
    row = np.repeat(np.arange(Xp.shape[0]), np.diff(Xp.indptr))
    coef_p = model.coef_[:, -n_terms:][folders[row], Xp.indices]
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.where(p[row] > 0, Xp.data * coef_p / p[row], 0.0)
    return sp.csr_matrix(out + sp.csr_matrix((data, Xp.indices, Xp.indptr), shape=Xp.shape))


def restrict_closer(
    P: NDArray[np.float64], folders: Sequence[FolderPath], closer: Sequence[Sequence[Closer]]
) -> NDArray[np.float64]:
    """Posteriors ``P`` (n_docs, n_folders) with each row's folders that violate one of its
    answers set to zero and the rest renormalised.

    A folder f satisfies "closer to a than to b" iff f shares a strictly deeper common
    ancestor with a than with b (001 sec. 3, as ``FolderPlacement._apply_triples``). An
    answer that rules out every folder, or compares a folder with itself, says nothing and
    is skipped.
    """
    if len(closer) != P.shape[0]:
        raise ValueError(f"closer has {len(closer)} entries for {P.shape[0]} documents")
    P = P.copy()

    def depth(f: FolderPath, g: FolderPath) -> int:
        d = 0
        while d < min(len(f), len(g)) and f[d] == g[d]:
            d += 1
        return d

    for i, answers in enumerate(closer):
        for a, b in answers:
            a, b = tuple(a), tuple(b)
            if a == b:
                continue
            ok = np.array([depth(f, a) > depth(f, b) for f in folders])
            masked = P[i] * ok
            if ok.any() and masked.sum() > 0:
                P[i] = masked / masked.sum()
    return P
