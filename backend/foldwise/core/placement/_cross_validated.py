"""What :class:`FolderPlacement` learns by cross-validation, kept so a later fit can reuse it.

Of a placement model's 12 LinearSVC fits, 11 are cross-validation: the representation
selection (6), whose held-out decisions also give the softmax temperature and calibration
(5 fits of their own where the representation is fixed), and the novelty model (5). They
estimate properties of the collection (which representation places better, how sure
held-out decisions are, how low a known document's top decision goes), not the boundaries
themselves. A recluster after a few moves or filings sees almost the same labeled
collection, so its model refits only the final SVMs and the LSA, and reuses these
(docs/recluster.md, "Kept cross-validation").

The state records the labeled counts per folder it was estimated on, so that reuse stops
once the collection has drifted far enough from them, however small each step was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from foldwise.core import _arrays
from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._naive_bayes import REPRESENTATIONS

#: Parameters that change what the cross-validation estimates; a state is reused only by a
#: model with the same values.
CV_PARAMS = ("C", "n_components", "supervised_weights", "cv", "selection_folds", "random_state")
_REQUIRED = (
    "folders_bytes", "folders_offsets", "folders_path_offsets", "representation_",
    "representation_offsets", "temperature_", "calibration_x_", "calibration_y_",
    "held_out_top_", "novelty_coef_", *(f"param_{k}" for k in CV_PARAMS),
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class CrossValidated:
    """The cross-validated quantities of one fit (attributes of :class:`FolderPlacement`).

    ``labeled_per_folder``: labeled documents per folder of ``folders`` when they were
    estimated, shape (n_folders,). The others: ``representation_``, ``temperature_``,
    ``calibration_x_`` / ``calibration_y_`` (n_thresholds,), ``held_out_top_``
    (n_held_out,), ``novelty_coef_`` (3,) or (0,).
    """

    #: The arrays a state is read from, named as in ``FolderPlacement.to_arrays``: a reader
    #: may load just these of a stored model (the counts are ``labeled_per_folder_`` in a
    #: model stored before states were kept).
    array_names: ClassVar[tuple[str, ...]] = (
        "format_version", *_REQUIRED, "cv_labeled_per_folder_", "labeled_per_folder_",
    )  # fmt: skip

    folders: list[FolderPath]
    labeled_per_folder: NDArray[np.int64]
    params: dict[str, float]
    representation: str
    temperature: float
    calibration_x: NDArray[np.float64]
    calibration_y: NDArray[np.float64]
    held_out_top: NDArray[np.float64]
    novelty_coef: NDArray[np.float64]

    def __repr__(self) -> str:
        # Estimators print their parameters; the arrays would fill a screen.
        return (
            f"CrossValidated({len(self.folders)} folders, "
            f"{int(self.labeled_per_folder.sum())} labeled, {self.representation!r})"
        )

    def reusable(
        self,
        folders: Sequence[FolderPath],
        labeled_per_folder: NDArray[np.integer],
        params: Mapping[str, float],
        max_change: float,
    ) -> bool:
        """Whether a fit on ``labeled_per_folder`` documents of ``folders`` may reuse this.

        Every folder of the state still there (new ones may have joined: a folder the person
        created or a proposal accepted), the same :data:`CV_PARAMS`, and the labeled counts
        moved by at most ``max_change`` of the documents the state was estimated on (the
        sum of absolute per-folder differences, :meth:`counts_on` giving a new folder 0: one
        moved document counts twice, once where it left and once where it arrived).
        """
        before = self.counts_on(folders)
        if before is None or any(float(params[k]) != self.params.get(k) for k in CV_PARAMS):
            return False
        change = np.abs(np.asarray(labeled_per_folder) - before).sum()
        return bool(change <= max_change * self.labeled_per_folder.sum())

    def counts_on(self, folders: Sequence[FolderPath]) -> NDArray[np.int64] | None:
        """The state's labeled counts per folder of ``folders``, 0 for a folder the state
        lacks; None if one of the state's folders is not among ``folders`` (a removed folder,
        or one whose path changed: what it held cannot be counted as change any more)."""
        index = {tuple(f): j for j, f in enumerate(folders)}
        if len(index) != len(folders) or any(tuple(f) not in index for f in self.folders):
            return None
        counts = np.zeros(len(folders), dtype=np.int64)
        counts[[index[tuple(f)] for f in self.folders]] = self.labeled_per_folder
        return counts

    def to_arrays(self) -> dict[str, NDArray[np.generic]]:
        """Plain numeric arrays (no pickle), under the names ``FolderPlacement.to_arrays``
        gives them: a stored model's arrays hold its state, and :meth:`from_arrays` reads
        either."""
        data, offsets, path_offsets = _arrays.pack_paths(self.folders)
        representation, representation_offsets = _arrays.pack_strings([self.representation])
        out: dict[str, NDArray[np.generic]] = {
            f"param_{k}": np.asarray(float(v), dtype=np.float64) for k, v in self.params.items()
        }
        out.update(
            format_version=np.asarray(_arrays.FORMAT_VERSION, dtype=np.int64),
            folders_bytes=data,
            folders_offsets=offsets,
            folders_path_offsets=path_offsets,
            cv_labeled_per_folder_=np.asarray(self.labeled_per_folder, dtype=np.int64),
            representation_=representation,
            representation_offsets=representation_offsets,
            temperature_=np.asarray(self.temperature, dtype=np.float64),
            calibration_x_=np.asarray(self.calibration_x, dtype=np.float64),
            calibration_y_=np.asarray(self.calibration_y, dtype=np.float64),
            held_out_top_=np.asarray(self.held_out_top, dtype=np.float64),
            novelty_coef_=np.asarray(self.novelty_coef, dtype=np.float64),
        )
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, NDArray[np.generic]]) -> CrossValidated:
        """The state from :meth:`to_arrays` or ``FolderPlacement.to_arrays`` output;
        ``ValueError`` if inconsistent. A model stored before states were kept has no
        ``cv_labeled_per_folder_``: it cross-validated on its own ``labeled_per_folder_``."""
        _arrays.require(arrays, _REQUIRED, "cross-validated state")
        folders = _arrays.unpack_paths(
            arrays["folders_bytes"], arrays["folders_offsets"], arrays["folders_path_offsets"]
        )

        def floats(name: str) -> NDArray[np.float64]:
            a = np.asarray(arrays[name])
            if a.dtype.kind not in "biuf" or a.ndim != 1 or not np.all(np.isfinite(a)):
                raise ValueError(f"{name!r} must be a 1-D array of finite numbers")
            return a.astype(np.float64)

        counts_name = (
            "cv_labeled_per_folder_"
            if "cv_labeled_per_folder_" in arrays
            else "labeled_per_folder_"
        )
        if counts_name not in arrays:
            raise ValueError("cross-validated state arrays lack ['cv_labeled_per_folder_']")
        counts = floats(counts_name)
        if counts.shape != (len(folders),) or (counts < 0).any():
            raise ValueError(f"{counts_name} does not fit {len(folders)} folders")
        calibration_x, calibration_y = floats("calibration_x_"), floats("calibration_y_")
        novelty_coef = floats("novelty_coef_")
        if calibration_x.shape != calibration_y.shape or novelty_coef.shape not in ((0,), (3,)):
            raise ValueError("calibration or novelty arrays have inconsistent shapes")
        representation = _arrays.unpack_strings(
            arrays["representation_"], arrays["representation_offsets"]
        )
        temperature = _arrays.scalar(arrays, "temperature_")
        if len(representation) != 1 or representation[0] not in REPRESENTATIONS:
            raise ValueError(f"unknown representation {representation!r}")
        if not temperature > 0:
            raise ValueError(f"non-positive temperature {temperature!r}")
        return cls(
            folders=folders,
            labeled_per_folder=counts.astype(np.int64),
            params={k: _arrays.scalar(arrays, f"param_{k}") for k in CV_PARAMS},
            representation=representation[0],
            temperature=temperature,
            calibration_x=calibration_x,
            calibration_y=calibration_y,
            held_out_top=floats("held_out_top_"),
            novelty_coef=novelty_coef,
        )
