"""Recluster jobs: one row per request, with its state, progress, attempts and timings."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Update, update
from sqlalchemy.orm import Mapped, mapped_column

from foldwise.service.db import Base, utcnow

FINAL_STATES = frozenset({"done", "failed", "stale"})


class ReclusterJob(Base):
    """A recluster request and everything known about its execution."""

    __tablename__ = "recluster_jobs"
    __table_args__ = (Index("ix_recluster_jobs_user_id_state", "user_id", "state"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(16), default="queued")
    #: ``request`` (POST /api/recluster) or ``auto`` (new documents / critiques, debounced).
    trigger: Mapped[str] = mapped_column(String(16), default="request")
    method: Mapped[str] = mapped_column(String(32))
    #: Debounce: an automatic job does not start before this time (pushed by new arrivals).
    not_before: Mapped[datetime | None] = mapped_column(default=None)
    # Progress.
    phase: Mapped[str] = mapped_column(String(32), default="queued")
    run: Mapped[int] = mapped_column(Integer, default=0)
    r_max: Mapped[int] = mapped_column(Integer, default=0)
    merges_done: Mapped[int] = mapped_column(Integer, default=0)
    merges_total: Mapped[int] = mapped_column(Integer, default=0)
    n_documents: Mapped[int] = mapped_column(Integer, default=0)
    # What the (latest attempt of the) job started from and produced.
    base_version: Mapped[int | None] = mapped_column(Integer, default=None)
    base_critique_seq: Mapped[int | None] = mapped_column(Integer, default=None)
    result_version: Mapped[int | None] = mapped_column(Integer, default=None)
    # Robustness: attempts after dead workers, reruns after stale results.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    reruns: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(200), default=None)
    heartbeat_at: Mapped[datetime | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    # Timings.
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    #: Seconds per phase of the latest attempt, e.g. ``{"load": 0.4, "cluster": 3.1}``.
    timings: Mapped[dict[str, float]] = mapped_column(JSON, default=dict)


def update_owned_attempt(job_id: int, attempt: int) -> Update:
    """``UPDATE recluster_jobs`` of job ``job_id`` while attempt ``attempt`` still runs it.

    Every write of a running attempt goes through this guard: once the reaper requeued or
    failed the job, ``attempts`` no longer matches and the write changes no row
    (``rowcount == 0``), so a lost attempt can neither report progress nor commit."""
    return update(ReclusterJob).where(
        ReclusterJob.id == job_id,
        ReclusterJob.state == "running",
        ReclusterJob.attempts == attempt,
    )
