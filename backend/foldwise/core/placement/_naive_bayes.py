"""A complement naive Bayes term beside the plain representation's SVMs: the "plain+nb"
representation of :class:`FolderPlacement` (docs/placement.md, "Naive Bayes beside the SVMs").

Where folders hold many documents of ordinary prose (20 Newsgroups: 60-90 filed posts per
folder) a tf-idf + LinearSVC misses posts that a naive Bayes model of the same rows gets
right, and the sum of the two decisions places about one post in a hundred more right than
either (Rennie et al. 2003, "Tackling the poor assumptions of naive Bayes text
classifiers": complement naive Bayes; the sum is the SVM's decision plus a multiple of the
naive Bayes log-likelihood). Where folders are documentation pages that share most of
their vocabulary the naive Bayes term costs as much: the representation selection tries
it on its plain folds and keeps it only where it places more held-out documents right
(``_representation``).

Both terms are linear in the features, so the blend is one coefficient matrix: everything
that reads the SVMs' decision values (temperature, calibration, novelty) reads the blend's.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.naive_bayes import ComplementNB

#: The representation: the plain one's features, its SVMs' decisions plus the naive Bayes term.
PLAIN_NB = "plain+nb"
#: Every representation a fitted model may have (``FolderPlacement.representation_``).
REPRESENTATIONS = ("latent", "plain", PLAIN_NB)
#: Weight of the naive Bayes term beside the SVMs' decisions once both have the same spread
#: over the training rows. Offline on 60% filed of 20 Newsgroups at 30, 100 (test split) and
#: 150 posts per group, five seeds each: .25 / .5 / 1 placed +0.8 / +1.0 / +1.3 points on 150,
#: +0.8 / +1.7 / +2.2 on 30, +0.6 / +0.9 / +1.0 on 100; python-docs -0.3 / -0.6 / -1.6.
NB_WEIGHT = 0.5
#: Additive smoothing of the complement counts (ComplementNB's alpha). The rows are
#: unit-length tf-idf, so a count is a fraction of a document: 1 would drown rare terms.
NB_ALPHA = 0.1


def with_naive_bayes(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    coef: NDArray[np.float64],
    intercept: NDArray[np.float64],
    present: NDArray[np.intp],
    sample_weight: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """The SVMs' coefficients ``coef`` (n_present, n_features) with the complement naive
    Bayes log weights of the rows ``F`` (n, n_features, non-negative) labeled ``y`` added,
    shape (n_present, n_features); ``present``: the folders of ``coef``'s rows, in order.

    The naive Bayes weights are centred over the folders, so that a row's decision values
    keep their mean (novelty reads the top value, not only the order), and scaled so that
    their decisions on the training rows spread as much as the SVMs' (each row's values
    centred first) before ``NB_WEIGHT`` is applied.
    """
    nb = ComplementNB(alpha=NB_ALPHA).fit(F, y, sample_weight=sample_weight)
    position = {int(c): i for i, c in enumerate(nb.classes_)}
    log_weights = nb.feature_log_prob_[[position[int(c)] for c in present]]
    log_weights = log_weights - log_weights.mean(axis=0)
    svm = np.asarray(F @ coef.T) + intercept
    svm -= svm.mean(axis=1, keepdims=True)
    bayes = np.asarray(F @ log_weights.T)
    spread = float(bayes.std())
    if spread == 0:  # every row empty, or one folder: nothing to add
        return coef
    scale = NB_WEIGHT * float(svm.std()) / spread
    return coef + scale * log_weights
