"""Critiques, the explicit triples they state, rejected document groups, and the per-user
tree state they are counted in."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow


class Critique(Base):
    """One thing the person said about a tree, with who, when and on which tree version.

    Document and folder ids are plain integers (no foreign keys): a critique is a record of
    what was said, and it outlives the things it names. ``undo`` keeps what undo needs to
    revert the critique's filing actions.
    """

    __tablename__ = "critiques"
    __table_args__ = (Index("ix_critiques_user_id_undone_at", "user_id", "undone_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    #: The author's user name at the time (the person behind ``user_id``).
    author: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    tree_version: Mapped[int] = mapped_column(Integer, default=0)
    document_id: Mapped[int | None] = mapped_column(Integer, default=None)
    folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    proposal_id: Mapped[str | None] = mapped_column(String(40), default=None)
    name: Mapped[str | None] = mapped_column(String(255), default=None)
    a: Mapped[int | None] = mapped_column(Integer, default=None)
    b: Mapped[int | None] = mapped_column(Integer, default=None)
    c: Mapped[int | None] = mapped_column(Integer, default=None)
    #: What undo needs: previous folders of filed documents, a folder the critique created.
    undo: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    undone_at: Mapped[datetime | None] = mapped_column(default=None)


class CritiqueTriple(Base):
    """An explicit MLB triple (x closer to y than to z) over document ids, from a critique."""

    __tablename__ = "critique_triples"
    __table_args__ = (Index("ix_critique_triples_user_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    critique_id: Mapped[int] = mapped_column(
        ForeignKey("critiques.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # A deleted document takes its triples with it: nothing can be said about it any more.
    x: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    y: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    z: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))


class RejectedGroup(Base):
    """The documents of a rejected proposal: a later tree does not propose them together again."""

    __tablename__ = "rejected_groups"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    critique_id: Mapped[int] = mapped_column(ForeignKey("critiques.id", ondelete="CASCADE"))
    document_ids: Mapped[list[int]] = mapped_column(JSON)
    parent_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TreeState(Base):
    """One row per user: the newest tree version and a counter of critiques.

    Critiques are made on a tree version and counted here (``critiques/tree_state.py``); the
    recluster, which reads critiques, sets the version. It lives with the critiques because
    both domains write it and the critiques sit below the recluster (docs/architecture.md
    sec. 11). A job commits its tree only if both still hold the values it started from (a
    compare-and-set ``UPDATE``), so a result computed before a critique never replaces a tree
    that should reflect it; the same ``UPDATE`` serialises concurrent commits on every DB.
    """

    __tablename__ = "tree_states"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[int] = mapped_column(Integer, default=0)
    #: Bumped by every critique and every undo.
    critique_seq: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
