"""Documents: extracted text plus the original file, stored once per content hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow


class Document(Base):
    """One document of one user; ``folder_id`` ``None`` means unfiled."""

    __tablename__ = "documents"
    __table_args__ = (
        # The same content is stored once per user; a second upload is reported as duplicate.
        UniqueConstraint("user_id", "content_hash", name="uq_documents_user_id_content_hash"),
        Index("ix_documents_user_id_folder_id", "user_id", "folder_id"),
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
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
