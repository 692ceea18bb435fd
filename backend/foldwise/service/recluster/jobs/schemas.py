"""Request and response bodies of recluster jobs (shapes in docs/recluster.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

JobState = Literal["queued", "running", "done", "failed", "stale"]


class ReclusterRequest(BaseModel):
    """``POST /api/recluster``; an empty body uses the configured method."""

    model_config = ConfigDict(extra="forbid")

    method: str | None = Field(default=None, description="biihac, bihac, ihac, hac, divisive, ggm")


class JobProgress(BaseModel):
    """Where a job is: its phase, biHAC run i of r_max, iHAC merges done of total."""

    phase: str
    run: int
    r_max: int
    merges_done: int
    merges_total: int


class JobRead(BaseModel):
    """A recluster job as stored."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    state: JobState
    trigger: str
    method: str
    progress: JobProgress
    n_documents: int
    base_version: int | None
    base_critique_seq: int | None
    result_version: int | None
    attempts: int
    reruns: int
    #: ``host:pid:thread`` of the worker of the latest attempt.
    worker: str | None
    error: str | None
    created_at: datetime
    not_before: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    timings: dict[str, float]


class JobPage(BaseModel):
    """The caller's jobs, newest first."""

    items: list[JobRead]
    total: int
