"""New scans are OCRed: after a commit that stored documents waiting for OCR, their tasks are
queued. Like the recluster hook, it watches the sessions of a runtime (installed by the
composition root), so that every ingestion path (upload, batch, import, inbox, CLI) is
covered, and acts only after the commit, so that the worker finds the documents. A failure
to enqueue is logged; the document stays ``ocr_pending`` and the next worker start-up reads
it (ocr/tasks.py)."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from sqlalchemy.orm import Session

from foldwise.service.db import listen_on_sessions
from foldwise.service.documents.models import OCR_PENDING, Document
from foldwise.service.ocr import tasks
from foldwise.service.recluster.jobs.runtime import Runtime

log = logging.getLogger(__name__)

_KEY = "foldwise.ocr.documents"


def _after_flush(session: Session, _context: Any) -> None:
    waiting = {
        obj.id
        for obj in session.new
        if isinstance(obj, Document) and obj.text_status == OCR_PENDING
    }
    if waiting:
        session.info.setdefault(_KEY, set()).update(waiting)


def _after_commit(rt: Runtime, session: Session) -> None:
    waiting = session.info.pop(_KEY, None)
    if not waiting:
        return
    try:
        for document_id in sorted(waiting):
            tasks.enqueue(rt, document_id)
    except Exception:
        log.exception("could not queue the OCR of documents %s", sorted(waiting))


def _after_rollback(session: Session) -> None:
    session.info.pop(_KEY, None)


def install(rt: Runtime) -> None:
    """Listen on the sessions of ``rt`` (the composition root calls it once per runtime)."""
    listen_on_sessions(
        rt.sessions,
        {
            "after_flush": _after_flush,
            "after_commit": partial(_after_commit, rt),
            "after_rollback": _after_rollback,
        },
    )
