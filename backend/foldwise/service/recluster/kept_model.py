"""The previous placement model, kept by a recluster whose training did not change
(docs/recluster.md, "Kept placement model").

A recluster fits the service's placement model on the sampled filed documents, the moved
ones weighing more. When new documents are all that arrived since the last version, that
training is the same, and so are the SVMs fitted on it: at 100,000 filed documents in 1,000
folders they were most of a recluster's work. Each version records a key of its training
(:func:`training_key`); the next recluster with the same key reads that version's model
instead of fitting it again (:func:`kept_model`, ``core_adapter._placement_model``). Its own
features then turn only the recluster's dendrogram rows into placement features
(``recluster_input.load_inputs``): the training documents' rows were its fit's.

A few moves or filings change the training, and at that size a fit would again be most of
the recluster while changing nothing it serves. There the model is kept despite them
(:func:`model_despite_changes`), by the record each archive keeps of the training documents
it was fitted from (``stored_model.TrainingRecord``), until the documents changed since the
fit pass a share of the training or of a folder. A folder created since the fit gets its
SVM added to the kept model (core ``add_folders``) instead of a fit of all.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.recluster.settings import ReclusterSettings
from foldwise.service.recluster.stored_model import (
    StoredModel,
    TrainingRecord,
    load_model,
    load_training,
)
from foldwise.service.recluster.tree.models import PlacementModel, TreeVersion

log = logging.getLogger(__name__)

#: Raised whenever what the key covers changes meaning, so that older keys never match.
KEY_VERSION = 2


def training_record(
    options: ReclusterSettings,
    trained: Iterable[tuple[int, tuple[str, ...], bool, str]],
    answered: Iterable[tuple[int, tuple[str, ...]]],
) -> TrainingRecord:
    """The record of what the placement model is fitted from.

    ``trained``: (document id, folder path, moved by the person, text) of each training
    document, in document id order; ``answered``: (document id, folder path) of the
    answers that weigh in as examples. With the settings that shape the fit. The
    unfiled documents are left out: they reach the model only through its latent
    directions, and a kept model places them as the instant suggestions already did.
    """
    ids, digests = [], []
    for doc_id, path, moved, text in trained:
        digest = hashlib.sha256(json.dumps([list(path), moved]).encode())
        digest.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
        ids.append(doc_id)
        digests.append(int.from_bytes(digest.digest()[:8], "little"))
    settings = hashlib.sha256()
    fit = {
        "version": KEY_VERSION,
        "move_weight": options.move_weight,
        "answer_weight": options.answer_weight,
        "min_term_count": options.placement_min_term_count,
        "max_terms": options.placement_max_terms,
    }
    settings.update(json.dumps(fit, sort_keys=True).encode())
    settings.update(json.dumps([[d, list(p)] for d, p in answered]).encode())
    return TrainingRecord(
        np.array(ids, dtype=np.int64), np.array(digests, dtype=np.uint64), settings.hexdigest()
    )


def training_key(record: TrainingRecord) -> str:
    """A digest of the whole training of ``record``: equal keys, equal SVMs."""
    digest = hashlib.sha256(record.settings.encode())
    digest.update(record.ids.tobytes())
    digest.update(record.digests.tobytes())
    return digest.hexdigest()


def newest_model(session: Session, user_id: int) -> tuple[bytes, dict] | None:
    """The archive of the user's newest placement model and its version's stats (None: no
    model yet). One read serves both the kept model and the kept cross-validation: at
    100,000 documents the archive is over 100 MB."""
    newest = session.execute(
        select(PlacementModel.npz, TreeVersion.stats)
        .join(TreeVersion, TreeVersion.id == PlacementModel.version_id)
        .where(PlacementModel.user_id == user_id)
        .order_by(PlacementModel.version_id.desc())
        .limit(1)
    ).first()
    return None if newest is None else (bytes(newest[0]), newest[1] or {})


def kept_model(
    newest: tuple[bytes, dict] | None, key: str, folders: Iterable[tuple[str, ...]]
) -> StoredModel | None:
    """The model of :func:`newest_model` if its version was fitted from training with
    ``key`` and it knows each of ``folders`` (paths the recluster labels rows with), else
    None; also None, logged, for an archive that cannot be read."""
    if newest is None or newest[1].get("placement_key") != key:
        return None
    return _model_knowing(newest[0], folders)


def _model_knowing(data: bytes, folders: Iterable[tuple[str, ...]]) -> StoredModel | None:
    """The model in archive ``data`` if it knows each of ``folders``; None, logged, if not
    or if the archive cannot be read."""
    try:
        model = load_model(data)
    except ValueError:  # damaged: fit anew, and say so
        log.warning("kept placement model cannot be read; fitting anew", exc_info=True)
        return None
    unknown = set(folders) - set(model.placement.folders_)
    if unknown:  # not expected with the same training; fit rather than fail
        log.warning("kept placement model lacks %d folder(s); fitting anew", len(unknown))
        return None
    return model


#: A folder whose training documents changed by more than this share since the fit (e.g.
#: many filed into a small folder) makes a fit anew, whatever the whole training's change.
FOLDER_MAX_CHANGE = 0.2


class KeptDespiteChanges(NamedTuple):
    """What :func:`model_despite_changes` keeps: the model, how many of its training
    documents changed since its fit, the folders it was not fitted on, whose SVMs the
    recluster adds (core ``add_folders``), and the folders it knows that hold no training
    document now (deleted, emptied, or moved under another parent), whose SVMs the
    recluster removes (core ``remove_folders``)."""

    model: StoredModel
    changes: int
    new_folders: frozenset[tuple[str, ...]]
    gone_folders: frozenset[tuple[str, ...]] = frozenset()


def model_despite_changes(
    newest: tuple[bytes, dict] | None,
    record: TrainingRecord,
    folder_of: Mapping[int, tuple[str, ...]],
    options: ReclusterSettings,
) -> KeptDespiteChanges | None:
    """The model of :func:`newest_model`, kept although its training changed a little since
    it was fitted, when a fit is too costly for so little (docs/recluster.md, "Kept
    placement model"). None: fit anew.

    ``record``: this recluster's training; ``folder_of``: the folder path of each of its
    documents. Kept only above ``options.placement_update_min_pairs`` training documents x
    folders (where the SVMs are sampled and a fit takes minutes), with the same settings,
    while the documents added, refiled, edited or removed since the fit are at most
    ``options.placement_update_max_share`` of the training and at most
    :data:`FOLDER_MAX_CHANGE` of any folder the model knows. At that size a refit with a
    few more documents served the same tree (measured in docs/recluster.md), and a
    passive-aggressive step per changed document, as the instant suggestions take, served
    a worse one. A folder created since the fit (all its documents changed) does not end
    the keeping: the recluster adds its SVM; nor does a folder gone since: the recluster
    removes its SVM, so that no document is placed in a folder that is not there.
    """
    n = len(record.ids)
    size = Counter(folder_of.values())
    if newest is None or n * len(size) < options.placement_update_min_pairs:
        return None
    try:
        # The record alone first: the coefficients (over 100 MB at 100,000 documents) are
        # decompressed only for a model that is kept.
        fitted = load_training(newest[0])
    except ValueError:
        log.warning("kept placement model cannot be read; fitting anew", exc_info=True)
        return None
    if fitted is None or fitted.settings != record.settings:
        return None
    changed, removed = record.changed_since(fitted)
    if len(changed) + removed > options.placement_update_max_share * n:
        return None
    into = Counter(folder_of[d] for d in changed)
    over = {f for f, count in into.items() if count > FOLDER_MAX_CHANGE * size[f]}
    if any(into[f] < size[f] for f in over):
        return None  # a folder the model knows changed too much
    model = _model_knowing(newest[0], set(size) - over)
    if model is None or over & set(model.placement.folders_):
        return None  # every document of a known folder replaced: its SVM is stale
    if len(size) < 2:
        return None  # one folder or none left: nothing a kept model tells apart
    gone = frozenset(model.placement.folders_) - set(size)
    return KeptDespiteChanges(model, len(changed) + removed, frozenset(over), gone)
