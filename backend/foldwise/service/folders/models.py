"""Folders: the user's hierarchy."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow


class Folder(Base):
    """A folder; ``parent_id`` ``None`` means top level.

    Sibling names are unique per user and parent; the service enforces it because SQL
    unique constraints treat the ``NULL`` parent of top-level folders as all distinct.
    """

    __tablename__ = "folders"
    # An id is never handed out twice (SQLite would reuse the newest after a delete):
    # placements name their best and question folders without a foreign key (migration 0013).
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("folders.id", ondelete="CASCADE"), index=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
