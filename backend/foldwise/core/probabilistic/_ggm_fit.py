"""The probabilistic hierarchy of 003 as a functional builder: USGGM fit, AIC, merging.

:func:`probabilistic_hierarchy` works on documents already projected to a few dimensions;
:class:`~foldwise.core.probabilistic.ProbabilisticHierarchy` adds the LSI projection and the
estimator interface.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from foldwise.core.probabilistic._ggm_hierarchy import (
    component_linkage,
    document_linkage,
    node_members,
)
from foldwise.core.probabilistic._ggm_mixture import (
    GeneralizableMixture,
    component_posteriors,
    fit_usggm,
    log_gaussian,
    overall_covariance,
)


@dataclass(frozen=True)
class ProbabilisticHierarchyResult:
    """Everything :func:`probabilistic_hierarchy` computes (see the estimator's attributes)."""

    mixture: GeneralizableMixture
    aic: dict[int, float]
    classes: list[Hashable]
    component: NDArray[np.intp]
    component_linkage: NDArray[np.float64]
    merge_scores: NDArray[np.float64]
    linkage: NDArray[np.float64]


def probabilistic_hierarchy(
    Z: NDArray[np.float64],
    y: Sequence[Hashable | None] | None = None,
    *,
    n_components: int | str = "aic",
    max_components: int = 10,
    similarity: str = "modified_l2",
    lambda_: float = 1.0,
    gamma: float = 0.5,
    rho: float = 0.9,
    n_init: int = 3,
    max_iter: int = 100,
    n_ancillary: int = 20000,
    random_state: int | np.random.Generator | None = None,
) -> ProbabilisticHierarchyResult:
    """Fit the USGGM on projected documents and build both hierarchies.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, d)
        Documents in the low-dimensional space.
    y, n_components, max_components, similarity, lambda_, gamma, rho, n_init, max_iter,
    n_ancillary, random_state
        As in :class:`ProbabilisticHierarchy`.

    Returns
    -------
    ProbabilisticHierarchyResult
    """
    # every matrix here is d x d or n x d with d ~ 10: BLAS threads only add overhead, and
    # on a busy machine their spin-waits made a 2,000-document fit 7x slower (83 s vs 11 s)
    with threadpool_limits(limits=1, user_api="blas"):
        return _probabilistic_hierarchy(
            Z,
            y,
            n_components=n_components,
            max_components=max_components,
            similarity=similarity,
            lambda_=lambda_,
            gamma=gamma,
            rho=rho,
            n_init=n_init,
            max_iter=max_iter,
            n_ancillary=n_ancillary,
            random_state=random_state,
        )


def _probabilistic_hierarchy(
    Z: NDArray[np.float64],
    y: Sequence[Hashable | None] | None,
    *,
    n_components: int | str,
    max_components: int,
    similarity: str,
    lambda_: float,
    gamma: float,
    rho: float,
    n_init: int,
    max_iter: int,
    n_ancillary: int,
    random_state: int | np.random.Generator | None,
) -> ProbabilisticHierarchyResult:
    n = Z.shape[0]
    rng = np.random.default_rng(random_state)
    codes, classes = _class_codes(y, n)
    if y is not None and not classes:
        warnings.warn(
            "y has no labeled document; fitting the unsupervised mixture (SGGM, 003 sec. 2.2)",
            stacklevel=2,
        )
    if not classes and lambda_ == 0:
        raise ValueError("lambda_=0 ignores unlabeled documents, and there are no labeled ones")
    # Identical documents (copies, empty texts) project to one point. A component sitting on
    # such a point has a singular covariance that the alpha rule of sec. 2.1 barely lifts, so
    # its likelihood grows without bound and it wins a component of its own (60 copies of one
    # document in our synthetic corpus took one of the 10 components). The mixture is
    # therefore fit on the distinct (point, label) pairs; copies join their original's
    # component afterwards.
    _, first = np.unique(np.column_stack([Z, codes]), axis=0, return_index=True)
    distinct = np.sort(first)
    Z_fit, codes_fit = Z[distinct], codes[distinct]
    n_fit = distinct.size
    if n_components == "aic":
        candidates = range(1, min(max_components, max(n_fit // 2, 1)) + 1)
    else:
        K = int(n_components)
        if n_fit < K:
            warnings.warn(
                f"n_components={K} exceeds the {n_fit} distinct documents; using {n_fit}",
                stacklevel=2,
            )
            K = n_fit
        candidates = range(K, K + 1)
    sigma0 = overall_covariance(Z_fit)
    best: dict[int, GeneralizableMixture] = {}
    for K in candidates:
        fits = [
            fit_usggm(
                Z_fit,
                codes_fit,
                K,
                n_classes=len(classes),
                lambda_=lambda_,
                gamma=gamma,
                max_iter=max_iter,
                sigma0=sigma0,
                rng=rng,
            )
            for _ in range(n_init)
        ]
        best[K] = min(fits, key=lambda gm: gm.nll)
    aic = {K: gm.aic for K, gm in best.items()}
    gm = _drop_empty(best[min(aic, key=aic.__getitem__)], Z, codes)
    post_train = component_posteriors(gm, Z, codes)
    component = post_train.argmax(axis=1).astype(np.intp)  # 003 sec. 2.1: k_n = argmax
    kwargs: dict[str, Any] = {"rho": rho}
    if similarity == "confusion":
        true_component, samples = _ancillary_samples(gm, n_ancillary, rng)
        kwargs["posteriors"] = component_posteriors(gm, samples)
        kwargs["true_component"] = true_component
    elif similarity == "sample":
        kwargs["posteriors"] = component_posteriors(gm, Z)
    Zc, scores = component_linkage(gm.weights, gm.means, gm.covariances, similarity, **kwargs)
    return ProbabilisticHierarchyResult(
        mixture=gm,
        aic=aic,
        classes=classes,
        component=component,
        component_linkage=Zc,
        merge_scores=scores,
        linkage=document_linkage(Zc, component, Z),
    )


def _class_codes(
    y: Sequence[Hashable | None] | None, n: int
) -> tuple[NDArray[np.intp], list[Hashable]]:
    if y is None:
        return np.full(n, -1, dtype=np.intp), []
    index: dict[Hashable, int] = {}
    # folder paths may arrive as lists; as dict keys they must be tuples
    keys = [tuple(lab) if isinstance(lab, list) else lab for lab in y]
    codes = np.array(
        [-1 if lab is None else index.setdefault(lab, len(index)) for lab in keys], dtype=np.intp
    )
    return codes, list(index)


def _drop_empty(
    gm: GeneralizableMixture, Z: NDArray[np.float64], y: NDArray[np.intp]
) -> GeneralizableMixture:
    """The mixture without components that no training document is assigned to."""
    used = np.unique(component_posteriors(gm, Z, y).argmax(axis=1))
    if used.size == gm.n_components:
        return gm
    w = gm.weights[used] / gm.weights[used].sum()
    return GeneralizableMixture(
        w,
        gm.means[used],
        gm.covariances[used],
        gm.class_given_component[used],
        gm.nll,
        gm.aic,
        gm.n_iter,
    )


@dataclass(frozen=True)
class ClassHierarchy:
    """The hierarchy of one class density p(x|y) (003 sec. 3, eq. 6-8; Fig. 5).

    Attributes
    ----------
    label : hashable
    components : ndarray of shape (m,), int
        The mixture components with ``P(k|y) >= min_share``; leaf ``i`` of ``linkage`` is
        component ``components[i]``.
    weights : ndarray of shape (m,)
        ``P(k|y)`` renormalized over ``components`` (eq. 6).
    linkage : ndarray of shape (m - 1, 4)
        Component tree in the format of :func:`component_linkage`.
    merge_scores : ndarray of shape (m - 1,)
    """

    label: Hashable
    components: NDArray[np.intp]
    weights: NDArray[np.float64]
    linkage: NDArray[np.float64]
    merge_scores: NDArray[np.float64]


def class_hierarchy(
    gm: GeneralizableMixture,
    code: int,
    label: Hashable,
    similarity: str = "modified_l2",
    *,
    rho: float = 0.9,
    n_ancillary: int = 20000,
    min_share: float = 0.01,
    rng: np.random.Generator,
) -> ClassHierarchy:
    """Agglomerate the components of one class: ``p(x|y) = sum_k p(x|k) P(k|y)`` (003 eq. 6).

    ``P(k|y) = P(y|k) P(k) / sum_k P(y|k) P(k)``. Components below ``min_share`` of the class
    are left out, as 003 Table 1 lists only the components that matter for each class.
    Cluster confusion and the sample measure use ancillary samples drawn from ``p(x|y)``.
    """
    joint = gm.class_given_component[:, code] * gm.weights
    if joint.sum() <= 0:
        raise ValueError(f"no component carries class {label!r}")
    share = joint / joint.sum()
    keep = np.flatnonzero(share >= min(min_share, share.max()))
    sub = GeneralizableMixture(
        share[keep] / share[keep].sum(),
        gm.means[keep],
        gm.covariances[keep],
        np.zeros((keep.size, 0)),
        float("nan"),
        float("nan"),
        0,
    )
    kwargs: dict[str, Any] = {"rho": rho}
    if similarity in ("confusion", "sample"):
        true_component, samples = _ancillary_samples(sub, n_ancillary, rng)
        kwargs["posteriors"] = component_posteriors(sub, samples)
        if similarity == "confusion":
            kwargs["true_component"] = true_component
    Z, scores = component_linkage(sub.weights, sub.means, sub.covariances, similarity, **kwargs)
    return ClassHierarchy(label, keep.astype(np.intp), sub.weights, Z, scores)


def _ancillary_samples(
    gm: GeneralizableMixture, n_samples: int, rng: np.random.Generator
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Draws from the fitted p(x) with the component each came from (003 sec. 3.4)."""
    comp = rng.choice(gm.n_components, size=n_samples, p=gm.weights)
    d = gm.means.shape[1]
    chol = np.linalg.cholesky(gm.covariances)
    noise = rng.standard_normal((n_samples, d))
    samples = gm.means[comp] + np.einsum("nij,nj->ni", chol[comp], noise)
    return comp.astype(np.intp), samples


def prototypes(
    gm: GeneralizableMixture,
    Z: NDArray[np.float64],
    component: NDArray[np.intp],
    Zc: NDArray[np.float64],
    n_prototypes: int,
) -> list[NDArray[np.intp]]:
    logp = log_gaussian(Z, gm.means, gm.covariances)
    per_component = []
    for k in range(gm.n_components):
        idx = np.flatnonzero(component == k)
        per_component.append(idx[np.argsort(-logp[idx, k], kind="stable")])
    out = [p[:n_prototypes] for p in per_component]
    for members in node_members(Zc, gm.n_components)[gm.n_components :]:
        ks = np.flatnonzero(members)
        share = gm.weights[ks] / gm.weights[ks].sum()
        # largest-remainder apportionment of n_prototypes by prior (003 sec. 3.2)
        quota = share * n_prototypes
        take = np.floor(quota).astype(int)
        for j in np.argsort(-(quota - take), kind="stable")[: n_prototypes - take.sum()]:
            take[j] += 1
        out.append(
            np.concatenate([per_component[k][:t] for k, t in zip(ks, take, strict=True)]).astype(
                np.intp
            )
        )
    return out
