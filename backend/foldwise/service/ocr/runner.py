"""The OCR task's work: read a scan page by page, report progress, store its text.

A document is never lost and never left without a state a person can read: it is claimed
(``ocr_pending`` -> ``ocr_running``), its pages are read one by one (``ocr_pages_done``),
and it ends ``ocr_done`` with its text, ``no_text_ocr_missing`` when Tesseract is not
installed, or ``ocr_failed`` with the reason in ``text_note`` (docs/ocr.md). Text that
arrives makes the recluster hook schedule a recluster, which places the document.
"""

from __future__ import annotations

import logging

from sqlalchemy import update

from foldwise.core._language import MIN_CONFIDENCE, detect
from foldwise.service.documents import language, sandbox
from foldwise.service.documents.models import (
    OCR_DONE,
    OCR_FAILED,
    OCR_MISSING,
    OCR_PENDING,
    OCR_RUNNING,
    Document,
)
from foldwise.service.documents.service import blob_store
from foldwise.service.errors import InvalidInputError
from foldwise.service.ocr import engine
from foldwise.service.recluster.jobs.runtime import Runtime

log = logging.getLogger(__name__)

NOT_INSTALLED = "no text: OCR not installed"


def _claim(rt: Runtime, document_id: int) -> tuple[bytes, str, str, int] | None:
    """Mark the document ``ocr_running`` if it waits for OCR; its bytes, name, type, pages."""
    with rt.sessions() as session:
        result = session.execute(
            update(Document)
            .where(Document.id == document_id, Document.text_status == OCR_PENDING)
            .values(text_status=OCR_RUNNING, ocr_pages_done=0, text_note=None)
        )
        claimed = getattr(result, "rowcount", 0) == 1
        session.commit()
        document = session.get(Document, document_id) if claimed else None
        if document is None:  # done, deleted, or claimed by another worker
            return None
        data = blob_store(session).path(document.blob_path).read_bytes()
        return data, document.filename, document.media_type, document.ocr_pages_total


def _finish(rt: Runtime, document_id: int, status: str, note: str, text: str = "") -> None:
    # Through the ORM, not an UPDATE statement: the recluster hook sees the text arrive.
    with rt.sessions() as session:
        document = session.get(Document, document_id)
        if document is None:
            return
        document.text_status = status
        document.text_note = note[:500]
        if text:
            document.text = text
            document.language_posteriors = language.posteriors_of(text)
        session.commit()


def _progress(rt: Runtime, document_id: int, pages_done: int) -> None:
    with rt.sessions() as session:
        session.execute(
            update(Document).where(Document.id == document_id).values(ocr_pages_done=pages_done)
        )
        session.commit()


def read_document(rt: Runtime, document_id: int) -> None:
    """OCR document ``document_id`` if it waits for OCR (a no-op otherwise)."""
    claimed = _claim(rt, document_id)
    if claimed is None:
        return
    data, filename, media_type, pages = claimed
    cfg = rt.settings
    try:
        tesseract = engine.find_tesseract(cfg.tesseract_cmd, cfg.ocr_languages)
        if tesseract is None:
            _finish(rt, document_id, OCR_MISSING, NOT_INSTALLED)
            return
        budget = sandbox.Budget(cfg.ocr_page_cpu_seconds, cfg.ocr_page_memory_bytes)
        texts = []
        for page in range(pages):
            args = (data, filename, media_type, page)
            timeout = 2 * cfg.ocr_page_cpu_seconds
            text = sandbox.run_limited(engine.read_page, *args, tesseract, timeout, budget=budget)
            # A page in a language other than the first configured one is read again with
            # its own first (the second pass only for such pages).
            language, confidence = detect(text)
            better = tesseract.first(language) if confidence >= MIN_CONFIDENCE else None
            if better is not None:
                text = sandbox.run_limited(engine.read_page, *args, better, timeout, budget=budget)
            texts.append(text)
            _progress(rt, document_id, page + 1)
    except InvalidInputError as exc:  # over its budget, or the child could not read it
        _finish(rt, document_id, OCR_FAILED, f"OCR failed: {exc.message}")
        return
    except Exception as exc:
        log.exception("OCR of document %s failed", document_id)
        _finish(rt, document_id, OCR_FAILED, f"OCR failed: {type(exc).__name__}: {exc}")
        return
    text = "\n\n".join(t.strip() for t in texts).replace("\x00", "").strip()
    text = text[: cfg.max_text_chars]
    if not text:
        _finish(rt, document_id, OCR_DONE, f"OCR ({tesseract.languages}) found no text")
        return
    note = f"OCR ({tesseract.languages}), {pages} page{'s' if pages != 1 else ''}"
    _finish(rt, document_id, OCR_DONE, note, text)
