"""biHAC: term weights learned while clustering under MLB constraints (000 sec. 4, Fig. 5).

Each run clusters with the weights it started with (plain average-linkage HAC). While the
run's merges are replayed in order, every merge that violates a constraint for the first time
(both clusters clean so far) adapts the weights by 000 eq. 6-7 toward the closest admissible
partner of each cluster. The next run uses the adapted weights. Runs stop when a run adapts
nothing, when the cluster error (1 - H-correlation on the training constraints, 000 sec. 4.2)
has not improved for ``r_ni`` runs, or after ``r_max`` runs; the best run is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath, Hierarchy
from foldwise.core.constraints._constraints import Constraints, TripleSet
from foldwise.core.hac._bihac_kernel import closest_clusters, gradient_step, row_sum
from foldwise.core.hac._ihac import distances_of_unit_rows, ihac_from_distances, unit_rows
from foldwise.core.measures._h_correlation import h_correlation

RunProgress = Callable[[int, int], None]
"""Called as ``progress(run, r_max)`` after each biHAC run."""


@dataclass
class BiHACResult:
    """What :func:`bihac` learned.

    Attributes
    ----------
    linkage : ndarray of shape (n - 1, 4)
        The dendrogram of the best run.
    weights : ndarray of shape (n_terms,)
        The weights that run clustered with (w >= 0, sum = n_terms, 000 eq. 3).
    cluster_errors : list of float
        1 - H-correlation on the training constraints, per run.
    adaptations : list of int
        Weight updates made in each run.
    """

    linkage: NDArray[np.float64]
    weights: NDArray[np.float64]
    cluster_errors: list[float] = field(default_factory=list)
    adaptations: list[int] = field(default_factory=list)


class _ClusterState:
    """Merges replayed in order, with the constraint summary of each cluster.

    Cluster ids follow scipy: documents are 0..n-1, merge k makes cluster n + k.
    """

    def __init__(self, n: int, constraints: Constraints) -> None:
        self.n = n
        self.label = np.arange(n)  # current cluster id of each document
        self.members: dict[int, list[int]] = {i: [i] for i in range(n)}
        self.dirty = np.zeros(2 * n, dtype=bool)  # cluster already violated a constraint
        self.folders = constraints.folders
        self.nlab = np.zeros(2 * n, dtype=np.int64)
        self.lca = np.zeros(2 * n, dtype=np.int64)
        if self.folders is not None:
            labeled = self.folders.doc_folder >= 0
            self.nlab[:n] = labeled
            self.lca[:n] = np.where(labeled, self.folders.doc_folder, 0)
        self.triples = constraints.triples.as_array() if constraints.triples else None

    def violations(self, a: int, b: int) -> int:
        count = 0
        if self.folders is not None:
            count += self.folders.summary_violations(
                int(self.nlab[a]), int(self.lca[a]), int(self.nlab[b]), int(self.lca[b])
            )
        return count + self.triple_violations(a, b)

    def folder_violations(self, c: int, others: NDArray[np.intp]) -> NDArray[np.int64]:
        """Implied triples merging ``c`` with each of the clusters ``others`` would violate,
        shape (len(others),)."""
        if self.folders is None:
            return np.zeros(others.size, dtype=np.int64)
        return self.folders.summary_violations_many(
            int(self.nlab[c]), int(self.lca[c]), self.nlab[others], self.lca[others]
        )

    def triple_violations(self, a: int, b: int) -> int:
        """Explicit triples merging ``a`` and ``b`` would violate."""
        if self.triples is None:
            return 0
        lx, ly, lz = (self.label[self.triples[:, c]] for c in range(3))
        across = ((lx == a) & (lz == b)) | ((lx == b) & (lz == a))
        return int((across & (ly != a) & (ly != b)).sum())

    def merge(self, a: int, b: int, new: int, violated: bool) -> None:
        merged = self.members.pop(a) + self.members.pop(b)
        self.label[merged] = new
        self.members[new] = merged
        self.dirty[new] = self.dirty[a] or self.dirty[b] or violated
        self.nlab[new] = self.nlab[a] + self.nlab[b]
        if self.folders is not None and self.nlab[a] and self.nlab[b]:
            self.lca[new] = self.folders.lca(int(self.lca[a]), int(self.lca[b]))
        else:
            self.lca[new] = self.lca[a] if self.nlab[a] else self.lca[b]


class _PartnerSearch:
    """The unit rows of one run in CSC, for :func:`_closest_admissible`, with its scratch
    arrays and the folder arrays of the compiled admissibility test."""

    def __init__(self, U: sp.csr_matrix, state: _ClusterState) -> None:
        UT = sp.csc_matrix(U)  # row indices ascending in each column
        self.col_ptr, self.col_docs, self.col_data = UT.indptr, UT.indices, UT.data
        n = state.n
        self.sim = np.empty(2 * n)
        self.s_c = np.empty(U.shape[1], dtype=U.dtype)
        self.per_doc = np.empty(n, dtype=U.dtype)
        self.total = np.empty(2 * n)
        self.size = np.empty(2 * n, dtype=np.int64)
        folders = state.folders
        if folders is None:  # nlab is all zero: the arrays are never read
            empty = np.zeros(1, np.int32)
            self.folder_arrays = (np.full(1, -1, np.int32), empty, empty)
        else:
            self.folder_arrays = (folders.folder_parent, folders.folder_depth, folders.folder_total)


def _closest_admissible(
    state: _ClusterState, U: sp.csr_matrix, search: _PartnerSearch, c: int, exclude: int
) -> int | None:
    """The current cluster most similar to ``c`` (average cosine) that ``c`` may merge with.

    Average cosine between clusters is s_c . s_k / (|c| |k|), s the sum of unit rows; one
    compiled call (``closest_clusters``) sums c's rows, gives every cluster's similarity
    from the columns of s_c's terms, and finds the most similar cluster overall and among
    those the folders admit.
    """
    sim = search.sim
    best, admissible = closest_clusters(
        U.indptr, U.indices, U.data, np.asarray(state.members[c], dtype=np.intp),
        search.col_ptr, search.col_docs, search.col_data, state.label, c, exclude,
        sim, search.s_c, search.per_doc, search.total, search.size,
        state.nlab, state.lca, *search.folder_arrays,
    )  # fmt: skip
    if best < 0 or admissible < 0:
        return None
    if state.triples is None or (admissible == best and state.triple_violations(c, best) == 0):
        return admissible
    # Explicit triples one candidate at a time, in order of similarity (lowest id first
    # among equals): candidates the folders admit.
    candidates = np.flatnonzero(np.isfinite(sim))
    candidates = candidates[state.folder_violations(c, candidates) == 0]
    for k in candidates[np.argsort(-sim[candidates], kind="stable")]:
        if state.triple_violations(c, int(k)) == 0:
            return int(k)
    return None


def _row_sum(X: sp.csr_matrix, rows: list[int]) -> NDArray[np.float64]:
    """Sum of ``X[rows]``, shape (n_terms,), read straight from the CSR arrays (compiled:
    ``X[rows].sum(axis=0)`` builds a sparse matrix per call, and biHAC asks for thousands
    of cluster sums per run)."""
    return row_sum(X.indptr, X.indices, X.data, np.asarray(rows, dtype=np.intp), X.shape[1])


def _centroid(X: sp.csr_matrix, members: list[int]) -> NDArray[np.float64]:
    return _row_sum(X, members) / len(members)


def adapt_weights(
    w: NDArray[np.float64],
    cx: NDArray[np.float64],
    cy: NDArray[np.float64],
    cz: NDArray[np.float64],
    eta: float,
) -> NDArray[np.float64]:
    """One gradient step for the cluster triple (x, y, z): make x closer to y than to z.

    000 eq. 5-7 on centroids ``cx, cy, cz`` of shape (n_terms,), then the constraints of
    eq. 3 (negative weights set to 0, rescaled to sum to n_terms).
    """
    # 000 eq. 5-7, then eq. 6 and the first constraint of eq. 3, in one compiled pass.
    w = gradient_step(
        np.ascontiguousarray(w, dtype=np.float64),
        np.ascontiguousarray(cx, dtype=np.float64),
        np.ascontiguousarray(cy, dtype=np.float64),
        np.ascontiguousarray(cz, dtype=np.float64),
        float(eta),
    )
    total = w.sum()
    return w * (w.size / total) if total > 0 else np.ones_like(w)


def _training_error(
    Z: NDArray[np.float64], constraints: Constraints, labels: Sequence[FolderPath | None] | None
) -> float:
    """Cluster error: 1 - asymmetric, node-weighted H-correlation on the labeled documents,
    averaged with the share of explicit triples violated (000 sec. 4.2)."""
    errors = []
    dendrogram = Hierarchy.from_linkage(Z)
    if labels is not None:
        labeled = [i for i, p in enumerate(labels) if p is not None]
        if len(labeled) >= 3:
            reference = Hierarchy.from_paths([tuple(labels[i]) for i in labeled])  # type: ignore[arg-type]
            h = h_correlation(dendrogram.restrict(labeled), reference)
            if np.isfinite(h):
                errors.append(1.0 - h)
    if constraints.triples is not None:
        closed = constraints.triples
        errors.append(len(closed.violated_by(dendrogram)) / max(len(closed), 1))
    return float(np.mean(errors)) if errors else 0.0


#: Labeled documents from which a run's cluster error is computed beside the next run's
#: start (:func:`bihac`). Below, the error is a few milliseconds (800 labeled exemplars at
#: the 2k recluster bench: 10 ms a run), and the second thread's hand-offs cost more than
#: they save: that bench's first recluster took 4.34 s with it against 4.17 s without
#: (medians of six, docs/recluster.md "A run's error beside the next run's start").
ERROR_BESIDE_MIN_LABELED = 2_000


def _start_of_run(
    X: sp.csr_matrix, w: NDArray[np.float64]
) -> tuple[sp.csr_matrix, NDArray[np.floating]]:
    """A run's unit rows under ``w`` (n_docs, n_terms) and their cosine distances (n_docs,
    n_docs): what it clusters, and what its weight updates read."""
    U = sp.csr_matrix(unit_rows(X, w))
    return U, distances_of_unit_rows(U)


def _adapt_along(
    X: sp.csr_matrix,
    U: sp.csr_matrix,
    Z: NDArray[np.float64],
    w: NDArray[np.float64],
    constraints: Constraints,
    eta: float,
) -> tuple[NDArray[np.float64], int]:
    """Replay the run's merges ``Z`` (clustered with ``w``, unit rows ``U``); return the
    adapted weights and the number of adaptations."""
    n = X.shape[0]
    state = _ClusterState(n, constraints)
    search = _PartnerSearch(U, state)
    adapted = w.copy()
    n_adapt = 0
    for k in range(n - 1):
        a, b = int(Z[k, 0]), int(Z[k, 1])
        violated = state.violations(a, b) > 0
        if violated and not state.dirty[a] and not state.dirty[b]:
            # Each side is x of one step and z of the other: its centroid is summed once.
            sides = {c: _centroid(X, state.members[c]) for c in (a, b)}
            for c, other in ((a, b), (b, a)):
                partner = _closest_admissible(state, U, search, c, other)
                if partner is None:
                    continue
                cy = _centroid(X, state.members[partner])
                adapted = adapt_weights(adapted, sides[c], cy, sides[other], eta)
                n_adapt += 1
        state.merge(a, b, n + k, violated)
    return adapted, n_adapt


def bihac(
    X: sp.spmatrix | NDArray[np.floating],
    labels: Sequence[FolderPath | None] | None = None,
    triples: Iterable[Iterable[int]] | TripleSet | None = None,
    *,
    eta: float = 5.0,
    r_max: int = 50,
    r_ni: int = 10,
    max_pairs: int | None = None,
    progress: RunProgress | None = None,
) -> BiHACResult:
    """Learn term weights during constrained HAC (000 Fig. 5).

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_docs, n_terms)
        Document vectors (tf-idf rows).
    labels : sequence of folder paths or None, length n_docs
        Labeled documents' folders (None for new documents).
    triples : iterable of (x, y, z), optional
        Explicit MLB triples.
    eta : float, default=5.0
        Learning rate of 000 eq. 6 (the paper's value).
    r_max : int, default=50
        Maximum number of clustering runs (the paper's value).
    r_ni : int, default=10
        Stop after this many runs without a lower cluster error.
    max_pairs : int or None, default=None
        At most this many document pairs over all runs (each run clusters all n^2):
        ``r_max`` is lowered to ``max_pairs // n^2``, but never below 2 runs (one to learn
        from, one with what it learned). A run's time and memory grow with n^2, so this
        bounds the learning on large collections; None: the paper's runs.
    """
    if eta <= 0:
        raise ValueError(f"eta must be positive, got {eta!r}")
    if r_max < 1 or r_ni < 1:
        raise ValueError(f"r_max and r_ni must be >= 1, got {r_max!r}, {r_ni!r}")
    if max_pairs is not None and max_pairs < 1:
        raise ValueError(f"max_pairs must be >= 1 or None, got {max_pairs!r}")
    X = sp.csr_matrix(X, dtype=np.float64)
    n, n_terms = X.shape
    if n < 2:
        raise ValueError(f"need at least 2 documents to cluster, got {n}")
    constraints = Constraints.build(n, labels, triples)
    if max_pairs is not None:
        r_max = max(min(2, r_max), min(r_max, max_pairs // (n * n)))
    w = np.ones(n_terms)
    best: BiHACResult | None = None
    best_error = np.inf
    errors: list[float] = []
    adaptations: list[int] = []
    since_best = 0
    start = None
    # A run's cluster error is computed on a second thread while this one starts the next
    # run (its unit rows and distances), which needs only the adapted weights: the
    # error's H-correlation grows with the square of the labeled documents, as the
    # distances do with all of them (at 20,000 filed documents 1.2 and 0.9 s a run). Where
    # the runs stop, the started run is dropped. The same runs, in the same order.
    n_labeled = 0 if labels is None else sum(p is not None for p in labels)
    beside = n_labeled >= ERROR_BESIDE_MIN_LABELED
    with ThreadPoolExecutor(max_workers=1) as pool:
        for run in range(r_max):
            U, D = start if start is not None else _start_of_run(X, w)
            start = None
            Z, _ = ihac_from_distances(D)
            del D  # overwritten by iHAC: not held beside the next run's
            adapted, n_adapt = _adapt_along(X, U, Z, w, constraints, eta)
            del U
            if beside:
                error_of_run = pool.submit(_training_error, Z, constraints, labels)
                if n_adapt > 0 and run + 1 < r_max:
                    start = _start_of_run(X, adapted)
                error = error_of_run.result()
            else:
                error = _training_error(Z, constraints, labels)
            errors.append(error)
            adaptations.append(n_adapt)
            if best is None or error < best_error:
                best, best_error = BiHACResult(Z, w.copy()), error
                since_best = 0
            else:
                since_best += 1
            if progress is not None:
                progress(run + 1, r_max)
            if n_adapt == 0 or since_best >= r_ni:
                break
            w = adapted
    assert best is not None
    return BiHACResult(best.linkage, best.weights, errors, adaptations)
