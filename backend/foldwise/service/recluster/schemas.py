"""Request and response bodies of jobs and the extended tree (shapes in docs/recluster.md)."""

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


class ExtendedFolder(BaseModel):
    """A folder of the extended tree.

    ``kind == "existing"``: one of the person's folders (integer ``id``), never renamed, moved or
    emptied by the algorithm. ``kind == "proposed"``: a folder the recluster suggests (string
    ``id`` ``"p-<version>-<n>"``); ``parent_id`` is an existing folder id, another proposal's id,
    or ``null`` for the top level.
    """

    kind: Literal["existing", "proposed"]
    id: int | str
    name: str
    parent_id: int | str | None
    document_count: int
    top_terms: list[str] = Field(default_factory=list)
    document_ids: list[int] = Field(default_factory=list)
    cohesion: float | None = None


class Placement(BaseModel):
    """Where the tree puts an unfiled document: ``folder_id`` is an existing folder's integer id,
    a proposal's string id, or ``null`` (top level: nothing fits)."""

    document_id: int
    title: str
    folder_id: int | str | None
    confidence: float = Field(ge=0, le=1)
    terms: list[str]
    #: The most probable existing folder (= ``folder_id`` unless the document is in a proposal).
    best_folder_id: int | None = None
    #: Confident depth: the deepest existing folder whose subtree holds most of the document's
    #: probability (003 level assignment); ``null`` = not even sure of a top-level folder.
    confident_folder_id: int | None = None
    #: ``"recluster"``: from the served tree version. ``"instant"``: from the user's last
    #: fitted model, computed when the document arrived (or after a critique) without a
    #: recluster; always an existing folder, never a proposal (docs/recluster.md).
    source: Literal["recluster", "instant"] = "recluster"


class ExtendedTree(BaseModel):
    """``GET /api/tree/extended``: the newest tree version over the current folders."""

    version: int
    method: str | None
    created_at: datetime | None
    critique_seq: int
    #: True when critiques were made after this version was computed (a recluster is due).
    outdated: bool
    folders: list[ExtendedFolder]
    placements: list[Placement]
    unplaced_document_ids: list[int] = Field(
        default_factory=list,
        description=(
            "unfiled documents that arrived after this version and have no instant "
            "suggestion (placed by the next one)"
        ),
    )
