"""The placement model a tree version keeps, between the recluster that fits it and the
requests that use it (docs/recluster.md, "Instant suggestions", "Kept cross-validation").

:func:`pack_model` turns the fitted features and models into one ``.npz`` of plain arrays
(no pickle), which ``jobs/store.py`` stores with the version; :func:`load_model` reads it
back for instant suggestions (``instant.py``), :func:`load_cv` only its cross-validated
quantities for the next recluster (``recluster_input.load_inputs``). :func:`suggest`
applies a loaded model, over folder ids. Part of the seam to the core
with ``core_adapter.py``, below it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise import core
from foldwise.service.recluster.feature_rows import FeatureRows, rows_from_arrays, rows_to_arrays

#: Array name prefixes of the two fitted objects inside one ``.npz`` ...
_FEATURES, _PLACEMENT = "features.", "placement."
#: ... and of biiHAC's self-labeling model's cross-validated quantities (``load_cv``; the
#: placement model's are among its own arrays), and the record of the training.
_SELF_LABEL_CV, _TRAINING = "self_label_cv.", "training."
#: ... and of the unfiled documents' feature rows (``feature_rows.rows_to_arrays``).
_ROWS = "unfiled_rows."


@dataclass(frozen=True)
class TrainingRecord:
    """What a placement model was fitted from, document by document (``kept_model``).

    ``ids``: int64 array of shape (n_trained,), the training documents' ids, ascending;
    ``digests``: uint64 array of the same shape, a digest of each one's folder path, moved
    flag and text; ``settings``: hex digest of the settings that shape the fit and of the
    answers that weigh in as examples.
    """

    ids: NDArray[np.int64]
    digests: NDArray[np.uint64]
    settings: str

    def changed_since(self, earlier: TrainingRecord) -> tuple[list[int], int]:
        """Ids of this training's documents that ``earlier`` lacks or had with another
        folder, flag or text, and how many of ``earlier``'s documents this one lacks."""
        was = dict(zip(earlier.ids.tolist(), earlier.digests.tolist(), strict=True))
        changed = [
            d for d, h in zip(self.ids.tolist(), self.digests.tolist(), strict=True)
            if was.get(d) != h
        ]  # fmt: skip
        removed = int(np.isin(earlier.ids, self.ids, invert=True).sum())
        return changed, removed

    def with_documents(self, current: TrainingRecord, ids: list[int]) -> TrainingRecord:
        """This record with the documents ``ids`` as ``current`` records them (added, or
        their entries replaced): what a model fitted from this training and then given
        the SVMs of those documents' new folders (core ``add_folders``) learned from."""
        take = np.isin(current.ids, np.asarray(ids, dtype=np.int64))
        keep = np.isin(self.ids, current.ids[take], invert=True)
        merged = np.concatenate([self.ids[keep], current.ids[take]])
        digests = np.concatenate([self.digests[keep], current.digests[take]])
        order = np.argsort(merged, kind="stable")
        return TrainingRecord(merged[order], digests[order], self.settings)

    def to_arrays(self) -> dict[str, NDArray[Any]]:
        return {
            "ids": self.ids,
            "digests": self.digests,
            "settings": np.frombuffer(bytes.fromhex(self.settings), dtype=np.uint8),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, NDArray[Any]]) -> TrainingRecord:
        ids = np.asarray(arrays["ids"], dtype=np.int64)
        digests = np.asarray(arrays["digests"], dtype=np.uint64)
        if ids.shape != digests.shape or ids.ndim != 1:
            raise ValueError(f"training record: {ids.shape} ids, {digests.shape} digests")
        settings = np.asarray(arrays["settings"], dtype=np.uint8).tobytes().hex()
        return cls(ids, digests, settings)


@dataclass(frozen=True)
class StoredModel:
    """A tree version's placement features and model, loaded from plain arrays, and the
    record of the training it was fitted from (``None`` in archives written before it was
    kept)."""

    features: core.TextFeatures
    placement: core.FolderPlacement
    training: TrainingRecord | None = None
    #: Rows of the texts it placed, under ``features``, kept for the suggestions it makes
    #: again after a critique (``instant.replace_after_critique``).
    rows: FeatureRows = field(default_factory=FeatureRows, compare=False, repr=False)


@dataclass(frozen=True)
class SuggestionOut:
    """An instant suggestion over folder ids (``core.Suggestion`` with paths mapped)."""

    folder_id: int | None
    confidence: float
    confident_folder_id: int | None
    runner_up_folder_id: int | None
    margin: float | None
    pair_mass: float | None
    terms: list[str]


def pack_model(
    features: core.TextFeatures,
    placement: core.FolderPlacement,
    self_label: core.FolderPlacement | None = None,
    training: TrainingRecord | None = None,
    unfiled_rows: tuple[list[bytes], sp.csr_matrix] | None = None,
) -> bytes:
    """``features`` and ``placement`` as the bytes of one compressed ``.npz`` (no pickle),
    with the cross-validated quantities of ``self_label`` (biiHAC's self-labeling model)
    for the next recluster (:func:`load_cv`), the record of ``placement``'s training, and
    the unfiled documents' rows under ``features`` (text digests, rows: ``FeatureRows.add``)
    that the critiques after this recluster re-place."""
    arrays = {_FEATURES + k: v for k, v in features.to_arrays().items()}
    if unfiled_rows is not None:
        arrays.update({_ROWS + k: v for k, v in rows_to_arrays(*unfiled_rows).items()})
    arrays.update({_PLACEMENT + k: v for k, v in placement.to_arrays().items()})
    if training is not None:
        arrays.update({_TRAINING + k: v for k, v in training.to_arrays().items()})
    if self_label is not None:
        state = self_label.cross_validated_state().to_arrays()
        arrays.update({_SELF_LABEL_CV + k: v for k, v in state.items()})
    return core.arrays_to_npz(arrays)


def load_cv(data: bytes) -> tuple[core.CrossValidated | None, core.CrossValidated | None]:
    """The cross-validated quantities of the placement model and of biiHAC's self-labeling
    model in an archive of :func:`pack_model`; only their members are decompressed (not
    the coefficients). ``ValueError`` for a damaged archive."""
    wanted = [
        prefix + name
        for prefix in (_PLACEMENT, _SELF_LABEL_CV)
        for name in core.CrossValidated.array_names
    ]
    arrays = core.arrays_from_npz(data, names=wanted)

    def state(prefix: str) -> core.CrossValidated | None:
        part = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        return core.CrossValidated.from_arrays(part) if part else None

    return state(_PLACEMENT), state(_SELF_LABEL_CV)


def load_model(data: bytes) -> StoredModel:
    """The inverse of :func:`pack_model`, read with ``allow_pickle=False``; ``ValueError``
    for bytes that are not such a model (damaged, pickled, another format)."""
    arrays = core.arrays_from_npz(data)

    def part(prefix: str) -> dict[str, Any]:
        return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}

    features = core.TextFeatures.from_arrays(part(_FEATURES))
    placement = core.FolderPlacement.from_arrays(part(_PLACEMENT))
    if len(features.terms_) != placement.n_features_in_:
        raise ValueError(
            f"the model has {placement.n_features_in_} terms, its features {len(features.terms_)}"
        )
    model = StoredModel(features, placement, _training(arrays))
    rows = part(_ROWS)
    if rows:
        model.rows.add(*rows_from_arrays(rows, len(features.terms_)))
    return model


def load_training(data: bytes) -> TrainingRecord | None:
    """Only the training record of an archive of :func:`pack_model` (the coefficients are
    not decompressed); ``None`` if it has none, ``ValueError`` for a damaged archive."""
    names = [_TRAINING + name for name in ("ids", "digests", "settings")]
    return _training(core.arrays_from_npz(data, names=names))


def _training(arrays: dict[str, Any]) -> TrainingRecord | None:
    record = {k[len(_TRAINING) :]: v for k, v in arrays.items() if k.startswith(_TRAINING)}
    try:
        return TrainingRecord.from_arrays(record) if record else None
    except (KeyError, TypeError) as error:
        raise ValueError(f"training record: {error}") from error


def folder_id_of(path: tuple[str, ...] | None) -> int | None:
    """The folder id a model's folder path ends in (``ReclusterInput.paths``); ``None`` for
    no path or the root."""
    return int(path[-1]) if path else None


def _model_path(model: StoredModel, folder_id: int) -> tuple[str, ...] | None:
    """The model's path of folder ``folder_id`` (paths end in folder ids), if it has one."""
    return next((p for p in model.placement.folders_ if p and p[-1] == str(folder_id)), None)


def suggest(
    model: StoredModel,
    texts: list[str],
    closer: list[list[tuple[int, int]]] | None = None,
    live_folder_ids: Collection[int] | None = None,
    previous: list[tuple[int, float] | None] | None = None,
    keep_margin: float = core.KEEP_MARGIN,
) -> list[SuggestionOut]:
    """Where ``model`` puts each of ``texts`` (folder paths end in folder ids, as
    ``ReclusterInput.paths``). ``closer[i]``: answers "document i is closer to the documents
    of folder a than to those of folder b" as (a, b) folder ids. With ``live_folder_ids``
    the folders deleted since the fit lose their SVMs first (core ``remove_folders``), so
    that each text gets its best folder that still exists; ``[]`` when none does.
    ``previous[i]``: the folder id a tree shows text i in and the confidence it shows it
    with; the text stays there as the recluster would keep it (``core.suggest_rows``)."""
    if live_folder_ids is not None:
        live = set(live_folder_ids)
        gone = [f for f in model.placement.folders_ if folder_id_of(f) not in live]
        if len(gone) == len(model.placement.folders_):
            return []
        model = replace(model, placement=core.remove_folders(model.placement, gone))

    restrict = None
    if closer is not None:
        restrict = []
        for answers in closer:
            pairs = [(_model_path(model, a), _model_path(model, b)) for a, b in answers]
            restrict.append([(a, b) for a, b in pairs if a is not None and b is not None])

    return [
        SuggestionOut(
            folder_id=folder_id_of(s.folder),
            confidence=round(s.confidence, 4),
            confident_folder_id=folder_id_of(s.confident_folder),
            runner_up_folder_id=folder_id_of(s.runner_up),
            margin=s.margin,
            pair_mass=s.pair_mass,
            terms=list(s.terms),
        )
        for s in core.suggest_rows(
            model.placement,
            model.rows.transform(model.features, texts),
            [str(t) for t in model.features.vocabulary_],
            closer=restrict,
            previous=None
            if previous is None
            else [None if p is None else _model_path(model, p[0]) for p in previous],
            previous_confidence=None
            if previous is None
            else [0.0 if p is None else p[1] for p in previous],
            keep_margin=keep_margin,
        )
    ]
