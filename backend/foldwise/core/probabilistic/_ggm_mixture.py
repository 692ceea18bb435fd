"""The USGGM: a generalizable Gaussian mixture fit on labeled and unlabeled data (003 Fig. 1).

Means come from one half of the data and covariances from the other (split ratio gamma),
which is what keeps the modified EM from the infinite-likelihood overfit of plain EM
(003 sec. 2.1). Unlabeled documents weigh lambda (003 eq. 5). Without labels this is the
SGGM of 003 sec. 2.2 (lambda = 1 and no class terms).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.special import logsumexp
from sklearn.cluster import kmeans_plusplus


@dataclass(frozen=True)
class GeneralizableMixture:
    """A fitted USGGM.

    Attributes
    ----------
    weights : ndarray of shape (K,)
        Component priors P(k).
    means : ndarray of shape (K, d)
    covariances : ndarray of shape (K, d, d)
    class_given_component : ndarray of shape (K, C)
        P(y|k); ``C = 0`` without labels.
    nll : float
        Negative log-likelihood of 003 eq. 5 (unlabeled terms discounted by lambda).
    aic : float
        ``nll`` plus the number of free parameters (003 sec. 2.1).
    n_iter : int
    """

    weights: NDArray[np.float64]
    means: NDArray[np.float64]
    covariances: NDArray[np.float64]
    class_given_component: NDArray[np.float64]
    nll: float
    aic: float
    n_iter: int

    @property
    def n_components(self) -> int:
        return int(self.weights.shape[0])


def log_gaussian(
    Z: NDArray[np.float64], means: NDArray[np.float64], covariances: NDArray[np.float64]
) -> NDArray[np.float64]:
    """log p(x|k) of 003 eq. 2 for every row and component. Shape (n_samples, K)."""
    n, d = Z.shape
    out = np.empty((n, means.shape[0]))
    for k, (mu, cov) in enumerate(zip(means, covariances, strict=True)):
        L = np.linalg.cholesky(cov)
        # a triangular solve, not a general one: O(n d^2) without an LU per call
        sol = solve_triangular(L, (Z - mu).T, lower=True, check_finite=False)
        logdet = 2 * np.log(np.diag(L)).sum()
        out[:, k] = -0.5 * (d * math.log(2 * math.pi) + logdet + (sol * sol).sum(axis=0))
    return out


def component_posteriors(
    gm: GeneralizableMixture, Z: NDArray[np.float64], y: NDArray[np.intp] | None = None
) -> NDArray[np.float64]:
    """P(k|x) (003 eq. 4), or P(k|y, x) for rows with a label ``y >= 0``. Shape (n, K)."""
    log_joint = log_gaussian(Z, gm.means, gm.covariances) + np.log(_floor(gm.weights))
    if y is not None and gm.class_given_component.shape[1]:
        labeled = y >= 0
        log_joint[labeled] += np.log(_floor(gm.class_given_component[:, y[labeled]].T))
    return np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))


def overall_covariance(Z: NDArray[np.float64]) -> NDArray[np.float64]:
    """Sigma_0 of 003 Fig. 1 (init. step 3), made invertible if the data are degenerate.

    A rank-deficient Sigma_0 (identical documents, a constant coordinate) cannot regularize
    anything, so it gets a ridge of 1e-6 of its mean variance (or 1e-12 if that is 0), with
    a warning.
    """
    d = Z.shape[1]
    sigma0 = np.atleast_2d(np.cov(Z, rowvar=False, bias=True))
    eig = np.linalg.eigvalsh(sigma0)
    if eig[0] <= eig[-1] * d * np.finfo(float).eps:
        scale = float(np.trace(sigma0)) / d
        ridge = 1e-6 * scale if scale > 0 else 1e-12
        warnings.warn(
            f"the documents span fewer than {d} dimensions (smallest variance {eig[0]:.3g}); "
            f"adding {ridge:.3g} to the overall covariance",
            stacklevel=2,
        )
        sigma0 = sigma0 + ridge * np.eye(d)
    return sigma0


def regularize_covariance(
    cov: NDArray[np.float64], sigma0: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Sigma_k + alpha Sigma_0 with the smallest alpha >= 0 that makes cond < 1 / (d eps).

    003 sec. 2.1. The condition number falls monotonically toward cond(Sigma_0) as alpha
    grows, so a bracket and bisection in log alpha finds alpha to a few percent.
    """
    d = cov.shape[0]
    limit = 1.0 / (d * np.finfo(float).eps)

    def ok(alpha: float) -> bool:
        eig = np.linalg.eigvalsh(cov + alpha * sigma0)
        return bool(eig[0] > 0 and eig[-1] < limit * eig[0])

    if ok(0.0):
        return cov
    hi = 1e-12
    while not ok(hi):
        hi *= 10
        if hi > 1e12:  # cannot happen with a well-conditioned sigma0; stay safe anyway
            return sigma0.copy()
    lo = hi / 10
    for _ in range(8):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return cov + hi * sigma0


def n_parameters(n_components: int, n_dims: int, n_classes: int) -> int:
    """Free parameters: means, covariances, priors and P(y|k).

    003 sec. 2.1 counts ``K (d (d + 1) / 2 + C) - 1``; that leaves out the ``K d`` mean
    coordinates, which we count, so AIC is not biased toward more components.
    """
    K, d, C = n_components, n_dims, n_classes
    return K * d + K * d * (d + 1) // 2 + (K - 1) + K * max(C - 1, 0)


def fit_usggm(
    Z: NDArray[np.float64],
    y: NDArray[np.intp],
    n_components: int,
    *,
    n_classes: int,
    lambda_: float = 1.0,
    gamma: float = 0.5,
    max_iter: int = 100,
    tol: float = 1e-4,
    sigma0: NDArray[np.float64] | None = None,
    rng: np.random.Generator,
) -> GeneralizableMixture:
    """One USGGM fit (003 Fig. 1).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, d)
        Documents in the low-dimensional space.
    y : ndarray of shape (n_samples,), int
        Class code per document in ``0..n_classes-1``, ``-1`` for unlabeled.
    n_components : int
        K, ``1 <= K <= n_samples``.
    n_classes : int
        C; 0 for unsupervised learning (SGGM).
    lambda_ : float, default=1.0
        Discount of the unlabeled documents, in [0, 1] (003 eq. 5).
    gamma : float, default=0.5
        Split ratio, in (0, 1): the share of each data set used for the means.
    max_iter : int, default=100
        The loop stops earlier once no document changes component (003 sec. 2.1) or the
        negative log-likelihood changes by at most ``tol`` relative (003 footnote 3).
    tol : float, default=1e-4
    sigma0 : ndarray of shape (d, d), optional
        The overall covariance; computed from ``Z`` if omitted.
    rng : Generator
        Draws the initial means and the split.

    Returns
    -------
    GeneralizableMixture
    """
    n, d = Z.shape
    K = n_components
    C = n_classes
    labeled = y >= 0
    if sigma0 is None:
        sigma0 = overall_covariance(Z)
    # initialization, 003 Fig. 1 steps 2-6. Step 2 takes K random documents as means and
    # step 3 starts every component at Sigma_0. From that broad start the soft loop often
    # settles with one component over two clusters and two over one (our blob tests), so we
    # seed with k-means (k-means++ picks K random, spread-out documents, then Lloyd steps) and
    # take its hard assignments as the first responsibilities.
    means, start = _kmeans_start(Z, K, rng)
    first_resp = np.zeros((n, K))
    first_resp[np.arange(n), start] = 1.0
    covs = np.repeat(sigma0[None], K, axis=0)
    weights = np.full(K, 1.0 / K)
    y_onehot = np.zeros((n, C))
    y_onehot[np.flatnonzero(labeled), y[labeled]] = 1.0
    if C:
        class_prior = y_onehot[labeled].mean(axis=0)
        class_given = np.repeat(class_prior[None], K, axis=0)
    else:
        class_given = np.zeros((K, 0))
    first_half = np.zeros(n, dtype=bool)
    for part in (np.flatnonzero(labeled), np.flatnonzero(~labeled)):
        part = rng.permutation(part)
        first_half[part[: math.ceil(gamma * part.size)]] = True
    w = np.where(labeled, 1.0, lambda_)
    gm = GeneralizableMixture(weights, means, covs, class_given, math.inf, math.inf, 0)
    assigned = np.full(n, -1, dtype=np.intp)
    previous = math.inf
    for it in range(1, max_iter + 1):
        if it == 1:
            resp = first_resp
        else:
            resp, nll = _e_step(gm, Z, y, lambda_)  # step 1
            # 003 sec. 2.1 stops once no document changes component; footnote 3 allows a
            # likelihood criterion, which ends the runs where a few documents keep flipping
            unchanged = np.array_equal(resp.argmax(axis=1), assigned)
            if unchanged or abs(previous - nll) <= tol * abs(nll):
                break
            previous = nll
        assigned = resp.argmax(axis=1)
        wr = resp * w[:, None]
        # step 2: means from the first half
        mass1 = wr[first_half].sum(axis=0)
        new_means = np.where(
            mass1[:, None] > 0,
            (wr[first_half].T @ Z[first_half]) / np.maximum(mass1, 1e-300)[:, None],
            means,
        )
        # step 3: covariances from the second half around the new means
        Z2, wr2 = Z[~first_half], wr[~first_half]
        new_covs = np.empty_like(covs)
        for k in range(K):
            mass = wr2[:, k].sum()
            if mass < d + 1:
                # fewer than d + 1 documents cannot span d dimensions: such a covariance is
                # (near) singular, and the alpha rule of sec. 2.1 barely lifts it, so the
                # component would win any likelihood race with 2-3 documents. Sigma_0 makes
                # it broad instead; it then keeps documents only if it truly fits them.
                new_covs[k] = sigma0
                continue
            dev = Z2 - new_means[k]
            new_covs[k] = regularize_covariance((dev * wr2[:, k, None]).T @ dev / mass, sigma0)
        # step 4: priors from all data
        new_weights = wr.sum(axis=0) / w.sum()
        # step 5: class posteriors from the labeled data
        if C:
            mass_l = resp[labeled].sum(axis=0)
            class_given = (resp[labeled].T @ y_onehot[labeled]) / np.maximum(mass_l, 1e-300)[
                :, None
            ]
            class_given[mass_l <= 0] = class_prior
        means, covs, weights = new_means, new_covs, new_weights
        gm = GeneralizableMixture(weights, means, covs, class_given, math.inf, math.inf, it)
    nll = _e_step(gm, Z, y, lambda_)[1]
    aic = nll + n_parameters(K, d, C)
    return GeneralizableMixture(weights, means, covs, class_given, nll, aic, gm.n_iter)


def _e_step(
    gm: GeneralizableMixture, Z: NDArray[np.float64], y: NDArray[np.intp], lambda_: float
) -> tuple[NDArray[np.float64], float]:
    """Posteriors P(k|x) / P(k|y, x) (003 Fig. 1 step 1) and eq. 5, from one density pass."""
    log_joint = log_gaussian(Z, gm.means, gm.covariances) + np.log(_floor(gm.weights))
    labeled = y >= 0
    if labeled.any() and gm.class_given_component.shape[1]:
        log_joint[labeled] += np.log(_floor(gm.class_given_component[:, y[labeled]].T))
    log_norm = logsumexp(log_joint, axis=1)
    nll = -lambda_ * float(log_norm[~labeled].sum()) - float(log_norm[labeled].sum())
    return np.exp(log_joint - log_norm[:, None]), nll


def _kmeans_start(
    Z: NDArray[np.float64], K: int, rng: np.random.Generator, n_steps: int = 20
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """k-means++ seeds refined by Lloyd steps: means (K, d) and labels (n,).

    Plain numpy: scikit-learn's KMeans spends ~50 ms per call starting its thread pool,
    which dominates at the ~30 calls an AIC sweep makes.
    """
    centers, _ = kmeans_plusplus(Z, K, random_state=int(rng.integers(2**31 - 1)))
    sq = (Z * Z).sum(axis=1)
    labels = np.zeros(Z.shape[0], dtype=np.intp)
    for step in range(n_steps):
        dist = sq[:, None] - 2 * Z @ centers.T + (centers * centers).sum(axis=1)[None, :]
        new = dist.argmin(axis=1)
        if step and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=K)
        sums = np.zeros_like(centers)
        np.add.at(sums, labels, Z)
        filled = counts > 0
        centers[filled] = sums[filled] / counts[filled, None]
    return centers.astype(np.float64), labels


def _floor(p: NDArray[np.float64]) -> NDArray[np.float64]:
    # log(0) would make a component unreachable forever; 1e-300 keeps it merely unlikely
    return np.maximum(p, 1e-300)
