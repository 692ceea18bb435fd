"""Agglomerating Gaussian components into a hierarchy, and placing documents in it (003 sec. 3).

Level ``j = 1`` holds the K components; each higher level merges two clusters, whose density
and prior follow 003 eq. 7-8, until level K holds one cluster. A cluster is a set of
components, so every measure is computed exactly from the component parameters (L2,
modified L2) or from component posteriors (cluster confusion, sample dependent).

Component trees are scipy linkage matrices of shape (K - 1, 4): node ``k < K`` is component
``k``, node ``K + r`` the cluster made by merge ``r``, which creates level ``r + 2``. The
height of merge ``r`` is ``r + 1`` (level minus one): L2 values can invert, and cluster
confusion is a similarity, so the raw scores go in a separate array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.cluster.hierarchy import linkage as scipy_linkage

SIMILARITIES = ("l2", "modified_l2", "confusion", "sample")


@dataclass(frozen=True)
class LevelAssignment:
    """Where documents belong in a component hierarchy (003 sec. 3.1, eq. 9).

    Attributes
    ----------
    level : ndarray of shape (n_samples,), int
        Lowest level ``j`` (1 = the components, K = the root) at which one cluster holds
        posterior mass above rho. A high level means an uncertain document, to be placed
        in a broad folder.
    node : ndarray of shape (n_samples,), int
        That cluster, as a node of the component linkage.
    posterior : ndarray of shape (n_samples,)
        Its posterior ``P_j(k|x)``.
    """

    level: NDArray[np.intp]
    node: NDArray[np.intp]
    posterior: NDArray[np.float64]


def gaussian_overlap(
    means: NDArray[np.float64], covariances: NDArray[np.float64]
) -> NDArray[np.float64]:
    """G of 003 sec. 3.3.1: ``G_ab = int p(x|a) p(x|b) dx = N(mu_a - mu_b, Sigma_a + Sigma_b)``.

    Returned divided by its largest entry: overlaps of peaked densities in several dimensions
    overflow, and every use here only compares values built linearly from G.
    Shape (K, K).
    """
    K, d = means.shape
    logG = np.empty((K, K))
    for a in range(K):
        for b in range(a, K):
            cov = covariances[a] + covariances[b]
            L = np.linalg.cholesky(cov)
            sol = np.linalg.solve(L, means[a] - means[b])
            logdet = 2 * np.log(np.diag(L)).sum()
            logG[a, b] = logG[b, a] = -0.5 * (d * math.log(2 * math.pi) + logdet + sol @ sol)
    return np.exp(logG - logG.max())


def component_linkage(
    weights: NDArray[np.float64],
    means: NDArray[np.float64],
    covariances: NDArray[np.float64],
    similarity: str = "modified_l2",
    *,
    posteriors: NDArray[np.float64] | None = None,
    true_component: NDArray[np.intp] | None = None,
    rho: float = 0.9,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Agglomerate K Gaussian components (003 sec. 3.3-3.5).

    Parameters
    ----------
    weights : ndarray of shape (K,)
        Priors P(k).
    means : ndarray of shape (K, d)
    covariances : ndarray of shape (K, d, d)
    similarity : {"l2", "modified_l2", "confusion", "sample"}
        ``"l2"``: smallest ``D = (alpha - beta)' G (alpha - beta)`` on the prior-normalized
        cluster densities (003 eq. 10). ``"modified_l2"``: the same on prior-weighted
        densities, ``G~_ab = P(a) P(b) G_ab``. ``"confusion"``: highest probability of
        misassignment (003 eq. 11), estimated from ``posteriors`` of ancillary samples
        drawn from the model and the ``true_component`` each was drawn from.
        ``"sample"``: most documents whose sample dependent cluster (003 sec. 3.5, from
        ``posteriors`` of the documents) holds both clusters.
    posteriors : ndarray of shape (n_samples, K), optional
        Needed for ``"confusion"`` and ``"sample"``.
    true_component : ndarray of shape (n_samples,), int, optional
        Needed for ``"confusion"``.
    rho : float, default=0.9
        Threshold of the sample dependent clusters.

    Returns
    -------
    Z : ndarray of shape (K - 1, 4)
        Component tree (module docstring); column 3 counts components.
    scores : ndarray of shape (K - 1,)
        The dissimilarity (L2 measures) or similarity (the others) of each merge.

    Notes
    -----
    Cluster confusion and the sample measure are 0 for clusters that never share a sample
    (003 sec. 4: "many ancillary data are required" when overlap is small); such ties are
    broken by the modified L2 dissimilarity, so the tree stays defined.
    """
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}")
    K = weights.shape[0]
    G = gaussian_overlap(means, covariances)
    member = np.eye(K, dtype=bool)  # rows: current clusters, columns: components
    node = list(range(K))
    Z = np.empty((max(K - 1, 0), 4))
    scores = np.empty(max(K - 1, 0))
    for r in range(K - 1):
        tie_break = _l2_matrix(member * weights, G)
        if similarity == "l2":
            score = _l2_matrix(member * weights / (member @ weights)[:, None], G)
            a, b = _argmin_pair(score)
        elif similarity == "modified_l2":
            score = tie_break
            a, b = _argmin_pair(score)
        else:
            if posteriors is None:
                raise ValueError(f"similarity={similarity!r} needs posteriors")
            cluster_post = posteriors @ member.T
            if similarity == "confusion":
                if true_component is None:
                    raise ValueError("similarity='confusion' needs true_component")
                score = _confusion_matrix(cluster_post, member[:, true_component].argmax(axis=0))
            else:
                score = _sample_cooccurrence(cluster_post, rho)
            a, b = _argmax_pair(score, tie_break)
        scores[r] = score[a, b]
        Z[r] = (
            min(node[a], node[b]),
            max(node[a], node[b]),
            r + 1,
            member[a].sum() + member[b].sum(),
        )
        member[a] |= member[b]
        member = np.delete(member, b, axis=0)
        node[a] = K + r
        del node[b]
    return Z, scores


def node_members(Z: NDArray[np.float64], K: int) -> NDArray[np.bool_]:
    """Components under each node of a component tree. Shape (2K - 1, K)."""
    member = np.zeros((2 * K - 1, K), dtype=bool)
    member[np.arange(K), np.arange(K)] = True
    for r, (a, b) in enumerate(Z[:, :2].astype(np.intp)):
        member[K + r] = member[a] | member[b]
    return member


def assign_levels(
    posteriors: NDArray[np.float64], Z: NDArray[np.float64], rho: float = 0.9
) -> LevelAssignment:
    """Level assignment of 003 eq. 9 for documents with component posteriors P(k|x).

    A cluster's posterior ``P_j(k|x)`` is the sum of its components' posteriors (eq. 7-8),
    which only grows toward the root; so the lowest qualifying level is the earliest birth
    level among the nodes above rho. At level K the root holds all mass, so every document
    is placed (rho < 1).

    Parameters
    ----------
    posteriors : ndarray of shape (n_samples, K)
    Z : ndarray of shape (K - 1, 4)
    rho : float, default=0.9
        In (0, 1); the document is assigned to a wrong cluster with probability < 1 - rho.

    Returns
    -------
    LevelAssignment
    """
    if not 0 < rho < 1:
        raise ValueError(f"rho must be in (0, 1), got {rho!r}")
    K = posteriors.shape[1]
    node_post = posteriors @ node_members(Z, K).T.astype(np.float64)
    born = np.concatenate([np.ones(K), np.arange(2, K + 1)])  # level at which a node appears
    above = node_post > rho
    # the root always qualifies (mass 1 up to rounding)
    above[:, 2 * K - 2] = True
    # earliest birth among qualifying nodes; among equal births (rho < 0.5) the larger mass
    key = np.where(above, born[None, :] - node_post * 0.5, np.inf)
    best = key.argmin(axis=1)
    rows = np.arange(posteriors.shape[0])
    return LevelAssignment(born[best].astype(np.intp), best.astype(np.intp), node_post[rows, best])


def sample_dependent_clusters(
    posteriors: NDArray[np.float64], rho: float = 0.9
) -> NDArray[np.bool_]:
    """The sample dependent cluster of each document (003 sec. 3.5).

    The components with the largest posteriors, taken in descending order until their
    accumulated posterior ``A(l)`` first exceeds rho. Shape (n_samples, K).
    """
    if not 0 < rho < 1:
        raise ValueError(f"rho must be in (0, 1), got {rho!r}")
    order = np.argsort(-posteriors, axis=1, kind="stable")
    sorted_post = np.take_along_axis(posteriors, order, axis=1)
    before = np.cumsum(sorted_post, axis=1) - sorted_post  # A(l - 1)
    take = before <= rho
    take[:, 0] = True
    out = np.zeros_like(posteriors, dtype=bool)
    np.put_along_axis(out, order, take, axis=1)
    return out


def document_linkage(
    Zc: NDArray[np.float64], component: NDArray[np.intp], coords: NDArray[np.float64]
) -> NDArray[np.float64]:
    """A dendrogram over the documents that follows a component tree.

    The documents of each component are joined by average linkage on ``coords``; then the
    component subtrees are joined in the component tree's merge order (components without
    documents are skipped). Heights below 1 are within-component distances scaled by the
    largest of them (times 0.99); the component merge that creates level ``j`` sits at height
    ``j - 1``, so cutting between heights ``j - 1`` and ``j`` gives the level-``j`` clusters.

    Parameters
    ----------
    Zc : ndarray of shape (K - 1, 4)
        Component tree.
    component : ndarray of shape (n_samples,), int
        Component of each document.
    coords : ndarray of shape (n_samples, d)

    Returns
    -------
    Z : ndarray of shape (n_samples - 1, 4)
    """
    n = component.shape[0]
    K = Zc.shape[0] + 1
    local: list[tuple[NDArray[np.intp], NDArray[np.float64]]] = []
    for k in range(K):
        idx = np.flatnonzero(component == k)
        if idx.size >= 2:
            local.append((idx, scipy_linkage(coords[idx], method="average")))
        else:
            local.append((idx, np.empty((0, 4))))
    h_max = max((float(z[:, 2].max()) for _, z in local if z.size), default=0.0)
    scale = 0.99 / h_max if h_max > 0 else 0.0
    Z = np.empty((max(n - 1, 0), 4))
    row = 0
    top: list[int | None] = []  # document-tree node of each component-tree node
    for idx, z in local:
        m = idx.size
        if m == 0:
            top.append(None)
            continue
        ids = np.concatenate([idx, n + row + np.arange(m - 1)])
        for a, b, h, c in z:
            ia, ib = ids[int(a)], ids[int(b)]
            Z[row] = (min(ia, ib), max(ia, ib), h * scale, c)
            row += 1
        top.append(int(ids[-1]) if m >= 2 else int(idx[0]))
    size = np.bincount(component, minlength=K).tolist()
    for r, (a, b, _, _) in enumerate(Zc):
        ta, tb = top[int(a)], top[int(b)]
        size.append(size[int(a)] + size[int(b)])
        if ta is None or tb is None:
            top.append(ta if tb is None else tb)
            continue
        Z[row] = (min(ta, tb), max(ta, tb), r + 1.0, size[-1])
        top.append(n + row)
        row += 1
    return _sorted_by_height(Z)


def _sorted_by_height(Z: NDArray[np.float64]) -> NDArray[np.float64]:
    """The same tree with rows in height order, as scipy expects of a linkage.

    A stable sort keeps every child row before its parent (children are never higher and,
    when equally high, were written first); node ids are renumbered to the new rows.
    """
    n = Z.shape[0] + 1
    order = np.argsort(Z[:, 2], kind="stable")
    new_id = np.arange(2 * n - 1)
    new_id[n + order] = n + np.arange(n - 1)
    out = Z[order].copy()
    ids = new_id[out[:, :2].astype(np.intp)]
    out[:, 0], out[:, 1] = ids.min(axis=1), ids.max(axis=1)
    return out


def _l2_matrix(W: NDArray[np.float64], G: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(w_l - w_m)' G (w_l - w_m)`` for all cluster pairs; W has one row per cluster."""
    M = W @ G @ W.T
    diag = np.diag(M)
    return diag[:, None] + diag[None, :] - 2 * M


def _confusion_matrix(
    cluster_post: NDArray[np.float64], true_cluster: NDArray[np.intp]
) -> NDArray[np.float64]:
    """E(l, m) of 003 eq. 11: share of samples drawn from one cluster and put in the other."""
    c = cluster_post.shape[1]
    est = cluster_post.argmax(axis=1)
    counts = np.bincount(true_cluster * c + est, minlength=c * c).reshape(c, c)
    return (counts + counts.T) / max(true_cluster.shape[0], 1)


def _sample_cooccurrence(cluster_post: NDArray[np.float64], rho: float) -> NDArray[np.float64]:
    """Share of documents whose sample dependent cluster (003 sec. 3.5) holds both clusters."""
    take = sample_dependent_clusters(cluster_post, rho).astype(np.float64)
    return (take.T @ take) / max(cluster_post.shape[0], 1)


def _argmin_pair(score: NDArray[np.float64]) -> tuple[int, int]:
    s = score.copy()
    np.fill_diagonal(s, np.inf)
    a, b = np.unravel_index(int(np.argmin(s)), s.shape)
    return (int(a), int(b)) if a < b else (int(b), int(a))


def _argmax_pair(score: NDArray[np.float64], tie_break: NDArray[np.float64]) -> tuple[int, int]:
    """Highest ``score``; among equal scores the smallest ``tie_break``."""
    s = score.astype(np.float64).copy()
    np.fill_diagonal(s, -np.inf)
    best = s.max()
    cand = np.isclose(s, best, rtol=0, atol=1e-12) & ~np.eye(s.shape[0], dtype=bool)
    return _argmin_pair(np.where(cand, tie_break, np.inf))
