"""The OCR task, and the resumption of scans at worker start-up. Registered on a runtime by
the composition root (``service/tasks.py: register``)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select, update

from foldwise.service.documents.models import OCR_PENDING, OCR_RUNNING, Document
from foldwise.service.ocr import runner
from foldwise.service.recluster.jobs.runtime import Runtime

log = logging.getLogger(__name__)

TASK = "foldwise.ocr.read"


def register(rt: Runtime) -> None:
    """Register the OCR task and its start-up resumption on ``rt.queue`` (once per runtime)."""
    if TASK in rt.tasks:
        return

    @rt.queue.task(name=TASK)
    def read(document_id: int) -> None:
        """OCR one document (takes the id; opens and closes its own sessions)."""
        runner.read_document(rt, document_id)

    @rt.queue.on_startup(name="foldwise.ocr.resume")
    def resume() -> None:
        # A worker that died mid-scan (or a queue that lost its tasks) leaves documents
        # pending or running: read them again. A second task for one document finds it
        # claimed or done and returns.
        with rt.sessions() as session:
            session.execute(
                update(Document)
                .where(Document.text_status == OCR_RUNNING)
                .values(text_status=OCR_PENDING)
            )
            waiting = list(
                session.scalars(select(Document.id).where(Document.text_status == OCR_PENDING))
            )
            session.commit()
        for document_id in waiting:
            read(document_id)

    rt.tasks[TASK] = read


def enqueue(rt: Runtime, document_id: int) -> Any:
    """Put the OCR of ``document_id`` on the runtime's queue."""
    return rt.tasks[TASK](document_id)
