"""The previous placement model, kept by a recluster whose training did not change
(docs/recluster.md, "Kept placement model").

A recluster fits the service's placement model on the sampled filed documents, the moved
ones weighing more. When new documents are all that arrived since the last version, that
training is the same, and so are the SVMs fitted on it: at 100,000 filed documents in 1,000
folders they were most of a recluster's work. Each version records a key of its training
(:func:`training_key`); the next recluster with the same key reads that version's model
instead of fitting it again (:func:`kept_model`, ``core_adapter._placement_model``). Its own
features then turn only the recluster's dendrogram rows into placement features
(``core_adapter.load_inputs``): the training documents' rows were its fit's.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.recluster.settings import ReclusterSettings
from foldwise.service.recluster.stored_model import StoredModel, load_model
from foldwise.service.recluster.tree.models import PlacementModel, TreeVersion

log = logging.getLogger(__name__)

#: Raised whenever what the key covers changes meaning, so that older keys never match.
KEY_VERSION = 1


def training_key(
    options: ReclusterSettings,
    trained: Iterable[tuple[int, tuple[str, ...], bool, str]],
    answered: Iterable[tuple[int, tuple[str, ...]]],
) -> str:
    """A digest of what the placement model is fitted from.

    ``trained``: (document id, folder path, moved by the person, text) of each training
    document, in document id order; ``answered``: (document id, folder path) of the
    answers that weigh in as examples. With the settings that shape the fit. The
    unfiled documents are left out: they reach the model only through its latent
    directions, and a kept model places them as the instant suggestions already did.
    """
    digest = hashlib.sha256()
    settings = {
        "version": KEY_VERSION,
        "move_weight": options.move_weight,
        "answer_weight": options.answer_weight,
        "min_term_count": options.placement_min_term_count,
        "max_terms": options.placement_max_terms,
    }
    digest.update(json.dumps(settings, sort_keys=True).encode())
    for doc_id, path, moved, text in trained:
        digest.update(json.dumps([doc_id, list(path), moved]).encode())
        digest.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    digest.update(json.dumps([[d, list(p)] for d, p in answered]).encode())
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
    try:
        model = load_model(newest[0])
    except ValueError:  # damaged: fit anew, and say so
        log.warning("kept placement model cannot be read; fitting anew", exc_info=True)
        return None
    unknown = set(folders) - set(model.placement.folders_)
    if unknown:  # not expected with the same training; fit rather than fail
        log.warning("kept placement model lacks %d folder(s); fitting anew", len(unknown))
        return None
    return model
