"""One-vs-rest linear SVMs whose cost does not multiply documents by folders.

liblinear's one-vs-rest trains one binary SVM per folder on every labeled document, so a fit
costs about documents x folders: 6 s for 20,000 documents in 200 folders, half an hour of
CPU projected for 100,000 in 1,000 (docs/recluster.md, "Where it stops scaling"). Most of
those negatives are far from the folder's boundary and only add their hinge loss of zero.

Here each folder's SVM sees its own documents, every document of the ``n_near`` folders
whose centroids are nearest its own (the negatives that shape the boundary), and
``n_random`` of the remaining documents drawn at random, each weighing for the
``n_rest / n_random`` it stands for. The weighted hinge loss is an unbiased estimate of the
full one's, so decision values stay on the full model's scale, which the softmax
temperature, calibration and novelty model read. The same idea as negative sampling in
extreme classification (Jain et al., "Slice", WSDM 2019: negatives from the nearest labels).
Cost: folders x (own + near + random) rows instead of folders x documents.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC


def sampled_one_vs_rest(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    *,
    C: float,
    sample_weight: NDArray[np.float64] | None = None,
    n_near: int = 40,
    n_random: int = 1000,
    random_state: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """Binary SVMs of each class present in ``y`` against its nearest classes and a sample.

    Parameters
    ----------
    F : sparse matrix of shape (n_docs, n_features)
        Labeled rows, L2-normalised.
    y : ndarray of shape (n_docs,), int
        Class of each row; at least two classes.
    C : float
        liblinear's C, as ``LinearSVC(C=C)``.
    sample_weight : ndarray of shape (n_docs,), optional
        Weight of each row's hinge loss (ones by default); a sampled row also carries its
        ``n_rest / n_random``.
    n_near : int, default=40
        Classes whose every row is a negative of a class: those with the most similar
        centroids (cosine).
    n_random : int, default=1000
        Rows drawn from the other classes, per class.
    random_state : int, default=0
        Seed of the draws (class ``j`` draws with ``random_state + j``) and of liblinear.

    Returns
    -------
    coef : ndarray of shape (n_classes, n_features)
    intercept : ndarray of shape (n_classes,)
    classes : ndarray of shape (n_classes,), int
        The classes of ``y``, sorted: row ``i`` of ``coef`` belongs to ``classes[i]``.
    """
    classes, yi = np.unique(y, return_inverse=True)
    n, k = yi.size, classes.size
    if k < 2:
        raise ValueError("sampled_one_vs_rest needs at least two classes")
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    indicator = sp.csr_matrix((np.ones(n), (yi, np.arange(n))), shape=(k, n))
    centroids = normalize(indicator @ F)
    similar = (centroids @ centroids.T).toarray()  # cosines of the class centroids
    np.fill_diagonal(similar, -np.inf)
    members = np.split(np.argsort(yi, kind="stable"), np.cumsum(np.bincount(yi, minlength=k))[:-1])
    coef = np.zeros((k, F.shape[1]))
    intercept = np.zeros(k)
    for j in range(k):
        near = np.argsort(-similar[j], kind="stable")[: min(n_near, k - 1)]
        hard = np.concatenate([members[c] for c in near])
        taken = np.zeros(n, dtype=bool)
        taken[members[j]] = taken[hard] = True
        rest = np.flatnonzero(~taken)
        rng = np.random.default_rng(random_state + j)
        if rest.size > n_random:
            drawn, scale = rng.choice(rest, size=n_random, replace=False), rest.size / n_random
        else:
            drawn, scale = rest, 1.0
        rows = np.concatenate([members[j], hard, np.sort(drawn)])
        target = np.zeros(rows.size, dtype=np.intp)
        target[: members[j].size] = 1
        weight = sw[rows].copy()
        weight[members[j].size + hard.size :] *= scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm = LinearSVC(C=C, random_state=random_state).fit(
                F[rows], target, sample_weight=weight
            )
        coef[j], intercept[j] = svm.coef_[0], svm.intercept_[0]
    return coef, intercept, classes
