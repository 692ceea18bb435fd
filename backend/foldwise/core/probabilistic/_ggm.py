"""The probabilistic hierarchy of 003 as an estimator: LSI projection plus the builder.

:func:`~foldwise.core.probabilistic.probabilistic_hierarchy` does the work; this module adds the
projection: documents go to a few dimensions by LSI (truncated SVD of the row-normalized term
matrix, 003 sec. 4), where the Gaussian mixture is fit on the labeled and unlabeled documents
with K chosen by AIC (003 sec. 2) and its components are merged into a hierarchy (003 sec. 3).
The document dendrogram ``linkage_`` puts each document under its component and follows the
component tree above that (:func:`~foldwise.core.probabilistic.document_linkage`).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from sklearn.base import BaseEstimator
from sklearn.decomposition import TruncatedSVD
from sklearn.preprocessing import normalize
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from foldwise.core.probabilistic._ggm_fit import (
    ClassHierarchy,
    class_hierarchy,
    probabilistic_hierarchy,
    prototypes,
)
from foldwise.core.probabilistic._ggm_hierarchy import (
    SIMILARITIES,
    LevelAssignment,
    assign_levels,
    node_members,
    sample_dependent_clusters,
)
from foldwise.core.probabilistic._ggm_mixture import GeneralizableMixture, component_posteriors


class ProbabilisticHierarchy(BaseEstimator):
    """Probabilistic hierarchical clustering with labeled and unlabeled data (003).

    Parameters
    ----------
    n_components : int or "aic", default="aic"
        K, or ``"aic"`` to try ``1..max_components`` (at most half the distinct documents)
        and keep the K with the smallest AIC (003 sec. 2.1). The mixture is fit on distinct
        documents (copies would collapse a component); components no document ends up in are
        dropped after the fit.
    max_components : int, default=10
    similarity : {"modified_l2", "l2", "confusion", "sample"}, default="modified_l2"
        How components are merged (003 sec. 3.3-3.5); modified L2 is the paper's choice for
        text (sec. 4: cheap, and close to cluster confusion).
    lambda_ : float, default=1.0
        Discount of unlabeled documents, in [0, 1] (003 eq. 5). The paper finds values near 1
        best with few labels and about 0.3 with many (Fig. 4).
    gamma : float, default=0.5
        Split ratio in (0, 1) between the data for means and for covariances (003 Fig. 1).
    rho : float, default=0.9
        Threshold in (0, 1) of level assignment (003 eq. 9) and of the sample dependent
        measure (sec. 3.5).
    n_dims : int or None, default=10
        LSI dimensions (003 sec. 4 uses 5). ``None`` models ``X`` as given (dense, few
        columns), without normalizing or projecting.
    n_init : int, default=3
        Fits per K from different initial means; the lowest negative log-likelihood wins.
    max_iter : int, default=100
    n_ancillary : int, default=20000
        Samples drawn from the model to estimate cluster confusion (003 sec. 3.4).
    n_prototypes : int, default=5
        Prototype documents kept per node (003 sec. 3.2).
    random_state : int or None, default=None

    Attributes
    ----------
    linkage_ : ndarray of shape (n_samples - 1, 4)
        Document dendrogram (:func:`~foldwise.core.probabilistic.document_linkage`): heights
        below 1 are within-component average-linkage distances (scaled), the merge that
        creates component level ``j`` is at height ``j - 1``.
    children_ : ndarray of shape (n_samples - 1, 2), int
    distances_ : ndarray of shape (n_samples - 1,)
    n_leaves_ : int
    component_linkage_ : ndarray of shape (n_components_ - 1, 4)
        Component tree: node ``k < K`` is component ``k``, node ``K + r`` merge ``r``.
    component_merge_scores_ : ndarray of shape (n_components_ - 1,)
        Dissimilarity (L2 measures) or similarity (the others) at each merge.
    labels_ : ndarray of shape (n_samples,)
        Component of each training document (by P(k|y, x) for labeled ones).
    mixture_ : GeneralizableMixture
        The fitted USGGM (parameters, negative log-likelihood, AIC).
    n_components_ : int
    priors_ : ndarray of shape (n_components_,)
        Component priors P(k). (Not ``weights_``: in Foldwise that name means term weights.)
    means_ : ndarray of shape (n_components_, n_dims_)
    covariances_ : ndarray of shape (n_components_, n_dims_, n_dims_)
    class_given_component_ : ndarray of shape (n_components_, n_classes)
        P(y|k); ``classes_`` names the columns.
    classes_ : list
    aic_ : dict of int to float
        AIC per K tried.
    prototypes_ : list of ndarray of int, length 2 n_components_ - 1
        Training documents that typify each node (003 sec. 3.2): for a component the ones of
        highest density ``p(x|k)``; for a merged node the prototypes of its components in
        proportion to their priors.
    components_ : ndarray of shape (n_dims_, n_features_in_) or None
        LSI basis used to back-project to terms (keywords); None if ``n_dims`` is None.
    n_dims_ : int
    n_features_in_ : int
    """

    def __init__(
        self,
        n_components: int | str = "aic",
        max_components: int = 10,
        similarity: str = "modified_l2",
        lambda_: float = 1.0,
        gamma: float = 0.5,
        rho: float = 0.9,
        n_dims: int | None = 10,
        n_init: int = 3,
        max_iter: int = 100,
        n_ancillary: int = 20000,
        n_prototypes: int = 5,
        random_state: int | None = None,
    ) -> None:
        self.n_components = n_components
        self.max_components = max_components
        self.similarity = similarity
        self.lambda_ = lambda_
        self.gamma = gamma
        self.rho = rho
        self.n_dims = n_dims
        self.n_init = n_init
        self.max_iter = max_iter
        self.n_ancillary = n_ancillary
        self.n_prototypes = n_prototypes
        self.random_state = random_state

    #: 003's model learns from the labels alone: explicit MLB triples are accepted by
    #: :meth:`fit` for the common signature, not used.
    ignores_triples = True

    def fit(
        self, X: Any, y: Sequence[Hashable | None] | None = None, triples: Any = None
    ) -> ProbabilisticHierarchy:
        """Fit the mixture and build the hierarchies.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Documents, e.g. tf-idf rows.
        y : sequence of hashable or None, length n_samples, optional
            Label of each document (e.g. its folder path), ``None`` for unlabeled ones.
        triples : ignored
            The estimators' common ``fit(X, y, triples)`` signature; see ``ignores_triples``.

        Returns
        -------
        self
        """
        self._validate_params_003()
        X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"need at least 2 documents, got n_samples={n}")
        if isinstance(self.n_components, int) and self.n_components > n:
            raise ValueError(f"n_components={self.n_components} is larger than n_samples={n}")
        if y is not None and len(y) != n:
            raise ValueError(f"y has {len(y)} entries for {n} documents")
        self.n_features_in_ = X.shape[1]
        Z = self._fit_projection(X)
        res = probabilistic_hierarchy(
            Z,
            y,
            n_components=self.n_components,
            max_components=self.max_components,
            similarity=self.similarity,
            lambda_=self.lambda_,
            gamma=self.gamma,
            rho=self.rho,
            n_init=self.n_init,
            max_iter=self.max_iter,
            n_ancillary=self.n_ancillary,
            random_state=self.random_state,
        )
        gm = res.mixture
        self.mixture_ = gm
        self.n_components_ = gm.n_components
        self.priors_ = gm.weights
        self.means_ = gm.means
        self.covariances_ = gm.covariances
        self.class_given_component_ = gm.class_given_component
        self.classes_ = res.classes
        self.aic_ = res.aic
        self.labels_ = res.component
        self.component_linkage_ = res.component_linkage
        self.component_merge_scores_ = res.merge_scores
        self.linkage_ = res.linkage
        # the attribute set of the HAC family (foldwise.core.hac._estimators)
        self.children_ = res.linkage[:, :2].astype(np.intp)
        self.distances_ = res.linkage[:, 2].copy()
        self.n_leaves_ = n
        self.prototypes_ = prototypes(
            gm, Z, res.component, res.component_linkage, self.n_prototypes
        )
        return self

    def transform(self, X: Any) -> NDArray[np.float64]:
        """Project documents into the mixture's space. Shape (n_samples, n_dims_)."""
        check_is_fitted(self, "mixture_")
        X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, expected {self.n_features_in_}")
        if self.components_ is None:
            return np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
        return np.asarray(normalize(X) @ self.components_.T, dtype=np.float64)

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Component posteriors P(k|x) (003 eq. 4). Shape (n_samples, n_components_)."""
        Z = self.transform(X)  # checks that the model is fitted
        return component_posteriors(self.mixture_, Z)

    def predict_label_proba(self, X: Any) -> NDArray[np.float64]:
        """Label (folder) posteriors ``P(y|x) = sum_k P(y|k) P(k|x)`` (003 eq. 4).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.

        Raises
        ------
        ValueError
            If the model was fit without labels.
        """
        proba = self.predict_proba(X)
        if not self.classes_:
            raise ValueError("the model was fit without labels (y had no labeled document)")
        return np.asarray(proba @ self.class_given_component_, dtype=np.float64)

    def predict_label(self, X: Any) -> list[Hashable]:
        """The Bayes label (folder) of each document under 0/1 loss (003 sec. 2)."""
        best = self.predict_label_proba(X).argmax(axis=1)
        return [self.classes_[int(i)] for i in best]

    def assign_level(self, X: Any, rho: float | None = None) -> LevelAssignment:
        """Cluster and level of new documents (003 sec. 3.1, eq. 9).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        rho : float, optional
            Threshold; defaults to the estimator's ``rho``.

        Returns
        -------
        LevelAssignment
            ``level`` 1 is a confident placement in a component; higher levels say how far
            up the component tree the document must go to be placed with probability > rho.
        """
        return assign_levels(
            self.predict_proba(X), self.component_linkage_, self.rho if rho is None else rho
        )

    def sample_dependent_clusters(self, X: Any, rho: float | None = None) -> NDArray[np.bool_]:
        """Components merged for each document by 003 sec. 3.5. Shape (n_samples, K)."""
        return sample_dependent_clusters(self.predict_proba(X), self.rho if rho is None else rho)

    def class_hierarchy(self, label: Hashable, min_share: float = 0.01) -> ClassHierarchy:
        """The hierarchy of one class (folder) ``y`` from ``p(x|y)`` (003 sec. 3, Fig. 5).

        The components of the folder, merged with the estimator's ``similarity``: a proposal
        for the folder's subfolders.

        Parameters
        ----------
        label : hashable
            One of ``classes_``.
        min_share : float, default=0.01
            Components with ``P(k|y)`` below this are left out.

        Returns
        -------
        ClassHierarchy
        """
        check_is_fitted(self, "mixture_")
        if label not in self.classes_:
            raise ValueError(f"label {label!r} is not among the {len(self.classes_)} classes_")
        return class_hierarchy(
            self.mixture_,
            self.classes_.index(label),
            label,
            self.similarity,
            rho=self.rho,
            n_ancillary=self.n_ancillary,
            min_share=min_share,
            rng=np.random.default_rng(self.random_state),
        )

    def assign_level_in_class(
        self, X: Any, label: Hashable, rho: float | None = None
    ) -> LevelAssignment:
        """Level assignment within one class's hierarchy: 003 eq. 9 with ``P_j(k|y, x)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Documents known to belong to class ``label``.
        label : hashable
        rho : float, optional

        Returns
        -------
        LevelAssignment
            Nodes are numbered as in ``class_hierarchy(label).linkage`` (leaf ``i`` is
            component ``components[i]``).
        """
        tree = self.class_hierarchy(label)
        Z = self.transform(X)
        sub = GeneralizableMixture(
            tree.weights,
            self.means_[tree.components],
            self.covariances_[tree.components],
            np.zeros((tree.components.size, 0)),
            float("nan"),
            float("nan"),
            0,
        )
        return assign_levels(
            component_posteriors(sub, Z), tree.linkage, self.rho if rho is None else rho
        )

    def keywords_(
        self,
        feature_names: Sequence[str] | None = None,
        n_keywords: int = 8,
        contrast: bool = True,
    ) -> list[list[str]]:
        """Typical terms of every node of the component tree (003 sec. 3.2, Table 1).

        003 draws ancillary examples from an ellipsoid around each mean, back-projects them
        into term space and lists the largest terms. The ellipsoid is symmetric about the
        mean and back-projection is linear, so the samples average to the back-projected
        mean; we use that mean directly. A merged node uses its prior-weighted mean (eq. 7).

        Parameters
        ----------
        feature_names : sequence of str, optional
            Term of each column of ``X``; column numbers as strings if omitted.
        n_keywords : int, default=8
        contrast : bool, default=True
            Rank terms by how far the node's mean exceeds the collection's (the root's), not
            by the mean itself. Without stop-word removal (003 sec. 4 removes them) the plain
            mean lists "the", "and", "for" first for every node; the root keeps its plain mean.

        Returns
        -------
        list of list of str, length 2 n_components_ - 1
            Indexed by node of ``component_linkage_``.
        """
        check_is_fitted(self, "mixture_")
        members = node_members(self.component_linkage_, self.n_components_)
        w = members * self.priors_
        node_means = (w @ self.means_) / w.sum(axis=1, keepdims=True)
        if contrast:
            node_means[:-1] -= node_means[-1]  # the last node is the root
        terms = node_means if self.components_ is None else node_means @ self.components_
        if feature_names is None:
            feature_names = [str(j) for j in range(terms.shape[1])]
        if len(feature_names) != terms.shape[1]:
            raise ValueError(
                f"feature_names has {len(feature_names)} names for {terms.shape[1]} features"
            )
        top = np.argsort(-terms, axis=1, kind="stable")[:, :n_keywords]
        return [[feature_names[j] for j in row] for row in top]

    def _fit_projection(self, X: Any) -> NDArray[np.float64]:
        n, p = X.shape
        if self.n_dims is None:
            self.components_ = None
            self.n_dims_ = p
            return np.asarray(X.toarray() if sparse.issparse(X) else X, dtype=np.float64)
        n_dims = int(self.n_dims)
        limit = min(n, p) - 1
        if limit < 1:
            raise ValueError(f"cannot project {n} documents with {p} features by LSI")
        if n_dims > limit:
            warnings.warn(
                f"n_dims={n_dims} exceeds min(n_samples, n_features) - 1 = {limit}; using {limit}",
                stacklevel=3,
            )
            n_dims = limit
        # 003 sec. 4: histogram vectors normalized to unit length, then LSI. The basis comes
        # from the distinct documents, or many copies of one document would spend an LSI
        # dimension on it
        X_unit = normalize(X)
        svd = TruncatedSVD(n_components=n_dims, random_state=self.random_state)
        svd.fit(X_unit[_distinct_rows(X_unit)])
        Z = svd.transform(X_unit)
        self.components_ = svd.components_
        self.n_dims_ = n_dims
        return np.asarray(Z, dtype=np.float64)

    def _validate_params_003(self) -> None:
        nc = self.n_components
        if not (nc == "aic" or (isinstance(nc, int | np.integer) and nc >= 1)):
            raise ValueError(f"n_components must be 'aic' or an int >= 1, got {nc!r}")
        if self.max_components < 1:
            raise ValueError(f"max_components must be >= 1, got {self.max_components!r}")
        if self.similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {SIMILARITIES}, got {self.similarity!r}")
        if not 0 <= self.lambda_ <= 1:
            raise ValueError(f"lambda_ must be in [0, 1], got {self.lambda_!r}")
        if not 0 < self.gamma < 1:
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma!r}")
        if not 0 < self.rho < 1:
            raise ValueError(f"rho must be in (0, 1), got {self.rho!r}")
        if self.n_dims is not None and self.n_dims < 1:
            raise ValueError(f"n_dims must be >= 1 or None, got {self.n_dims!r}")


def _distinct_rows(X: Any) -> NDArray[np.intp]:
    """Index of the first occurrence of every distinct row, in order. Shape (n_distinct,)."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        X.sort_indices()
        seen: dict[tuple[bytes, bytes], int] = {}
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            seen.setdefault((X.indices[lo:hi].tobytes(), X.data[lo:hi].tobytes()), i)
        return np.fromiter(seen.values(), dtype=np.intp)
    return np.sort(np.unique(np.asarray(X), axis=0, return_index=True)[1]).astype(np.intp)
