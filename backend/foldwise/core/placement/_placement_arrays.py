"""A fitted ``FolderPlacement`` as plain numeric arrays and back: what a worker stores per
user and tree version and reads again without unpickling anything (docs/recluster.md,
"Instant suggestions")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from foldwise.core import _arrays
from foldwise.core.placement._checks import check_triples
from foldwise.core.placement._naive_bayes import is_both

if TYPE_CHECKING:
    from foldwise.core.placement._placement import FolderPlacement


def placement_to_arrays(model: FolderPlacement) -> dict[str, NDArray[np.generic]]:
    """The fitted model as plain numeric arrays (no Python objects, no pickle).

    Everything ``FolderPlacement.predict_proba``, ``known_proba``, ``is_novel``,
    ``calibrated_confidence`` and ``place`` read, plus the parameters;
    :func:`placement_from_arrays` rebuilds a model that gives identical outputs. Folder paths are
    packed as UTF-8 components (``_arrays.pack_paths``). Write with
    ``_arrays.to_npz``.
    """
    fit_labels = np.array([-1 if j is None else j for j in model._fit_labels], dtype=np.int64)
    params = {
        "C": model.C,
        "n_components": model.n_components,
        "supervised_weights": model.supervised_weights,
        "use_given_weights": model.use_given_weights,
        "rho": model.rho,
        "cv": model.cv,
        "random_state": model.random_state,
        "selection_folds": model.selection_folds,
    }
    out: dict[str, NDArray[np.generic]] = {
        f"param_{k}": np.asarray(v, dtype=np.float64) for k, v in params.items()
    }
    out["param_representation"], out["param_representation_offsets"] = _arrays.pack_strings(
        [model.representation]
    )
    # The folders, the representation and the cross-validated quantities, with the
    # counts they were estimated on (format version included).
    out.update(model.cross_validated_state().to_arrays())
    out.update(
        term_weights_=np.asarray(model.term_weights_, dtype=np.float64),
        plain_weights_=np.asarray(model.plain_weights_, dtype=np.float64),
        components_=np.asarray(model.components_, dtype=np.float64),
        coef_=np.asarray(model.coef_, dtype=np.float64),
        intercept_=np.asarray(model.intercept_, dtype=np.float64),
        labeled_per_folder_=np.asarray(model.labeled_per_folder_, dtype=np.int64),
        triples_=np.asarray(model.triples_, dtype=np.int64).reshape(-1, 3),
        fit_labels=fit_labels,
        n_features_in_=np.asarray(model.n_features_in_, dtype=np.int64),
    )
    return out


def placement_from_arrays(
    cls: type[FolderPlacement], arrays: Mapping[str, NDArray[np.generic]]
) -> FolderPlacement:
    """A fitted ``cls`` from :func:`placement_to_arrays` output; ``ValueError`` if
    inconsistent.

    Shapes are checked against each other, so a damaged or hand-made archive fails
    here rather than giving posteriors of the wrong folders.
    """
    names = [
        "folders_bytes", "folders_offsets", "folders_path_offsets", "term_weights_",
        "components_", "coef_", "intercept_", "labeled_per_folder_", "temperature_",
        "calibration_x_", "calibration_y_", "held_out_top_", "novelty_coef_", "triples_",
        "fit_labels", "n_features_in_", "representation_", "representation_offsets",
        "param_representation", "param_representation_offsets",
    ]  # fmt: skip
    _arrays.require(arrays, names, "FolderPlacement")

    def num(name: str) -> float:
        return _arrays.scalar(arrays, name)

    model = cls(
        C=num("param_C"),
        n_components=int(num("param_n_components")),
        supervised_weights=bool(num("param_supervised_weights")),
        use_given_weights=bool(num("param_use_given_weights")),
        rho=num("param_rho"),
        cv=int(num("param_cv")),
        random_state=int(num("param_random_state")),
        representation=_arrays.unpack_strings(
            arrays["param_representation"], arrays["param_representation_offsets"]
        )[0],
        selection_folds=int(num("param_selection_folds")),
    )
    model._check_params()
    model.folders_ = _arrays.unpack_paths(
        arrays["folders_bytes"], arrays["folders_offsets"], arrays["folders_path_offsets"]
    )
    k, n_terms = len(model.folders_), int(num("n_features_in_"))

    def floats(name: str, shape: tuple[int, ...] | None = None) -> NDArray[np.float64]:
        a = np.asarray(arrays[name])
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{name!r} must be numeric, got dtype {a.dtype}")
        # No copy of what is float64 already: the coefficients of 1,000 folders are
        # hundreds of MB, and copying them was a third of loading a kept model.
        a = np.asarray(a, dtype=np.float64)
        if shape is not None and a.shape != shape:
            raise ValueError(f"{name!r} has shape {a.shape}, expected {shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name!r} holds non-finite numbers")
        return a

    model.term_weights_ = floats("term_weights_", (n_terms,))
    components = floats("components_")
    if components.ndim != 2 or components.shape[1] != n_terms:
        raise ValueError(f"components_ has shape {components.shape} for {n_terms} terms")
    model.components_ = components
    # Archives written before "latent+plain+nb" have no plain block.
    model.plain_weights_ = floats("plain_weights_") if "plain_weights_" in arrays else np.zeros(0)
    if model.plain_weights_.shape not in ((0,), (n_terms,)):
        raise ValueError(f"plain_weights_ has shape {model.plain_weights_.shape}")
    n_features = n_terms + components.shape[0] if components.shape[0] else n_terms
    n_features += model.plain_weights_.size
    model.coef_ = floats("coef_", (k, n_features))
    model.intercept_ = floats("intercept_", (k,))
    model.labeled_per_folder_ = floats("labeled_per_folder_", (k,)).astype(np.intp)
    # Archives written before cross-validated quantities were kept estimated them on
    # their own labeled documents.
    model.cv_labeled_per_folder_ = (
        floats("cv_labeled_per_folder_", (k,)).astype(np.intp)
        if "cv_labeled_per_folder_" in arrays
        else model.labeled_per_folder_
    )
    model.cross_validated_reused_ = False
    model.temperature_ = float(num("temperature_"))
    if not model.temperature_ > 0:
        raise ValueError("temperature_ must be positive")
    model.calibration_x_ = floats("calibration_x_")
    model.calibration_y_ = floats("calibration_y_", model.calibration_x_.shape)
    model.held_out_top_ = floats("held_out_top_")
    model.novelty_coef_ = floats("novelty_coef_")
    if model.novelty_coef_.shape not in ((0,), (3,)):
        raise ValueError(f"novelty_coef_ has shape {model.novelty_coef_.shape}")
    fit_labels = np.asarray(arrays["fit_labels"]).astype(np.int64).reshape(-1)
    if fit_labels.size and (fit_labels.min() < -1 or fit_labels.max() >= k):
        raise ValueError("fit_labels refer to folders the model does not have")
    model._fit_labels = [None if j < 0 else int(j) for j in fit_labels]
    model.triples_ = check_triples(np.asarray(arrays["triples_"]), len(fit_labels))
    model.representation_ = _arrays.unpack_strings(
        arrays["representation_"], arrays["representation_offsets"]
    )[0]
    if (model.plain_weights_.size > 0) != is_both(model.representation_):
        raise ValueError(f"plain_weights_ does not fit representation {model.representation_!r}")
    model.n_features_in_ = n_terms
    return model
