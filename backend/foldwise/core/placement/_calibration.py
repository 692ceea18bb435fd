"""From held-out SVM decisions to numbers a person can trust (``FolderPlacement``'s
cross-validated quantities): the softmax temperature, the calibration map behind the
confidence shown, and the novelty model of "belongs to an existing folder".

Pure functions of the held-out decisions; ``FolderPlacement`` fits the folds that produce
them (docs/placement.md, "Placement model").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from foldwise.core.placement._decision_kernel import best_two

#: Standard deviations below a calibration block's share right that its documents are
#: shown at: the one-sided 95% Wilson bound, so that "shown .9" is a floor a person can
#: hold the model to. One sigma (an 84% bound) let blocks of 15-25 held-out documents, all
#: right, show .9 on collections of 3-18 filed documents per folder, and the new documents
#: shown there were right 86-89% of the time (docs/placement.md, "A floor at 95%").
CALIBRATION_Z = 1.645


@dataclass(frozen=True)
class HeldOutFit:
    """What the temperature's cross-validation learns from the held-out documents."""

    #: Softmax temperature turning decision values into posteriors (1.0: nothing scored).
    temperature: float
    #: Isotonic map from a top posterior to the share placed right, shape (n_thresholds,)
    #: each (:func:`calibration_map`); empty when nothing was scored.
    calibration_x: NDArray[np.float64]
    calibration_y: NDArray[np.float64]
    #: The held-out documents' top decision values, sorted, shape (n_scored,).
    held_out_top: NDArray[np.float64]


def temperature_from(
    y: NDArray[np.intp],
    fold: NDArray[np.intp],
    used: list[int],
    decisions: list[NDArray[np.float64] | None],
    n_folders: int,
) -> HeldOutFit:
    """The temperature minimising the held-out log-loss, and what comes with it.

    ``y``: folder index of each labeled document, shape (n_labeled,); ``fold``: its fold;
    ``decisions``: for each fold of ``used``, the decision values (n_in_fold, n_folders)
    of SVMs that did not see that fold, or None where the fold could not be scored. A fold
    of -1 marks a held-out document whose decisions were not kept: neither scored nor
    counted among a fold's training documents.
    """
    scored = np.zeros(y.size, dtype=bool)
    parts: list[tuple[NDArray[np.bool_], NDArray[np.float64]]] = []
    for f, D_f in zip(used, decisions, strict=True):
        if D_f is not None:
            test = fold == f
            known = np.isin(y[test], y[~test & (fold >= 0)])
            scored[test] = known
            parts.append((test, D_f[known]))
    if not scored.any():
        return HeldOutFit(1.0, np.zeros(0), np.zeros(0), np.zeros(0))
    # Rows in document order, as with every fold: (n_scored, n_folders).
    D = np.zeros((int(scored.sum()), n_folders))
    position = np.cumsum(scored) - 1
    for test, D_known in parts:
        D[position[test & scored]] = D_known
    t = y[scored]
    # What the SVMs say of documents of known folders they did not train on: a new
    # document far below that is unlike every folder (``FolderPlacement.is_novel``).
    held_out_top = np.sort(D.max(axis=1))
    # n held-out documents all classified right do not make the model certain: like the
    # rule of succession, aim at (1 - eps) on the true folder with eps = 1 / (n + 2),
    # spread over the others. Otherwise separable training data drives the temperature to
    # zero and every new document, however ambiguous, gets posterior 1.
    k = D.shape[1]
    eps = 1.0 / (t.size + 2)
    target = np.full((t.size, k), eps / max(k - 1, 1))
    target[np.arange(t.size), t] = 1.0 - eps

    def loss(log_t: float) -> float:
        return float(-(target * log_softmax(D / np.exp(log_t))).sum(axis=1).mean())

    res = minimize_scalar(loss, bounds=(np.log(1e-3), np.log(1e2)), method="bounded")
    temperature = float(np.exp(res.x))
    x, shown = calibration_map(np.exp(log_softmax(D / temperature)), t)
    return HeldOutFit(temperature, x, shown, held_out_top)


def calibration_map(
    P: NDArray[np.float64], t: NDArray[np.intp]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Isotonic map from the top posterior to the share of documents placed right: its
    thresholds and values, shape (n_thresholds,) each.

    ``P``: held-out posteriors (n_docs, n_folders); ``t``: true folder indices (n_docs,).
    Fitted on held-out posteriors, so a shown confidence of .9 means about 90% right on
    documents the model did not train on (a softmax alone was overconfident: .96 claimed,
    .82 right). Models trained on 1 - 1/cv of the data are a little weaker than the
    final one, so the map errs on the modest side.
    """
    top = P.max(axis=1)
    right = (P.argmax(axis=1) == t).astype(np.float64)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(top, right)
    # Each isotonic block's share right is an estimate from few documents: show the
    # lower end of its one-sided 95% Wilson interval, so that a small lucky block does
    # not claim .95 (the promise is a floor, "shown .9, right at least 90%").
    fitted = iso.predict(top)
    levels = np.unique(fitted)
    lower = np.array([wilson_lower(right[fitted == v].sum(), (fitted == v).sum()) for v in levels])
    shown = lower[np.abs(levels[None, :] - iso.y_thresholds_[:, None]).argmin(axis=1)]
    return np.asarray(iso.X_thresholds_, dtype=np.float64), np.maximum.accumulate(shown)


def novelty_coefficients(
    done: list[tuple[NDArray[np.float64], NDArray[np.bool_]] | None],
) -> NDArray[np.float64]:
    """Coefficients (a, b, c) of ``sigmoid(a d1 + b (d1 - d2) + c)``, the probability of
    belonging to an existing folder, from the hidden groups' (features, known) pairs
    (``_held_out_fits.novelty_folds``); empty when they hold only one kind."""
    results = [r for r in done if r is not None]
    if not results:
        return np.zeros(0)
    A, t = np.vstack([r[0] for r in results]), np.concatenate([r[1] for r in results])
    if t.all() or not t.any():
        return np.zeros(0)
    model = LogisticRegression(class_weight="balanced").fit(A, t)
    return np.concatenate([model.coef_[0], model.intercept_])


def log_softmax(D: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise log-softmax of ``D`` (n_docs, n_folders)."""
    D = D - D.max(axis=1, keepdims=True)
    return D - np.log(np.exp(D).sum(axis=1, keepdims=True))


def wilson_lower(k: float, n: float, z: float = CALIBRATION_Z) -> float:
    """Lower end of the Wilson score interval of k successes in n trials (z sigmas)."""
    if n <= 0:
        return 0.0
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - spread) / (1 + z * z / n))


def top_two_decisions(
    F: sp.csr_matrix,
    rows: NDArray[np.intp],
    W: NDArray[np.float64],
    intercept: NDArray[np.float64],
    *,
    n_jobs: int | None = None,
) -> NDArray[np.float64]:
    """The novelty model's features of each row of ``F[rows]``: the highest decision value
    and its margin over the second, shape (n_rows, 2); the second result of
    :func:`_decision_kernel.best_two` (shapes and ``n_jobs`` as there)."""
    return best_two(F, rows, W, intercept, n_jobs=n_jobs)[1]
