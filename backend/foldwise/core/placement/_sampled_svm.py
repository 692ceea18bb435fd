"""One-vs-rest linear SVMs whose cost does not multiply documents by folders.

liblinear's one-vs-rest trains one binary SVM per folder on every labeled document, so a fit
costs about documents x folders: 6 s for 20,000 documents in 200 folders, half an hour of
CPU projected for 100,000 in 1,000 (docs/recluster.md, "Where it stops scaling"). Most of
those negatives are far from the folder's boundary and only add their hinge loss of zero.

Here each folder's SVM sees its own documents, the negatives that shape its boundary, and
``n_random`` of the remaining documents drawn at random, each weighing for the
``n_rest / n_random`` it stands for, so that decision values stay near the full model's
scale, which the softmax temperature, calibration and novelty model read. The boundary's
negatives come from a first pass (the documents of the folders whose centroids are
nearest): the second trains against the documents the first scores highest, the support
vectors of the full model, as in negative mining for extreme classification (Jain et al.,
"Slice", WSDM 2019; Babbar and Schoelkopf, "DiSMEC", WSDM 2017). On a generated archive of
100,000 documents in 1,000 folders (docs/recluster.md): full one-vs-rest .769 exact in
596 s, the first pass alone .705 in 15 s, both passes .768. Cost: two passes of
folders x (own + hard + random) rows, and one of documents x folders decision values.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray
from sklearn.preprocessing import normalize
from sklearn.svm import _liblinear  # see binary_svm

from foldwise.core.placement._decision_kernel import decision_rows

#: liblinear's stopping tolerance for the sampled SVMs: 1e-2, not LinearSVC's 1e-4. On the
#: service's features of the generated 100,000-document archive one sampled fit of 1,000
#: folders took 32.5 s of CPU at 1e-4 and 24.2 s at 1e-2 (liblinear's iterations 82,000 ->
#: 40,000), placing held-out documents as well (.7235, .7233). Forced onto the sampled SVMs,
#: four real hierarchies (python-docs, Ansible, two PHP manuals; 3 seeds each) kept their
#: representation and temperature in all 12 runs and their held-out placement in 11 (one
#: more of 890 PHP pages right in the twelfth); at liblinear's own default for the dual
#: solver (0.1) two of the 12 chose the other representation (docs/recluster.md, "A looser
#: tolerance for the sampled SVMs").
SAMPLED_TOL = 1e-2

#: Held by every liblinear fit of the core. scikit-learn's liblinear draws its coordinate
#: order from one process-wide Mersenne twister (``svm/src/newrand``), seeded at the start
#: of each fit, and trains without the GIL: two fits on two threads draw from it in turn,
#: so each got another order than alone, and a recluster's SVMs (up to 9e-6 in a
#: coefficient, 1e-3 in a confidence shown) changed from one run to the next with the
#: threads' timing. One fit at a time makes each fit depend on its own seed only: seeded,
#: deterministic reclusters (docs/placement.md, "Deterministic fits").
LIBLINEAR_LOCK = threading.Lock()


def sampled_one_vs_rest(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    *,
    C: float,
    sample_weight: NDArray[np.float64] | None = None,
    n_near: int = 20,
    n_hard: int = 2000,
    n_random: int = 1000,
    random_state: int = 0,
    n_jobs: int | None = None,
    only: NDArray[np.intp] | None = None,
    tol: float = SAMPLED_TOL,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """Binary SVMs of each class present in ``y`` against its hardest negatives and a sample.

    Two passes. The first trains each class against every row of its ``n_near`` nearest
    classes (centroid cosine) and ``n_random`` other rows; the second against the
    ``n_hard`` rows of other classes the first scores highest (the rows that would be the
    full model's support vectors) and ``n_random`` others. Sampled rows weigh for the rows
    they stand for. :func:`first_pass` and :func:`second_pass` are the two passes, for a
    caller that looks at the first before it pays for the second.

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
    n_near : int, default=20
        First pass: classes whose every row is a negative of a class.
    n_hard : int, default=2000
        Second pass: negatives of a class taken by their first-pass decision value.
    n_random : int, default=1000
        Rows drawn from the remaining ones, per class and pass.
    random_state : int, default=0
        Seed of the draws (class ``j`` draws with ``random_state + j``) and of liblinear.
    n_jobs : int or None, default=None
        Threads the classes' SVMs are spread over (liblinear releases the GIL), as joblib
        counts them; None or 1: one after the other. The SVMs do not depend on it: the
        draws are seeded per class, and liblinear's own fits take turns
        (:data:`LIBLINEAR_LOCK`) while the rows of the next are gathered.
    only : ndarray of int, optional
        The classes (values of ``y``) whose SVMs are fitted, the others' rows serving only
        as negatives; each is fitted as it would be among all (the same rows, draws and
        seed). Default: every class of ``y``.
    tol : float, default=SAMPLED_TOL
        liblinear's stopping tolerance for each binary SVM (:data:`SAMPLED_TOL`).

    Returns
    -------
    coef : ndarray of shape (n_fitted, n_features)
    intercept : ndarray of shape (n_fitted,)
    classes : ndarray of shape (n_fitted,), int
        The classes fitted, sorted: row ``i`` of ``coef`` belongs to ``classes[i]``.
    """
    first = first_pass(
        F, y, C=C, sample_weight=sample_weight, n_near=n_near, n_random=n_random,
        random_state=random_state, n_jobs=n_jobs, only=only, tol=tol,
    )  # fmt: skip
    return second_pass(
        F, y, first, C=C, sample_weight=sample_weight, n_hard=n_hard, n_random=n_random,
        random_state=random_state, n_jobs=n_jobs, tol=tol,
    )  # fmt: skip


@dataclass(eq=False)
class FirstPass:
    """The first pass's SVMs of :func:`sampled_one_vs_rest`: ``coef`` (n_fitted,
    n_features), ``intercept`` (n_fitted,), ``classes`` (n_fitted,) the values of ``y``
    they belong to, sorted. Not compared by value (``eq=False``): it holds arrays."""

    coef: NDArray[np.float64]
    intercept: NDArray[np.float64]
    classes: NDArray[np.intp]


def first_pass(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    *,
    C: float,
    sample_weight: NDArray[np.float64] | None = None,
    n_near: int = 20,
    n_random: int = 1000,
    random_state: int = 0,
    n_jobs: int | None = None,
    only: NDArray[np.intp] | None = None,
    tol: float = SAMPLED_TOL,
) -> FirstPass:
    """:func:`sampled_one_vs_rest`'s first pass: each class against every row of its
    ``n_near`` nearest classes and ``n_random`` others (parameters as there)."""
    classes, yi, members, sw = _classes(y, sample_weight)
    k = classes.size
    targets = np.arange(k) if only is None else np.flatnonzero(np.isin(classes, only))
    indicator = sp.csr_matrix((np.ones(yi.size), (yi, np.arange(yi.size))), shape=(k, yi.size))
    similar = _cosines(normalize(indicator @ F), targets)
    similar[np.arange(targets.size), targets] = -np.inf
    near = np.argsort(-similar, axis=1, kind="stable")[:, : min(n_near, k - 1)]
    negatives = [np.concatenate([members[c] for c in row]) for row in near]
    coef, intercept = _fit_each(
        F, sw, members, targets, negatives,
        C=C, n_random=n_random, random_state=random_state, n_jobs=n_jobs, tol=tol,
    )  # fmt: skip
    return FirstPass(coef, intercept, classes[targets])


def second_pass(
    F: sp.csr_matrix,
    y: NDArray[np.intp],
    first: FirstPass,
    *,
    C: float,
    sample_weight: NDArray[np.float64] | None = None,
    n_hard: int = 2000,
    n_random: int = 1000,
    random_state: int = 0,
    n_jobs: int | None = None,
    tol: float = SAMPLED_TOL,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """:func:`sampled_one_vs_rest`'s second pass after ``first`` (fitted on the same ``F``
    and ``y``): each class against the ``n_hard`` rows of other classes the first scores
    highest and ``n_random`` others. Returns (coef, intercept, classes) as there; ``first``
    gives up its coefficients (classes x features, 160 MB at 1,000 x 20,000) to the mining,
    so that they are not held beside the second's."""
    classes, _, members, sw = _classes(y, sample_weight)
    targets = np.flatnonzero(np.isin(classes, first.classes))
    if not np.array_equal(classes[targets], first.classes):
        raise ValueError("the first pass was fitted on other classes")
    coef, first.coef = first.coef, np.zeros((0, F.shape[1]))
    hard = _hardest_negatives(F, members, coef, first.intercept, n_hard, targets, n_jobs=n_jobs)
    del coef
    coef, intercept = _fit_each(
        F, sw, members, targets, hard,
        C=C, n_random=n_random, random_state=random_state, n_jobs=n_jobs, tol=tol,
    )  # fmt: skip
    return coef, intercept, classes[targets]


def _classes(
    y: NDArray[np.intp], sample_weight: NDArray[np.float64] | None
) -> tuple[NDArray[np.intp], NDArray[np.intp], list[NDArray[np.intp]], NDArray[np.float64]]:
    """The classes of ``y`` (sorted), each row's index among them, each class's rows, and
    the rows' weights (ones by default)."""
    classes, yi = np.unique(y, return_inverse=True)
    n, k = yi.size, classes.size
    if k < 2:
        raise ValueError("sampled_one_vs_rest needs at least two classes")
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    members = np.split(np.argsort(yi, kind="stable"), np.cumsum(np.bincount(yi, minlength=k))[:-1])
    return classes, yi, members, sw


def _cosines(centroids: sp.csr_matrix, targets: NDArray[np.intp]) -> NDArray[np.float64]:
    """Dot products of the rows ``targets`` of ``centroids`` (unit rows, (k, n_features))
    with every row: shape (n_targets, k).

    Dense, a block of columns at a time: 1,000 centroids of the generated
    100,000-document archive hold 2.2 million of their 21.5 million entries, and the sparse
    product of them took 4.4 s against 1.5 s (one thread), agreeing to 2e-15 and giving
    every class the same nearest classes (docs/recluster.md, "The selection on the first
    pass"). A block is 33 MB at 1,000 classes.
    """
    by_column = centroids.tocsc()
    similar = np.zeros((targets.size, centroids.shape[0]))
    for start in range(0, by_column.shape[1], _COLUMN_BLOCK):
        block = by_column[:, start : start + _COLUMN_BLOCK].toarray()
        similar += block[targets] @ block.T
    return similar


def _fit_each(
    F: sp.csr_matrix,
    sw: NDArray[np.float64],
    members: list[NDArray[np.intp]],
    targets: NDArray[np.intp],
    hard: list[NDArray[np.intp]],
    *,
    C: float,
    n_random: int,
    random_state: int,
    n_jobs: int | None,
    tol: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Class ``targets[i]`` against the rows ``hard[i]`` (weight 1) and ``n_random`` of the
    others (weight ``n_others / n_random``): coef (n_targets, n_features), intercept
    (n_targets,)."""
    n = sw.size
    coef = np.zeros((targets.size, F.shape[1]))
    intercept = np.zeros(targets.size)

    def fit(i: int) -> None:
        j = int(targets[i])
        taken = np.zeros(n, dtype=bool)
        taken[members[j]] = taken[hard[i]] = True
        rest = np.flatnonzero(~taken)
        rng = np.random.default_rng(random_state + j)
        if rest.size > n_random:
            drawn, scale = rng.choice(rest, size=n_random, replace=False), rest.size / n_random
        else:
            drawn, scale = rest, 1.0
        rows = np.concatenate([members[j], np.sort(hard[i]), np.sort(drawn)])
        target = np.zeros(rows.size, dtype=np.intp)
        target[: members[j].size] = 1
        weight = sw[rows].copy()
        weight[members[j].size + hard[i].size :] *= scale
        coef[i], intercept[i] = binary_svm(
            F[rows], target, weight, C=C, random_state=random_state, tol=tol
        )

    if n_jobs is None or n_jobs == 1:
        for i in range(targets.size):
            fit(i)
    else:  # each class writes its own row: the threads share nothing else
        Parallel(n_jobs=n_jobs, prefer="threads")(delayed(fit)(i) for i in range(targets.size))
    return coef, intercept


def binary_svm(
    F: sp.csr_matrix,
    positive: NDArray[np.integer] | NDArray[np.bool_],
    weight: NDArray[np.floating],
    *,
    C: float,
    random_state: int,
    tol: float = 1e-4,
) -> tuple[NDArray[np.float64], float]:
    """One liblinear SVM of the rows marked ``positive`` against the others: coef
    (n_features,), intercept. Not converging within liblinear's iterations is not an
    error here: the one-vs-rest fits stop there too.

    The SVM of ``LinearSVC(C=C, random_state=random_state).fit(F, positive,
    sample_weight=weight)``, bit for bit (tests/core/test_sampled_svm.py), from liblinear's
    own entry point in scikit-learn (``sklearn.svm._liblinear.train_wrap``, the call
    ``sklearn.svm._base._fit_liblinear`` makes with LinearSVC's defaults). LinearSVC's
    checks of its input (finite values, targets, labels, class and sample weights) took a
    fifth of each fit of ~3,000 rows, and the sampled SVMs of 1,000 folders are 2,000 such
    fits: about 28 of the 129 s those took in the first recluster of 100,000 documents
    (docs/recluster.md, "liblinear called directly"). ``tol`` is LinearSVC's by default.
    """
    X = sp.csr_matrix(F, dtype=np.float64)
    if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
        # liblinear reads the index arrays as C ints, as LinearSVC requires them.
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), X.shape)
    target = np.asarray(positive, dtype=np.float64).ravel()
    if target.size != X.shape[0] or not np.isin(target, (0.0, 1.0)).all():
        raise ValueError("positive must mark each row of F with 0 / 1 or False / True")
    if target.min() == target.max():
        raise ValueError("a binary SVM needs positive and negative rows")
    w = np.ascontiguousarray(weight, dtype=np.float64)
    if w.shape != target.shape:  # liblinear reads one weight per row, unchecked
        raise ValueError(f"weight has shape {w.shape}, F has {X.shape[0]} rows")
    # LinearSVC's dual="auto" (its default since scikit-learn 1.5, the project's floor): the
    # dual problem when there are fewer rows than features.
    solver = _DUAL_L2_SQUARED_HINGE if X.shape[0] < X.shape[1] else _PRIMAL_L2_SQUARED_HINGE
    # LinearSVC's tol, intercept_scaling (the bias feature), class weights, max_iter and
    # epsilon (unused by this loss), and its seed drawn from ``random_state``.
    seed = np.random.RandomState(random_state).randint(np.iinfo("i").max)
    with LIBLINEAR_LOCK:
        _liblinear.set_verbosity_wrap(0)  # liblinear prints its progress unless told not to
        raw, _ = _liblinear.train_wrap(
            X, target, True, solver, tol, 1.0, C, np.ones(2), 1000, seed, 0.1, w
        )
    return raw[0, :-1], float(raw[0, -1])


#: liblinear's solver numbers for an L2-regularised squared hinge loss, dual and primal
#: (``sklearn.svm._base._get_liblinear_solver_type``).
_DUAL_L2_SQUARED_HINGE, _PRIMAL_L2_SQUARED_HINGE = 1, 2


#: Classes scored at a time when mining hard negatives: a (n_docs, 64) block of decision
#: values (50 MB at 100,000 documents) instead of all (800 MB at 1,000 classes).
_CLASS_BLOCK = 64

#: Columns of the class centroids made dense at a time for their cosines (:func:`_cosines`).
_COLUMN_BLOCK = 4096


def _hardest_negatives(
    F: sp.csr_matrix,
    members: list[NDArray[np.intp]],
    coef: NDArray[np.float64],
    intercept: NDArray[np.float64],
    n_hard: int,
    targets: NDArray[np.intp],
    *,
    n_jobs: int | None = None,
) -> list[NDArray[np.intp]]:
    """Per class ``targets[i]`` (its SVM ``coef[i]``), the ``n_hard`` rows of other classes
    with the highest decision values; ``members[j]``: the rows of class ``j``.

    Blocks of :data:`_CLASS_BLOCK` classes are spread over ``n_jobs`` threads, each with
    its own buffer (the kernel and numpy's partition release the GIL). The mining ran on
    one thread while the other core idled: 2.3 and 4.3 s of the 39 s the service's
    placement model took alone on the generated 100,000-document archive
    (docs/recluster.md, "Hard negatives on both cores"). Each block's result does not
    depend on the thread that computed it.
    """
    F = sp.csr_matrix(F, dtype=np.float64)
    starts = list(range(0, coef.shape[0], _CLASS_BLOCK))

    def mine(share: list[int]) -> list[NDArray[np.intp]]:
        """The hard negatives of the blocks starting at ``share``, in class order."""
        found: list[NDArray[np.intp]] = []
        by_class = np.empty((min(_CLASS_BLOCK, coef.shape[0]), F.shape[0]))
        for start in share:
            stop = min(start + _CLASS_BLOCK, coef.shape[0])
            # One class's values contiguous: read as columns, each pass over a class's
            # 100,000 values touched a cache line per value (docs/recluster.md); written so
            # by the kernel, not transposed after the product.
            block = by_class[: stop - start]
            decision_rows(
                F.indptr, F.indices, F.data,
                np.ascontiguousarray(coef[start:stop].T), intercept[start:stop], block,
            )  # fmt: skip
            for c, d in enumerate(block):
                d[members[targets[start + c]]] = -np.inf
                finite = np.isfinite(d)
                if np.count_nonzero(finite) <= n_hard:
                    found.append(np.flatnonzero(finite))
                else:
                    found.append(np.argpartition(np.negative(d, out=d), n_hard)[:n_hard])
        return found

    threads = max(1, min(effective_n_jobs(n_jobs), len(starts)))  # joblib: -1 is every core
    if threads == 1:
        return mine(starts)
    # Each thread a contiguous run of blocks, so that the runs joined are in class order.
    shares = [share.tolist() for share in np.array_split(starts, threads)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return [hard for found in pool.map(mine, shares) for hard in found]
