"""Documents: extracted text plus the original file, stored once per content hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow

#: ``text_status`` values (docs/api.md, "Scanned documents"). Only "extracted" and
#: "ocr_done" documents have text to cluster and place.
EXTRACTED = "extracted"
OCR_PENDING = "ocr_pending"
OCR_RUNNING = "ocr_running"
OCR_DONE = "ocr_done"
OCR_MISSING = "no_text_ocr_missing"
OCR_FAILED = "ocr_failed"
TEXT_STATUSES = (EXTRACTED, OCR_PENDING, OCR_RUNNING, OCR_DONE, OCR_MISSING, OCR_FAILED)
WITHOUT_TEXT = (OCR_PENDING, OCR_RUNNING, OCR_MISSING, OCR_FAILED)


class Document(Base):
    """One document of one user; ``folder_id`` ``None`` means unfiled."""

    __tablename__ = "documents"
    __table_args__ = (
        # The same content is stored once per user; a second upload is reported as duplicate.
        UniqueConstraint("user_id", "content_hash", name="uq_documents_user_id_content_hash"),
        Index("ix_documents_user_id_folder_id", "user_id", "folder_id"),
        # The worker finds the scans still to read at start-up (ocr/tasks.py).
        Index("ix_documents_text_status", "text_status"),
        # An id is never handed out twice (SQLite would reuse the newest after a delete):
        # ids live outside foreign keys too, in tree versions' JSON (migration 0013).
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    folder_id: Mapped[int | None] = mapped_column(
        # Deleting a folder never deletes documents: they become unfiled.
        ForeignKey("folders.id", ondelete="SET NULL"),
        default=None,
    )
    title: Mapped[str] = mapped_column(String(500))
    text: Mapped[str] = mapped_column(Text)
    #: SHA-256 hex of the original bytes; also the blob's name in the blob store.
    content_hash: Mapped[str] = mapped_column(String(64))
    filename: Mapped[str] = mapped_column(String(255))
    media_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(Integer)
    #: Path of the original file relative to the blob directory.
    blob_path: Mapped[str] = mapped_column(String(200))
    #: Where the text came from or why there is none (:data:`TEXT_STATUSES`).
    text_status: Mapped[str] = mapped_column(
        String(24), default=EXTRACTED, server_default=EXTRACTED
    )
    #: The text's language posteriors (``core.language_posteriors``: float32, in the order of
    #: ``core.LANGUAGE_CODES``), detected once when the text arrives, so that no recluster
    #: detects them again (docs/recluster.md, "Languages detected at ingest"); ``None``
    #: before that was stored, or without text.
    language_posteriors: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    #: For a person: why there is no text ("no text: OCR not installed"), or what OCR did.
    text_note: Mapped[str | None] = mapped_column(String(500), default=None)
    #: OCR progress: pages read so far of the pages to read.
    ocr_pages_done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    ocr_pages_total: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
