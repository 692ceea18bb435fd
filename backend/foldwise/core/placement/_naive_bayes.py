"""A complement naive Bayes term beside a representation's SVMs: the "plain+nb" and
"latent+nb" representations of :class:`FolderPlacement` (docs/placement.md, "Naive Bayes
beside the SVMs").

Where folders hold many documents of ordinary prose (20 Newsgroups: 60-90 filed posts per
folder) a tf-idf + LinearSVC misses posts that a naive Bayes model of the same rows gets
right, and the sum of the two decisions places about one post in a hundred more right than
either (Rennie et al. 2003, "Tackling the poor assumptions of naive Bayes text
classifiers": complement naive Bayes; the sum is the SVM's decision plus a multiple of the
naive Bayes log-likelihood). Where folders are documentation pages that share most of
their vocabulary the naive Bayes term costs as much: the representation selection tries
it in the chosen representation's folds and keeps it only where it places more held-out
documents right (``_representation``). Latent's features are the weighted tf-idf with LSA
coordinates appended; the term reads and weighs the tf-idf block only.

Both terms are linear in the features, so the blend is one coefficient matrix: everything
that reads the SVMs' decision values (temperature, calibration, novelty) reads the blend's.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

#: The suffix of a representation whose SVMs' decisions have the naive Bayes term added.
NB_SUFFIX = "+nb"
#: The plain representation with the term.
PLAIN_NB = "plain" + NB_SUFFIX
#: The latent representation with the term, on the tf-idf block of its features.
LATENT_NB = "latent" + NB_SUFFIX
#: The sum of "latent+nb" and "plain+nb", two SVMs side by side on their own features: one
#: linear model on the two feature blocks appended ([latent | plain],
#: ``FolderPlacement._features``; docs/placement.md, "Both representations at once").
BOTH_NB = "latent+plain" + NB_SUFFIX
#: Every representation a fitted model may have (``FolderPlacement.representation_``).
REPRESENTATIONS = ("latent", "plain", PLAIN_NB, LATENT_NB, BOTH_NB)
#: Weight of the naive Bayes term beside the SVMs' decisions once both have the same spread
#: over the training rows. Offline on 60% filed of 20 Newsgroups at 30, 100 (test split) and
#: 150 posts per group, five seeds each: .25 / .5 / 1 placed +0.8 / +1.0 / +1.3 points on 150,
#: +0.8 / +1.7 / +2.2 on 30, +0.6 / +0.9 / +1.0 on 100; python-docs -0.3 / -0.6 / -1.6.
NB_WEIGHT = 0.5


def base_representation(representation: str) -> str:
    """The features of ``representation`` ("latent", "plain" or "latent+plain"), with or
    without the term."""
    return representation.removesuffix(NB_SUFFIX)


def has_latent(representation: str) -> bool:
    """Whether ``representation``'s features hold latent's block: eta^2 term weights and
    LSA coordinates."""
    return base_representation(representation) in ("latent", "latent+plain")


def is_both(representation: str) -> bool:
    """Whether ``representation`` is the sum of latent's and plain's models (``BOTH_NB``)."""
    return representation == BOTH_NB


def has_naive_bayes(representation: str) -> bool:
    """Whether ``representation``'s SVMs have the naive Bayes term added."""
    return representation.endswith(NB_SUFFIX)


#: Training rows over which the naive Bayes decisions are scaled to the SVMs': an array of
#: (rows x folders) decisions, bounded where the SVMs are sampled (a kept "plain+nb" state
#: can meet a collection that has grown past ``max_svm_pairs``).
MAX_SPREAD_ROWS = 5_000
#: Additive smoothing of the complement counts (ComplementNB's alpha). The rows are
#: unit-length tf-idf, so a count is a fraction of a document: 1 would drown rare terms.
NB_ALPHA = 0.1


def naive_bayes_term(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    present: NDArray[np.intp],
    coef: NDArray[np.float64],
    intercept: NDArray[np.float64],
    sample_weight: NDArray[np.float64] | None = None,
    n_terms: int | None = None,
) -> NDArray[np.float64]:
    """What the naive Bayes term adds to the SVMs' coefficients of the first ``n_terms``
    features (all by default), shape (n_present, n_terms): the complement naive Bayes log
    weights of those columns of the rows ``F`` (n, n_features; non-negative there: the
    tf-idf block, where latent appends its LSA coordinates) labeled ``y``
    (``ComplementNB(alpha=NB_ALPHA)``'s ``feature_log_prob_``), weighted by
    ``sample_weight`` as the SVMs' hinge loss is.

    ``present``: the sorted folders of ``y``, and of the rows of the SVMs ``coef``
    (n_present, n_features) and ``intercept`` (n_present,). The weights are centred over
    the folders, so that a row's decision values keep their mean (novelty reads the top
    value, not only the order), and scaled so that their decisions spread ``NB_WEIGHT``
    times as much as the SVMs' over the training rows (each row's values centred first;
    at most ``MAX_SPREAD_ROWS`` of them, evenly spaced).

    Written out rather than fitted with scikit-learn's ``ComplementNB`` (which the tests
    compare it with) for memory. At 300 folders and 50,000 terms one such array is 120 MB;
    ``ComplementNB``'s fit peaked at 492 MB, this at 270 (the term, and a transposed copy
    while its decisions are measured), and cross-validation fits two folds at once.
    """
    folder = np.searchsorted(present, y)
    if not np.array_equal(present[np.minimum(folder, present.size - 1)], y):
        raise ValueError("present must be the sorted folders of y")
    weight = np.ones(y.size) if sample_weight is None else np.asarray(sample_weight, float)
    membership = sp.csr_matrix((weight, (folder, np.arange(y.size))), shape=(present.size, y.size))
    terms = F if n_terms is None or n_terms == F.shape[1] else F[:, :n_terms]
    term = np.asarray((membership @ terms).todense(), dtype=np.float64)  # each folder's sums
    # Complement counts, smoothed: every folder's sums but its own, plus alpha.
    np.subtract(term.sum(axis=0) + NB_ALPHA, term, out=term)
    log_totals = np.log(term.sum(axis=1, keepdims=True))
    np.log(term, out=term)
    term -= log_totals  # log P(term | another folder)
    term *= -1  # complement naive Bayes: a term rare outside the folder speaks for it
    term -= term.mean(axis=0)
    rows = np.unique(np.linspace(0, F.shape[0] - 1, min(F.shape[0], MAX_SPREAD_ROWS)).astype(int))
    sample = F[rows]
    svm = np.asarray(sample @ coef.T) + intercept
    svm -= svm.mean(axis=1, keepdims=True)
    sample_terms = sample if terms is F else sample[:, : terms.shape[1]]
    spread = float(np.asarray(sample_terms @ term.T).std())
    if spread == 0:  # empty rows, or one folder: nothing to add
        term[:] = 0.0
        return term
    term *= NB_WEIGHT * float(svm.std()) / spread
    return term
