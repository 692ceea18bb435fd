"""Placing new documents into the person's folders (003 sec. 3.1, docs/architecture.md sec. 6).

The dendrogram decides structure and proposals; it decides placement like a nearest neighbour
(docs/architecture.md sec. 6: ~40% on python-docs). Placement is a classifier over the
existing folders, trained on every labeled document, that also uses the unlabeled ones:

1. Supervised term weights. Each term gets the share of its variance over the labeled
   documents that their folders explain (the correlation ratio eta^2), multiplied into the
   learned biHAC weights when given (000 eq. 3: weighted cosine = cosine on X * sqrt(w)).
2. Transductive latent features. A truncated SVD (LSA) of *all* documents, labeled and
   unlabeled, is appended to the weighted tf-idf: co-occurrence in the new documents links
   terms that the few labeled documents never show together.
3. One-vs-rest linear SVMs on these features, turned into folder posteriors by a softmax
   whose temperature is fitted on cross-validated decision values of the labeled documents.
4. An open-set check: the probability that a document belongs to an existing folder at
   all, learned by hiding groups of folders from the SVMs in turn (settings 2-3 of 001
   sec. 5.2, simulated on the labeled documents). Documents of new topics would otherwise
   be forced, confidently, into the nearest known folder.
5. Level assignment (003 sec. 3.1, eq. 9): a document goes down the folder tree only while
   the posterior mass of the next subtree stays above ``rho``; an uncertain document stops at
   the deepest ancestor folder it is confident of, a document of a new topic at the parent
   of the folders it resembles.

Explicit triples (x, y, z) ("x is closer to y than to z", 001 sec. 3) restrict the folders
admissible for an unlabeled ``x`` when ``y`` and ``z`` are labeled.

What did not help on python-docs, for the record (same samples as bench/placement_eval.py):
self-training, semi-supervised EM over centroids or naive Bayes, label spreading on a kNN
graph, prior re-estimation on the unlabeled documents, dendrogram (cluster-kernel) features
and hierarchical weight sharing all stayed at or below the flat SVM. Folders there are not
clusters of the tf-idf space, so methods that trust the cluster assumption lose.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._calibration import log_softmax
from foldwise.core.placement._checks import (
    Matrix,
    as_csr,
    check_sample_weight,
    check_triples,
    check_weights,
)
from foldwise.core.placement._cross_validated import CV_PARAMS, CrossValidated
from foldwise.core.placement._held_out_fits import fit_final_and_held_out
from foldwise.core.placement._levels import Placement, assign_folder_levels, common_depths
from foldwise.core.placement._naive_bayes import (
    LATENT_NB,
    PLAIN_NB,
    REPRESENTATIONS,
    has_latent,
    has_naive_bayes,
    is_both,
    naive_bayes_term,
)
from foldwise.core.placement._placement_arrays import placement_from_arrays, placement_to_arrays
from foldwise.core.placement._representation import choose_representation
from foldwise.core.placement._sampled_svm import (
    LIBLINEAR_LOCK,
    FirstPass,
    first_pass,
    sampled_one_vs_rest,
)

_T = TypeVar("_T")


class FolderPlacement(BaseEstimator):
    """Predict the folder of new documents from filed ones (transductive, 003 sec. 3.1).

    Parameters
    ----------
    C : float, default=1.0
        Regularisation of the linear SVMs (larger = less regularised).
    n_components : int, default=100
        Latent (LSA) dimensions learned from all documents: at least one per folder, up to
        ``2 * n_components``, and at most ``n_docs // 4``. 0 disables them.
    supervised_weights : bool, default=True
        Multiply term weights by their correlation ratio with the labeled folders.
    use_given_weights : bool, default=False
        Start from the ``weights`` passed to :meth:`fit` (biHAC, 000 eq. 3) instead of ones.
        Off by default: on python-docs (bench/placement_eval.py, seeds 0-2) biHAC weights
        lowered exact placement from .617 / .607 / .588 to .583 / .573 / .575 (settings 1-3),
        and a plain SVM on them from .589 / .584 / .569 to .579 / .559 / .559. They are
        learned for the merge order of a dendrogram, while the correlation ratio already
        carries what the labels say about each term.
    rho : float, default=0.5
        Level-assignment threshold (003 eq. 9 uses 0.9): a document goes into a subtree only
        if its posterior mass there exceeds ``rho``.
    cv : int, default=5
        Folds of the novelty model, and of the softmax temperature where no representation
        selection ran ("auto" fits the temperature on the selection's folds).
    random_state : int, default=0
        Seed for the SVD and the folds.
    representation : {"auto", "latent", "plain", "plain+nb", "latent+nb", \
"latent+plain+nb"}, default="auto"
        "latent": eta^2 term weights (if ``supervised_weights``) and ``n_components`` LSA
        dimensions; "plain": the tf-idf rows alone; "+nb": with a complement naive Bayes
        term added to the SVMs' decisions (``_naive_bayes``); "latent+plain+nb": the sum
        of "latent+nb"'s and "plain+nb"'s decisions; "auto": whichever of latent
        and plain places more labeled documents right in ``selection_folds``-fold
        cross-validation, with the term where it beats the chosen one alone there, and
        the sum where it beats that (``_representation``).
    selection_folds : int, default=3
        Folds of that comparison. Where it ends in a near tie (and no previous choice
        stands) the two are compared again in ``_representation.TIE_SELECTION_FOLDS`` (5)
        folds, whose SVMs see more of the labels, as the final model sees all of them.
    previous_representation : str or None, default=None
        The representation of the model this one replaces (the previous recluster's; one
        of those above but "auto"). With "auto" it is kept unless the other places clearly
        more held-out documents right (a sign test), so that a few new labels do not flip
        it.
    cross_validated : CrossValidated or None, default=None
        The cross-validated quantities of an earlier fit (:meth:`cross_validated_state`):
        the representation choice, temperature, calibration, held-out top decisions and
        novelty model. Reused instead of 11 of the 12 SVM fits when that fit saw the same
        folders, the same cross-validation parameters and labeled counts within
        ``max_label_change`` (``_cross_validated``); otherwise ignored.
    max_label_change : float, default=0.1
        How far the labeled counts may have moved from those ``cross_validated`` was
        estimated on: the sum of absolute per-folder differences, as a share of its
        labeled documents.
    max_svm_pairs : int, default=2_000_000
        Labeled documents times folders above which each folder's SVM trains on its own
        documents, the other documents a first pass scores highest for it and a weighted
        sample of the rest (:func:`sampled_one_vs_rest`) instead of on every labeled
        document: a fit's cost then grows with the documents, not with documents times
        folders. Below it (every corpus of docs/placement.md) the SVMs are liblinear's
        one-vs-rest.
    max_held_out : int, default=10_000
        Cross-validation (representation selection, temperature, novelty) stops after
        the first fold that brings the held-out documents to this many. Each fold is a
        fit of every folder's SVM, and at 100,000 labeled documents one fold of five holds
        out 20,000: plenty for a temperature and a calibration. Up to 12,500 labeled
        documents (every corpus of docs/placement.md) every fold runs. Where the SVMs are
        sampled (above ``max_svm_pairs``) one fold runs whatever it holds out, more than
        ``max_svm_pairs / (5 x folders)`` documents (400 at 1,000 folders); each further
        fold was another fit of a thousand sampled SVMs (biiHAC's self-labeling model on
        8,000 exemplars in 1,000 folders: 86 s with five folds, 31 s with one;
        docs/recluster.md, "One fold where the SVMs are sampled").
    n_jobs : int or None, default=None
        Threads for the cross-validation fits (representation selection, temperature,
        novelty), which are independent of each other, and for the final fit's folder
        SVMs above ``max_svm_pairs``; ``None`` is 1. The model does not depend on it:
        scikit-learn's liblinear draws its coordinate order from one process-wide
        generator, so its fits take turns (``_sampled_svm.LIBLINEAR_LOCK``; concurrent
        fits had moved the cross-validated parts by up to 1.2e-4 relative), while the rest
        of each fold (features, decision values) runs beside them.

    Attributes
    ----------
    folders_ : list of FolderPath, length n_folders
        The folders that hold labeled documents, in column order of ``predict_proba``.
    term_weights_ : ndarray of shape (n_terms,)
        Final term weights, ``w >= 0`` with ``sum(w) = n_terms`` (000 eq. 3).
    components_ : ndarray of shape (n_components, n_terms)
        LSA directions in the weighted term space.
    coef_ : ndarray of shape (n_folders, n_features)
    intercept_ : ndarray of shape (n_folders,)
    representation_ : str
        The representation used: "latent", "plain", "plain+nb", "latent+nb" or
        "latent+plain+nb".
    plain_weights_ : ndarray of shape (n_terms,) or (0,)
        For "latent+plain+nb", the term weights of plain's block of the features (latent's
        are ``term_weights_``); empty otherwise.
    labeled_per_folder_ : ndarray of shape (n_folders,), int
        Labeled documents of each folder.
    temperature_ : float
        Softmax temperature turning decision values into posteriors.
    calibration_x_, calibration_y_ : ndarray of shape (n_thresholds,)
        Isotonic map from a held-out top posterior to the share placed right
        (:meth:`calibrated_confidence`); empty when nothing could be held out.
    novelty_coef_ : ndarray of shape (3,) or (0,)
        Logistic coefficients of :meth:`known_proba` on (top decision value, its margin,
        1); empty when there are fewer than 3 folders to hide some from.
    triples_ : ndarray of shape (n_triples, 3)
        The explicit triples, applied by :meth:`predict_proba` to fitted rows.
    cross_validated_reused_ : bool
        Whether this fit reused ``cross_validated``.
    cv_labeled_per_folder_ : ndarray of shape (n_folders,), int
        Labeled documents per folder when the cross-validated quantities were estimated
        (``labeled_per_folder_`` unless they were reused).
    """

    def __init__(
        self,
        C: float = 1.0,
        n_components: int = 100,
        supervised_weights: bool = True,
        use_given_weights: bool = False,
        rho: float = 0.5,
        cv: int = 5,
        random_state: int = 0,
        representation: str = "auto",
        selection_folds: int = 3,
        previous_representation: str | None = None,
        cross_validated: CrossValidated | None = None,
        max_label_change: float = 0.1,
        max_svm_pairs: int = 2_000_000,
        max_held_out: int = 10_000,
        n_jobs: int | None = None,
    ) -> None:
        self.C = C
        self.n_components = n_components
        self.supervised_weights = supervised_weights
        self.use_given_weights = use_given_weights
        self.rho = rho
        self.cv = cv
        self.random_state = random_state
        self.representation = representation
        self.selection_folds = selection_folds
        self.previous_representation = previous_representation
        self.cross_validated = cross_validated
        self.max_label_change = max_label_change
        self.max_svm_pairs = max_svm_pairs
        self.max_held_out = max_held_out
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        X: Matrix,
        folders: Sequence[FolderPath | None],
        *,
        weights: ArrayLike | None = None,
        triples: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
    ) -> FolderPlacement:
        """Fit on all documents; ``folders[i] is None`` marks an unlabeled document.

        Parameters
        ----------
        X : sparse matrix or ndarray of shape (n_docs, n_terms)
            L2-normalised tf-idf rows of labeled and unlabeled documents.
        folders : sequence of FolderPath or None, length n_docs
            Folder of each labeled document (may be an inner folder); None if unlabeled.
        weights : array-like of shape (n_terms,), optional
            Learned term weights (biHAC, 000 eq. 3); used only with ``use_given_weights``.
        triples : array-like of shape (n_triples, 3), int, optional
            Explicit MLB triples (x, y, z) over rows of ``X``; kept to restrict predictions.
        sample_weight : array-like of shape (n_docs,), optional
            Weight of each labeled document in the SVMs' hinge loss (unlabeled rows ignore
            it). A document the person filed against the model's advice weighs more than
            an ordinary filed one: it marks where the boundary was wrong.
        """
        self._check_params()
        # Set by the temperature's cross-validation when held-out documents are scored:
        self.calibration_x_ = self.calibration_y_ = self.held_out_top_ = np.zeros(0)
        X = as_csr(X)
        n_docs, n_terms = X.shape
        # Set before the SVMs are fitted: the naive Bayes term weighs the tf-idf columns.
        self.n_features_in_ = n_terms
        if len(folders) != n_docs:
            raise ValueError(f"folders has {len(folders)} entries for {n_docs} documents")
        labeled = np.array([f is not None for f in folders])
        if not labeled.any():
            raise ValueError("at least one labeled document is needed")
        paths = [tuple(f) for f in folders if f is not None]
        self.folders_ = sorted(set(paths))
        index = {f: j for j, f in enumerate(self.folders_)}
        y = np.array([index[p] for p in paths], dtype=np.intp)
        self.labeled_per_folder_ = np.bincount(y, minlength=len(self.folders_))
        sw = check_sample_weight(sample_weight, n_docs)[labeled]

        w = check_weights(weights, n_terms)
        if not self.use_given_weights:
            w = np.ones(n_terms)
        kept = self._reusable_state()
        self.cross_validated_reused_ = kept is not None
        # A kept state's counts, on this fit's folders (a new folder had none).
        kept_counts = None if kept is None else kept.counts_on(self.folders_)
        self.cv_labeled_per_folder_ = (
            self.labeled_per_folder_ if kept_counts is None else kept_counts.astype(np.intp)
        )
        held_out = novelty = None
        if kept is not None:
            self.representation_ = kept.representation
        else:
            self.representation_, held_out, novelty = choose_representation(self, X, w, labeled, y)
        # Plain's block of "latent+plain+nb" weighs the terms as given, without eta^2.
        self.plain_weights_ = w if is_both(self.representation_) else np.zeros(0)
        Xw, w = self._weigh(X, w, labeled, y, self.representation_)
        self.term_weights_ = w
        self.components_ = self._fit_components(Xw, self.representation_)
        F = self._features(Xw, self.components_, self._plain_block(X))

        if len(self.folders_) == 1:
            self.coef_ = np.zeros((1, F.shape[1]))
            self.intercept_ = np.zeros(1)
            self.temperature_ = 1.0
            self.novelty_coef_ = np.zeros(0)
        else:
            final = functools.partial(
                self._fit_svm, F[labeled], y, sw, n_jobs=self.n_jobs,
                representation=self.representation_,
            )  # fmt: skip
            if kept is not None:
                self.coef_, self.intercept_ = final()
                self.temperature_ = kept.temperature
                self.calibration_x_, self.calibration_y_ = kept.calibration_x, kept.calibration_y
                self.held_out_top_ = kept.held_out_top
                self.novelty_coef_ = kept.novelty_coef
            else:
                (self.coef_, self.intercept_), self.temperature_, self.novelty_coef_ = (
                    fit_final_and_held_out(self, final, F[labeled], y, held_out, novelty)
                )
        self.triples_ = check_triples(triples, n_docs)
        self._fit_labels = [None if f is None else index[tuple(f)] for f in folders]
        return self

    def _reusable_state(self) -> CrossValidated | None:
        """``cross_validated`` if this fit may reuse it (``CrossValidated.reusable``)."""
        kept = self.cross_validated
        if kept is None or len(self.folders_) < 2:
            return None
        if self.representation != "auto" and kept.representation != self.representation:
            return None
        params = {k: float(getattr(self, k)) for k in CV_PARAMS}
        counts, change = self.labeled_per_folder_, self.max_label_change
        return kept if kept.reusable(self.folders_, counts, params, change) else None

    def cross_validated_state(self) -> CrossValidated:
        """This fit's cross-validated quantities, for a later fit's ``cross_validated``."""
        self._check_fitted()
        return CrossValidated(
            folders=list(self.folders_),
            labeled_per_folder=np.asarray(self.cv_labeled_per_folder_, dtype=np.int64),
            params={k: float(getattr(self, k)) for k in CV_PARAMS},
            representation=self.representation_,
            temperature=float(self.temperature_),
            calibration_x=self.calibration_x_,
            calibration_y=self.calibration_y_,
            held_out_top=self.held_out_top_,
            novelty_coef=self.novelty_coef_,
        )

    def for_collection(
        self, folders: Sequence[FolderPath | None], *, triples: ArrayLike | None = None
    ) -> FolderPlacement:
        """This fitted model, as if fitted on another collection with the same labeled
        documents: what :meth:`fit` records of its collection by row (each document's
        folder and the explicit triples, which :meth:`predict_proba` applies to fitted
        rows) is the new collection's; the learned parameters are shared, not copied.

        A recluster whose labeled documents did not change keeps its previous model this
        way instead of fitting the same SVMs again (docs/recluster.md, "Kept placement
        model"); the latent directions stay those of the collection it was fitted on.
        """
        self._check_fitted()
        index = {f: j for j, f in enumerate(self.folders_)}
        unknown = {tuple(f) for f in folders if f is not None} - set(index)
        if unknown:
            raise ValueError(f"folders the model was not fitted on: {sorted(unknown)[:3]}")
        model = copy.copy(self)
        model.triples_ = check_triples(triples, len(folders))
        model._fit_labels = [None if f is None else index[tuple(f)] for f in folders]
        return model

    def _check_params(self) -> None:
        if not self.C > 0:
            raise ValueError(f"C must be positive, got {self.C!r}")
        if not isinstance(self.n_components, int | np.integer) or self.n_components < 0:
            raise ValueError(f"n_components must be a non-negative int, got {self.n_components!r}")
        if not 0.0 < self.rho < 1.0:
            raise ValueError(f"rho must lie in (0, 1), got {self.rho!r}")
        if not isinstance(self.cv, int | np.integer) or self.cv < 2:
            raise ValueError(f"cv must be an int >= 2, got {self.cv!r}")
        if self.previous_representation not in (None, *REPRESENTATIONS):
            raise ValueError(
                f"previous_representation must be None or one of {REPRESENTATIONS}, "
                f"got {self.previous_representation!r}"
            )
        if self.representation not in ("auto", *REPRESENTATIONS):
            raise ValueError(
                f"representation must be 'auto' or one of {REPRESENTATIONS}, "
                f"got {self.representation!r}"
            )
        if not isinstance(self.selection_folds, int | np.integer) or self.selection_folds < 2:
            raise ValueError(f"selection_folds must be an int >= 2, got {self.selection_folds!r}")
        if self.cross_validated is not None and not isinstance(
            self.cross_validated, CrossValidated
        ):
            raise ValueError(
                f"cross_validated must be a CrossValidated or None, got {self.cross_validated!r}"
            )
        if not self.max_label_change >= 0:
            raise ValueError(f"max_label_change must be >= 0, got {self.max_label_change!r}")
        if not isinstance(self.max_svm_pairs, int | np.integer) or self.max_svm_pairs < 0:
            raise ValueError(f"max_svm_pairs must be an int >= 0, got {self.max_svm_pairs!r}")
        if not isinstance(self.max_held_out, int | np.integer) or self.max_held_out < 1:
            raise ValueError(f"max_held_out must be a positive int, got {self.max_held_out!r}")
        if self.n_jobs is not None and (
            not isinstance(self.n_jobs, int | np.integer) or self.n_jobs == 0
        ):
            raise ValueError(f"n_jobs must be None or a non-zero int, got {self.n_jobs!r}")

    def _folds_used(self, n_folds: int, n_labeled: int) -> int:
        """How many of ``n_folds`` folds hold out ``max_held_out`` documents (all, if fewer);
        one where the SVMs are sampled (labeled documents x folders above
        ``max_svm_pairs``)."""
        if self._sampled(n_labeled):
            return 1
        per_fold = max(n_labeled / n_folds, 1.0)
        return int(min(n_folds, np.ceil(self.max_held_out / per_fold)))

    def _sampled(self, n_labeled: int) -> bool:
        """Whether the SVMs of ``n_labeled`` documents are sampled (``max_svm_pairs``)."""
        return n_labeled * len(self.folders_) > self.max_svm_pairs

    def _parallel(self, task: Callable[..., _T], args: Sequence[Any]) -> list[_T]:
        """``[task(a) for a in args]`` (a tuple ``a`` is unpacked), on ``n_jobs`` threads."""
        calls = [a if isinstance(a, tuple) else (a,) for a in args]
        if self.n_jobs is None or self.n_jobs == 1 or len(calls) < 2:
            return [task(*a) for a in calls]
        return list(
            Parallel(n_jobs=self.n_jobs, prefer="threads")(delayed(task)(*a) for a in calls)
        )

    def _weigh(
        self,
        X: sp.csr_matrix,
        w: NDArray[np.float64],
        labeled: NDArray[np.bool_],
        y: NDArray[np.intp],
        representation: str,
    ) -> tuple[sp.csr_matrix, NDArray[np.float64]]:
        """Columns scaled by the term weights (times eta^2 of the labeled rows for "latent")."""
        Xw = _scale_columns(X, np.sqrt(w))
        if has_latent(representation) and self.supervised_weights and len(self.folders_) > 1:
            eta2 = correlation_ratio(Xw[labeled], y, len(self.folders_))
            if eta2.sum() > 0:
                w = w * eta2
                w *= X.shape[1] / w.sum()
                Xw = _scale_columns(X, np.sqrt(w))
        return Xw, w

    def _fit_components(self, Xw: sp.csr_matrix, representation: str) -> NDArray[np.float64]:
        """The LSA directions of the weighted rows ``Xw`` (n_docs, n_terms), shape
        (k, n_terms); none for "plain".

        The SVD runs in single precision, as the tf-idf rows were made: its sparse products
        and LU steps took half the time (0.92 -> 0.35 s at 2,200 documents x 27,545 terms,
        three per selection), and the directions agree to about 1e-6, which left every
        figure of the service benchmark as it was (docs/recluster.md, "The LSA in single
        precision").

        One direction per folder at least, where there are more folders than
        ``n_components``: with 100 directions for 210 folders (six documentation sets under
        one root) the latent model placed no better than the plain SVM; with one per folder
        the replays of its six first reclusters placed 0.5-1.8 points more, and through the
        REST API it was below the SVM in one run of six instead of three. Twice
        ``n_components`` at most:
        the latent block of the features is dense, n_docs x k (docs/placement.md, "More
        folders than latent directions").
        """
        n_docs, n_terms = Xw.shape
        if not has_latent(representation):
            return np.zeros((0, n_terms))
        per_folder = max(self.n_components, len(self.folders_))
        k = min(per_folder, 2 * self.n_components, n_docs // 4, n_terms - 1)
        if k < 2:
            return np.zeros((0, n_terms))
        svd = TruncatedSVD(k, random_state=self.random_state)
        svd.fit(Xw.astype(np.float32))
        return np.asarray(svd.components_, dtype=np.float64)

    def _features(
        self,
        Xw: sp.csr_matrix,
        components: NDArray[np.float64] | None = None,
        plain: sp.csr_matrix | None = None,
    ) -> sp.csr_matrix:
        """Weighted tf-idf with its unit-length LSA coordinates appended, rows L2-normalised.

        ``components``: the LSA directions, ``components_`` by default (cross-validation
        passes its own, so that folds fitted in parallel share no state). ``plain``: for
        "latent+plain+nb", plain's weighted tf-idf (n_docs, n_terms), appended as a second
        unit-length block (:meth:`_plain_block`): shape (n_docs, 2 n_terms + k) then.
        """
        C = self.components_ if components is None else components
        if C.shape[0] == 0:
            F = sp.csr_matrix(normalize(Xw))
        else:
            latent = normalize(np.asarray(Xw @ C.T))
            F = sp.csr_matrix(normalize(sp.hstack([normalize(Xw), sp.csr_matrix(latent)]).tocsr()))
        if plain is None:
            return F
        return sp.csr_matrix(sp.hstack([F, normalize(plain)]).tocsr())

    def _plain_block(self, X: sp.csr_matrix) -> sp.csr_matrix | None:
        """Plain's weighted tf-idf of the rows ``X`` (n_docs, n_terms) for
        "latent+plain+nb" (``plain_weights_``), None for the other representations."""
        if self.plain_weights_.size == 0:
            return None
        return _scale_columns(X, np.sqrt(self.plain_weights_))

    def _feature_rows(self, X: sp.csr_matrix) -> sp.csr_matrix:
        """The fitted model's features of the tf-idf rows ``X`` (n_docs, n_terms)."""
        Xw = _scale_columns(X, np.sqrt(self.term_weights_))
        return self._features(Xw, plain=self._plain_block(X))

    def _fit_svm(
        self,
        F: sp.csr_matrix,
        y: NDArray[np.intp],
        sample_weight: NDArray[np.float64] | None = None,
        n_jobs: int | None = None,
        representation: str | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """One-vs-rest SVMs: coef (n_folders, n_features), intercept (n_folders,).

        ``representation``: a "+nb" one adds a complement naive Bayes term to the tf-idf
        columns' coefficients (the first ``n_features_in_``;
        :func:`_naive_bayes.naive_bayes_term`); for "latent+plain+nb" ``F`` holds its two
        blocks, each fitted as its own model (:func:`side_by_side`). None: the SVMs alone.

        ``n_jobs`` threads for sampled SVMs: the final fit only (and the chosen
        representation's second pass, which runs alone). Cross-validation already runs its
        folds on ``n_jobs`` threads; with class threads inside them too, the first
        recluster of 100,000 documents was no faster and its worker peaked at 4.1 GB
        instead of 3.9 (one run each, docs/recluster.md "100,000 documents").
        """
        if representation is not None and is_both(representation):

            def fit_part(block: sp.csr_matrix, part: str) -> tuple[NDArray, NDArray]:
                return self._fit_svm(block, y, sample_weight, n_jobs, representation=part)

            return side_by_side(F, self.n_features_in_, fit_part)
        k = len(self.folders_)
        intercept = np.full(k, -1.0)
        present = np.unique(y)
        if present.size == 1:
            intercept[present] = 1.0
            return np.zeros((k, F.shape[1])), intercept
        if self._samples(y):
            c, b, present = sampled_one_vs_rest(
                F, y, C=self.C, sample_weight=sample_weight, random_state=self.random_state,
                n_jobs=n_jobs,
            )  # fmt: skip
        else:
            with warnings.catch_warnings(), LIBLINEAR_LOCK:
                warnings.simplefilter("ignore", ConvergenceWarning)
                svm = LinearSVC(C=self.C, random_state=self.random_state).fit(
                    F, y, sample_weight=sample_weight
                )
            c, b = svm.coef_, svm.intercept_
            if present.size == 2:  # sklearn keeps one binary decision; one per class here
                c, b = np.vstack([-c[0], c[0]]), np.array([-b[0], b[0]])
        if representation is not None and has_naive_bayes(representation):
            # In place: the coefficients are this fit's own, and at a few hundred folders
            # each copy is 100 MB or more. The term weighs the tf-idf columns only.
            c = np.asarray(c, dtype=np.float64)
            n = self.n_features_in_
            c[:, :n] += naive_bayes_term(F, y, present, c, b, sample_weight, n_terms=n)
        return self._all_folders(c, b, present)

    def _all_folders(
        self, c: NDArray[np.float64], b: NDArray[np.float64], present: NDArray[np.intp]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The SVMs ``c`` (n_present, n_features), ``b`` of the folders ``present`` as
        coef (n_folders, n_features) and intercept (n_folders,): a folder without labeled
        documents has zero coefficients and intercept -1."""
        k = len(self.folders_)
        intercept = np.full(k, -1.0)
        intercept[present] = b
        if present.size == k:  # every folder: the fitted rows are the coefficients
            return np.ascontiguousarray(c, dtype=np.float64), intercept
        # Allocated only now: at 1,000 folders and 20,000 terms a coefficient array is
        # 160 MB, and cross-validation fits two folds at once (docs/recluster.md).
        coef = np.zeros((k, c.shape[1]))
        coef[present] = c
        return coef, intercept

    def _samples(self, y: NDArray[np.intp]) -> bool:
        """Whether :meth:`_fit_svm` samples the SVMs of the rows labeled ``y``: more than
        two folders present, and rows x folders present above ``max_svm_pairs``."""
        present = np.unique(y).size
        return present > 2 and y.size * present > self.max_svm_pairs

    def _first_pass(self, F: sp.csr_matrix, y: NDArray[np.intp]) -> FirstPass | None:
        """The first pass of the sampled SVMs of the rows ``F`` (n, n_features) labeled
        ``y``, or None where :meth:`_fit_svm` would not sample them."""
        if not self._samples(y):
            return None
        return first_pass(F, y, C=self.C, random_state=self.random_state)

    def calibrated_confidence(self, top: ArrayLike) -> NDArray[np.float64]:
        """Probability that a document whose top posterior is ``top`` is placed right,
        shape of ``top``; the posterior itself when no held-out documents were scored."""
        self._check_fitted()
        top = np.asarray(top, dtype=np.float64)
        if self.calibration_x_.size == 0:
            return top
        return np.interp(top, self.calibration_x_, self.calibration_y_)

    # --------------------------------------------------------------- predicting

    def decision_function(self, X: Matrix) -> NDArray[np.float64]:
        """SVM decision values, shape (n_docs, n_folders)."""
        self._check_fitted()
        X = as_csr(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} terms, the model was fitted on {self.n_features_in_}"
            )
        F = self._feature_rows(X)
        return np.asarray(F @ self._coef_columns()) + self.intercept_

    def _coef_columns(self) -> NDArray[np.float64]:
        """``coef_.T`` as a contiguous array, made once per ``coef_`` object.

        scipy's sparse-times-dense product copies a non-contiguous operand on every call:
        for one new document against 100 folders and 25k terms that copy (20 MB) was 90%
        of a suggestion's time (bench/suggest_bench.py). Same numbers, same order.
        """
        cached = self.__dict__.get("_coef_t")
        if cached is None or cached[0] is not self.coef_:
            cached = (self.coef_, np.ascontiguousarray(self.coef_.T))
            self.__dict__["_coef_t"] = cached
        return cached[1]

    def predict_proba(
        self, X: Matrix, *, rows: Sequence[int] | NDArray[np.integer] | None = None
    ) -> NDArray[np.float64]:
        """Folder posteriors, shape (n_docs, n_folders); rows sum to 1.

        ``rows`` gives each row's document index in the fitted collection, so that the
        explicit triples of the fit apply; by default they apply when ``X`` has as many rows
        as the fitted collection.
        """
        P = np.exp(log_softmax(self.decision_function(X) / self.temperature_))
        if rows is None and X.shape[0] == len(self._fit_labels):
            rows = range(X.shape[0])
        if rows is not None and len(self.triples_):
            P = self._apply_triples(P, np.asarray(rows, dtype=np.intp))
        return P

    def predict(self, X: Matrix) -> list[FolderPath]:
        """The most probable folder of each document (no level assignment)."""
        P = self.predict_proba(X)
        return [self.folders_[j] for j in P.argmax(axis=1)]

    def is_novel(self, X: Matrix, quantile: float | None = None) -> NDArray[np.bool_]:
        """Whether each row's top decision value is below the ``quantile`` of the held-out
        documents of known folders, shape (n_docs,): no folder's SVM accepts it as well as
        it accepts all but ``quantile`` of that folder's own unseen documents.

        A one-sided test on known documents (open-set rejection). False when nothing could be
        held out. ``None``: :meth:`novelty_quantile`.
        """
        D = self.decision_function(X)
        if self.held_out_top_.size == 0:
            return np.zeros(D.shape[0], dtype=bool)
        q = self.novelty_quantile() if quantile is None else quantile
        threshold = np.quantile(self.held_out_top_, q)
        return np.asarray(D.max(axis=1) < threshold)

    def novelty_quantile(self) -> float:
        """The quantile :meth:`is_novel` uses by default, from the labeled folder sizes.

        Held-out decision values come from SVMs trained on ``1 - 1/cv`` of each folder. For
        small folders that is a much weaker model than the final one, so held-out documents
        score low and a fixed quantile lets almost no new document through; for big folders
        the two are alike. 0.25 up to a median of 10 labeled documents per folder, 0.1 from
        40, log-linear between: measured on python-docs (6 filed per folder; 0.1 proposed
        almost nothing, 0.25 kept most hidden folders) and on a corpus of 48 filed per folder
        (0.25 let 42-64 known documents per run into proposals, 0.1 3-21). docs/placement.md.
        """
        m = float(np.median(self.labeled_per_folder_)) if self.labeled_per_folder_.size else 0
        if m <= 10:
            return 0.25
        if m >= 40:
            return 0.1
        return float(0.25 + (0.1 - 0.25) * np.log(m / 10) / np.log(4))

    def known_proba(self, X: Matrix) -> NDArray[np.float64]:
        """Probability that each row belongs to an existing folder, shape (n_docs,)."""
        return self.known_from_decisions(self.decision_function(X))

    def known_from_decisions(self, D: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`known_proba` from decision values ``D`` of shape (n_docs, n_folders)."""
        if self.novelty_coef_.size == 0:
            return np.ones(D.shape[0])
        D = np.sort(D, axis=1)
        a, b, c = self.novelty_coef_
        z = a * D[:, -1] + b * (D[:, -1] - D[:, -2]) + c
        return 1.0 / (1.0 + np.exp(-z))

    def place(
        self, X: Matrix, *, rows: Sequence[int] | NDArray[np.integer] | None = None
    ) -> Placement:
        """Folder, confidence and confident depth of each row of ``X`` (003 sec. 3.1)."""
        P = self.predict_proba(X, rows=rows)
        return assign_folder_levels(P, self.folders_, self.rho, known=self.known_proba(X))

    def _apply_triples(self, P: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        """Zero the folders of ``x`` that would violate a triple (x, y, z) with y, z labeled.

        x at folder f satisfies (x, y, z) iff f shares a strictly deeper common ancestor
        with y's folder than with z's (001 sec. 3). If a document's triples rule out every
        folder, they contradict the labels and its posteriors are kept as they were.
        """
        pos = {int(r): i for i, r in enumerate(rows)}
        depth_common = common_depths(self.folders_)
        P = P.copy()
        for x, yy, z in self.triples_:
            i = pos.get(int(x))
            fy, fz = self._fit_labels[yy], self._fit_labels[z]
            if i is None or fy is None or fz is None or self._fit_labels[x] is not None:
                continue
            ok = depth_common[:, fy] > depth_common[:, fz]
            # Triples keep ties apart only when the folders differ: x, y, z in one folder
            # say nothing about the folder of x.
            if fy == fz or not ok.any():
                continue
            masked = P[i] * ok
            if masked.sum() > 0:
                P[i] = masked / masked.sum()
        return P

    # ------------------------------------------------------------- persistence

    def to_arrays(self) -> dict[str, NDArray[np.generic]]:
        """The fitted model as plain numeric arrays (no Python objects, no pickle):
        :func:`~_placement_arrays.placement_to_arrays`."""
        self._check_fitted()
        return placement_to_arrays(self)

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, NDArray[np.generic]]) -> FolderPlacement:
        """A fitted model from :meth:`to_arrays` output; ``ValueError`` if inconsistent
        (:func:`~_placement_arrays.placement_from_arrays`)."""
        return placement_from_arrays(cls, arrays)

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise ValueError("FolderPlacement is not fitted yet; call fit first")


# ---------------------------------------------------------------------- helpers


def correlation_ratio(X: sp.csr_matrix, y: NDArray[np.intp], n_classes: int) -> NDArray[np.float64]:
    """Per term, the share of its variance that the classes explain (eta^2), shape (n_terms,).

    Terms constant over the labeled documents get 0.
    """
    X = as_csr(X)
    n = X.shape[0]
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    Y = sp.csr_matrix((np.ones(n), (y, np.arange(n))), shape=(n_classes, n))
    sums = np.asarray((Y @ X).todense())
    total_sum = sums.sum(axis=0)
    total_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
    # Sum of squares around the grand mean, and between classes (ANOVA decomposition).
    ss_total = total_sq - total_sum**2 / n
    nz = counts > 0
    ss_between = (sums[nz] ** 2 / counts[nz, None]).sum(axis=0) - total_sum**2 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        eta2 = np.where(ss_total > 1e-12, ss_between / ss_total, 0.0)
    return np.clip(eta2, 0.0, 1.0)


def side_by_side(
    F: sp.csr_matrix,
    n_terms: int,
    fit: Callable[[sp.csr_matrix, str], tuple[NDArray[np.float64], NDArray[np.float64]]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ "latent+plain+nb"'s coefficients (n_folders, n_features) and intercepts
    (n_folders,) from ``F``'s two blocks ([latent | plain], plain's the last ``n_terms``
    columns), each fitted by ``fit(block, "latent+nb" or "plain+nb")``: side by side,
    intercepts added, so that the decisions are the sum of the two models'."""
    split = F.shape[1] - n_terms
    latent_coef, latent_intercept = fit(F[:, :split], LATENT_NB)
    plain_coef, plain_intercept = fit(F[:, split:], PLAIN_NB)
    return np.hstack([latent_coef, plain_coef]), latent_intercept + plain_intercept


def _scale_columns(X: sp.csr_matrix, s: NDArray[np.float64]) -> sp.csr_matrix:
    return sp.csr_matrix(X @ sp.diags(s))
