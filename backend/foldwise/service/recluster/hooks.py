"""Automatic reclusters: new unfiled documents, text that OCR read for an unfiled scan, and
filing changes schedule one, debounced. The same new documents get an instant suggestion
from the user's last fitted model right after the commit (``instant.py``).

The hook watches the sessions of a runtime (the composition root installs it on the
runtime's session factory) rather than being called from each ingestion path (JSON post,
upload, batch, import, inbox, CLI, OCR), so no path can forget it; it acts only after the
commit, so a rolled-back upload schedules nothing and the worker always finds the documents
it is told about. It opens no database session: it puts a ``schedule_auto`` task on the
queue (``Runtime.request_auto``), which the worker runs and retries. A failure to enqueue is
logged, never raised: ingestion must not fail because of a recluster."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.orm import Session, SessionTransaction

from foldwise.service.critiques import filing
from foldwise.service.critiques.models import Critique
from foldwise.service.db import listen_on_sessions, settings_of
from foldwise.service.documents.models import WITHOUT_TEXT, Document
from foldwise.service.recluster import instant
from foldwise.service.recluster.jobs.runtime import Runtime

log = logging.getLogger(__name__)

_KEY = "foldwise.recluster.users"
#: user id -> {document id: text} of unfiled documents with text, for instant suggestions.
_NEW = "foldwise.recluster.new_documents"
#: (new documents as in _NEW, critiqued user ids) committed, to place after the transaction.
_PLACE = "foldwise.recluster.to_place"
#: user id -> whether the user has a placement model, as this transaction found it.
_HAS_MODEL = "foldwise.recluster.has_model"


def _after_flush(session: Session, _context: Any) -> None:
    # New unfiled documents with text (a scan waits for its OCR), unfiled scans whose text
    # arrived, and critiques made or undone (every filing change is one: critiques.filing).
    users = (
        {
            obj.user_id
            for obj in session.new
            if (
                isinstance(obj, Document)
                and obj.folder_id is None
                and obj.text_status not in WITHOUT_TEXT
            )
            or isinstance(obj, Critique)
        }
        | {obj.user_id for obj in session.dirty if isinstance(obj, Critique)}
        | {obj.user_id for obj in session.dirty if _text_arrived(obj)}
    )
    if users:
        session.info.setdefault(_KEY, set()).update(users)
    new = [
        obj
        for obj in (*session.new, *session.dirty)
        if isinstance(obj, Document)
        and obj.folder_id is None
        and obj.text_status not in WITHOUT_TEXT
        and (obj in session.new or _text_arrived(obj))
    ]
    if not new:
        return
    # Whether each user has a model to suggest with, once per transaction: without one,
    # nothing waits for a second transaction after the commit. The answer comes with the
    # user the request authenticated (instant.users_with_models). A model stored between
    # this check and the commit is missed; the recluster that the same commit schedules
    # places the document.
    has_model = session.info.setdefault(_HAS_MODEL, {})
    unknown = {doc.user_id for doc in new} - has_model.keys()
    if unknown:
        found = instant.users_with_models(session, unknown)
        has_model.update({user_id: user_id in found for user_id in unknown})
    for doc in new:
        if has_model[doc.user_id]:
            session.info.setdefault(_NEW, {}).setdefault(doc.user_id, {})[doc.id] = doc.text or ""


def _text_arrived(obj: object) -> bool:
    """An unfiled document whose text status just became one with text (OCR done)."""
    if not isinstance(obj, Document) or obj.folder_id is not None:
        return False
    history = inspect(obj).attrs.text_status.history
    return bool(history.added) and obj.text_status not in WITHOUT_TEXT


def _after_commit(rt: Runtime, session: Session) -> None:
    # Users whose critiques (moves, answers, undos, other filing changes) committed: their
    # documents are re-placed and their recluster scheduled (critiques/filing.py marks them).
    critiqued = filing.take_changed_users(session)
    new = session.info.pop(_NEW, None)
    if new or critiqued:
        # Placed once the transaction has ended and its connection is back in the pool
        # (_after_transaction_end): a request never holds two connections at once.
        session.info[_PLACE] = (new or {}, critiqued)
    users = session.info.pop(_KEY, set()) | critiqued
    if not users:
        return
    try:
        for user_id in sorted(users):
            rt.request_auto(user_id)
    except Exception:
        log.exception("could not schedule an automatic recluster for users %s", sorted(users))


def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is not None:
        return  # a savepoint or an inner transaction: the commit is not final yet
    session.info.pop(_HAS_MODEL, None)
    new, critiqued = session.info.pop(_PLACE, ({}, set()))
    if new:
        # In the ingest request, before it answers: the document has its suggestion when
        # the client sees it (docs/recluster.md, "Instant suggestions").
        try:
            instant.suggest_pending(session.get_bind(), settings_of(session), new)  # type: ignore[arg-type]
        except Exception:
            log.exception("instant suggestions for users %s failed", sorted(new))
    if critiqued:
        # In the critique's request too: the person sees its effect when the UI reloads
        # the tree after the answer, seconds before the debounced recluster.
        try:
            instant.replace_pending(session.get_bind(), settings_of(session), critiqued)  # type: ignore[arg-type]
        except Exception:
            log.exception("re-placement after critiques of users %s failed", sorted(critiqued))


def _after_rollback(session: Session) -> None:
    session.info.pop(_KEY, None)
    session.info.pop(_NEW, None)
    filing.take_changed_users(session)


def install(rt: Runtime) -> None:
    """Listen on the sessions of ``rt`` (the composition root calls it once per runtime)."""
    listen_on_sessions(
        rt.sessions,
        {
            "after_flush": _after_flush,
            "after_commit": partial(_after_commit, rt),
            "after_transaction_end": _after_transaction_end,
            "after_rollback": _after_rollback,
        },
    )
