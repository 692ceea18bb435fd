"""Request and response bodies of critiques, triples and questions (see docs/recluster.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from foldwise.service.inputs import MAX_ROW_ID

_ID = Field(gt=0, le=MAX_ROW_ID)
_PROPOSAL = Field(pattern=r"^p-\d+-\d+$", max_length=40)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MoveCritique(_Body):
    """File or move ``document_id`` into existing folder ``folder_id``."""

    kind: Literal["move"]
    document_id: int = _ID
    folder_id: int = _ID


class AcceptCritique(_Body):
    """Accept proposal ``proposal_id``: it becomes a real folder with its documents filed.

    ``subfolders``: the proposals nested in it become its subfolders, each document filed in
    the innermost (default); false: one folder holds all its documents, no subfolder made
    (the person does not want it divided)."""

    kind: Literal["accept"]
    proposal_id: str = _PROPOSAL
    subfolders: bool = True


class RenameCritique(_Body):
    """Accept proposal ``proposal_id`` under the name ``name`` (``subfolders`` as in accept)."""

    kind: Literal["rename"]
    proposal_id: str = _PROPOSAL
    name: str = Field(min_length=1, max_length=255)
    subfolders: bool = True


class RejectCritique(_Body):
    """Reject proposal ``proposal_id``: it is not proposed again; its documents stay unfiled
    and are placed in existing folders."""

    kind: Literal["reject"]
    proposal_id: str = _PROPOSAL


class CloserCritique(_Body):
    """Document ``a`` is closer to ``b`` than to ``c``: the triple (a, b, c)."""

    kind: Literal["closer"]
    a: int = _ID
    b: int = _ID
    c: int = _ID


class NotInCritique(_Body):
    """Document ``document_id`` does not belong in proposal ``proposal_id``."""

    kind: Literal["not_in"]
    document_id: int = _ID
    proposal_id: str = _PROPOSAL


CritiqueCreate = Annotated[
    MoveCritique
    | AcceptCritique
    | RenameCritique
    | RejectCritique
    | CloserCritique
    | NotInCritique,
    Field(discriminator="kind"),
]


class CritiqueRead(BaseModel):
    """A stored critique and what it did."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    kind: str
    author: str
    tree_version: int
    created_at: datetime
    undone_at: datetime | None
    document_id: int | None
    folder_id: int | None
    proposal_id: str | None
    name: str | None
    a: int | None
    b: int | None
    c: int | None
    #: Explicit triples it added, as [x, y, z] document ids.
    triples: list[list[int]] = Field(default_factory=list)
    #: Documents it filed, and the folder it created (accept / rename).
    filed_document_ids: list[int] = Field(default_factory=list)
    created_folder_id: int | None = None


class CritiqueUndone(BaseModel):
    """What ``DELETE /api/critiques/{id}`` reverted."""

    id: int
    triples_removed: int
    documents_unfiled: int
    documents_restored: int
    #: A folder the change made was deleted (it was empty).
    folder_deleted: bool
    #: Folders a ``folder_delete`` removed that came back (with new ids).
    folders_restored: int = 0
    notes: list[str]


class TripleRead(BaseModel):
    """A triple in force: x is closer to y than to z (document ids)."""

    x: int
    y: int
    z: int
    #: ``critique`` (stated by a critique) or ``inferred`` (001 Theorems 1-3 on stated ones).
    source: Literal["critique", "inferred"]
    critique_ids: list[int]


class FolderConstraintRead(BaseModel):
    """The implicit triples of one folder: every labeled member is closer to the others than
    to any document outside (never materialised, docs/architecture.md sec. 3)."""

    folder_id: int
    labeled_documents: int
    #: Documents filed there by critiques (move / accept / reject), with the critique id.
    from_critiques: dict[int, int]


class TriplesRead(BaseModel):
    """``GET /api/triples``."""

    triples: list[TripleRead]
    folders: list[FolderConstraintRead]


class DocumentRef(BaseModel):
    """A document named in a question."""

    id: int
    title: str
    folder_id: int | None


class CloserQuestion(BaseModel):
    """``GET /api/questions/closer``: is ``a`` closer to ``b`` or to ``c``?

    Answer with ``POST /api/critiques {"kind": "closer", "a": a, "b": <closer>, "c": <other>}``.
    """

    a: DocumentRef
    b: DocumentRef
    c: DocumentRef
    tree_version: int
    #: Why this question: the two candidate folders and their similarity margin.
    reason: str
