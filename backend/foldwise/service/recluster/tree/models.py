"""Tree versions with their proposals and placements, their placement models and the instant
suggestions made with them. The per-user tree state (version and critique counter) is
``critiques.models.TreeState``; jobs are ``jobs/models.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow


class TreeVersion(Base):
    """One recluster result: the dendrogram over the documents it saw, and its extended tree."""

    __tablename__ = "tree_versions"
    __table_args__ = (UniqueConstraint("user_id", "number", name="uq_tree_versions_user_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(32))
    job_id: Mapped[int | None] = mapped_column(
        ForeignKey("recluster_jobs.id", ondelete="SET NULL"), default=None
    )
    #: The critique counter the tree was computed with.
    critique_seq: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: Document id of each dendrogram leaf, in leaf-index order.
    doc_ids: Mapped[list[int]] = mapped_column(JSON)
    #: The scipy linkage matrix (n - 1 rows of [a, b, distance, size]).
    linkage: Mapped[list[list[float]]] = mapped_column(JSON)
    #: Method facts worth keeping: runs, cluster errors, exemplar counts.
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class TreeProposal(Base):
    """A proposed folder of a tree version.

    ``key`` is its id ``p-<version>-<n>``, from the version that first proposed it: a later
    version whose proposal has mostly the same members carries the key and the name over
    (``jobs/store.py: carry_over``), so one key has a row per version.
    """

    __tablename__ = "tree_proposals"
    __table_args__ = (
        UniqueConstraint("version_id", "key", name="uq_tree_proposals_version_key"),
        Index("ix_tree_proposals_user_key", "user_id", "key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("tree_versions.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(40))
    #: Existing folder the proposal (or the outermost proposal it is nested in) lies in;
    #: ``None`` = top level.
    parent_folder_id: Mapped[int | None] = mapped_column(
        ForeignKey("folders.id", ondelete="SET NULL"), default=None
    )
    #: Key of the proposal of the same version this one is nested in; ``None``: not nested.
    parent_key: Mapped[str | None] = mapped_column(String(40), default=None)
    name: Mapped[str] = mapped_column(String(255))
    top_terms: Mapped[list[str]] = mapped_column(JSON)
    #: Every member, those of the proposals nested in it too.
    document_ids: Mapped[list[int]] = mapped_column(JSON)
    cohesion: Mapped[float] = mapped_column(Float, default=0.0)


class TreePlacement(Base):
    """Where a tree version puts one unfiled document."""

    __tablename__ = "tree_placements"

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("tree_versions.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    #: An existing folder, or ``None`` with ``proposal_key`` set, or both ``None`` = top level.
    folder_id: Mapped[int | None] = mapped_column(
        ForeignKey("folders.id", ondelete="SET NULL"), default=None
    )
    proposal_key: Mapped[str | None] = mapped_column(String(40), default=None)
    confidence: Mapped[float] = mapped_column(Float)
    terms: Mapped[list[str]] = mapped_column(JSON)
    #: The two most probable existing folders and the gap between them (the "which is
    #: closer?" questions ask about the smallest gaps).
    best_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    #: The deepest folder the model is confident of (level assignment); ``None`` = top level.
    confident_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    runner_up_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    margin: Mapped[float | None] = mapped_column(Float, default=None)
    #: Posterior of the best plus the runner-up folder (before calibration).
    pair_mass: Mapped[float | None] = mapped_column(Float, default=None)
    #: The "is it closer to b or to c?" question worth asking (core ``closer_questions``):
    #: c's folder (b's is ``best_folder_id``), the expected number of placements the answer
    #: changes, and the probability that the person has an answer.
    question_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    question_value: Mapped[float | None] = mapped_column(Float, default=None)
    question_answerable: Mapped[float | None] = mapped_column(Float, default=None)
    #: Set where the document stays in ``folder_id`` only because the model is less sure of
    #: its most probable folder than an earlier tree was of this one: that earlier
    #: confidence, which the next recluster compares with instead of ``confidence`` (core
    #: ``DocumentPlacement.kept_confidence``; docs/placement.md, "Placements that stay").
    kept_confidence: Mapped[float | None] = mapped_column(Float, default=None)


class PlacementModel(Base):
    """A tree version's fitted placement model and its features, for instant suggestions.

    Stored as the bytes of an ``.npz`` of plain numeric arrays (``core.FolderPlacement`` and
    ``core.TextFeatures`` ``to_arrays``), read with ``allow_pickle=False``: whoever can
    write this column cannot make a worker run code (docs/recluster.md). Only the newest
    ``instant.KEEP_MODELS`` of a user are kept.
    """

    __tablename__ = "placement_models"

    version_id: Mapped[int] = mapped_column(
        ForeignKey("tree_versions.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    npz: Mapped[bytes] = mapped_column(LargeBinary)


class DocumentSuggestion(Base):
    """Where the user's last fitted model puts an unfiled document, computed at ingest (or
    after a critique) without a recluster: served by ``/api/tree/extended`` as
    ``"source": "instant"`` until a tree version places the document."""

    __tablename__ = "document_suggestions"

    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    #: The tree version whose model made the suggestion.
    version_id: Mapped[int] = mapped_column(ForeignKey("tree_versions.id", ondelete="CASCADE"))
    #: The user's critique counter when it was made: newer than a version's, it wins.
    critique_seq: Mapped[int] = mapped_column(Integer, default=0)
    #: The most probable existing folder (a deleted folder: no suggestion is served).
    folder_id: Mapped[int | None] = mapped_column(
        ForeignKey("folders.id", ondelete="SET NULL"), default=None
    )
    confidence: Mapped[float] = mapped_column(Float)
    terms: Mapped[list[str]] = mapped_column(JSON)
    confident_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    runner_up_folder_id: Mapped[int | None] = mapped_column(Integer, default=None)
    margin: Mapped[float | None] = mapped_column(Float, default=None)
    pair_mass: Mapped[float | None] = mapped_column(Float, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
