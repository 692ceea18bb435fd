"""Response bodies of the extended tree and its versions (shapes in docs/recluster.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class ExtendedFolder(BaseModel):
    """A folder of the extended tree.

    ``kind == "existing"``: one of the person's folders (integer ``id``), never renamed, moved or
    emptied by the algorithm. ``kind == "proposed"``: a folder the recluster suggests (string
    ``id`` ``"p-<version>-<n>"``); ``parent_id`` is an existing folder id, another proposal's id,
    or ``null`` for the top level. A proposal's ``document_ids`` (and ``document_count``) are
    all its members, those of the proposals nested in it too: what accepting it files.
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


class TreeVersionRead(BaseModel):
    """A stored tree version (without its dendrogram)."""

    number: int
    method: str
    job_id: int | None
    critique_seq: int
    created_at: str
    n_documents: int
    stats: dict[str, object]
