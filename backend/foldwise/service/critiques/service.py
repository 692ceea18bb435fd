"""Critiques: what the person says about a tree, turned into filings and triples
(docs/architecture.md, "Critiques"). Every one goes through :func:`filing.change`, like the
other changes of where things are; callers commit (the debounced recluster follows)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Protocol

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from foldwise.service.critiques import filing
from foldwise.service.critiques.models import Critique, CritiqueTriple, RejectedGroup
from foldwise.service.critiques.schemas import (
    AcceptCritique,
    CloserCritique,
    CritiqueRead,
    CritiqueUndone,
    MoveCritique,
    NotInCritique,
    RejectCritique,
    RenameCritique,
)
from foldwise.service.db import utcnow
from foldwise.service.documents.models import Document
from foldwise.service.documents.service import get_document
from foldwise.service.errors import ConflictError, InvalidInputError, NotFoundError
from foldwise.service.folders import service as folders
from foldwise.service.folders.models import Folder
from foldwise.service.users.models import User

#: A ``not_in`` critique states (p, q, d) for pairs of at most this many other members (the
#: best-connected part of a big proposal already pins the document outside it).
NOT_IN_MAX_MEMBERS = 30

Body = (
    MoveCritique | AcceptCritique | RenameCritique | RejectCritique | CloserCritique | NotInCritique
)


@dataclass(frozen=True)
class OpenProposal:
    """A proposed folder of the user's newest tree version that no critique has closed."""

    key: str
    parent_folder_id: int | None
    name: str
    #: Every member the version proposed.
    document_ids: list[int]
    #: Those still unfiled and not taken out of it by a ``not_in`` critique.
    members: list[int]
    #: The proposal it is nested in (``None``: it lies in an existing folder or at the top).
    parent_key: str | None = None
    #: The proposals nested in it: accepting it makes them its subfolders.
    parts: tuple[OpenProposal, ...] = ()


class FindProposal(Protocol):
    """Finds the open proposal ``key`` of the user's newest tree version; ``NotFoundError`` for
    an unknown key, ``ConflictError`` for one of an older version or already accepted or
    rejected. Proposals are the recluster's output, above this domain: the app's composition
    root passes ``recluster/tree/proposals.py: open_proposal`` (docs/architecture.md sec. 11)."""

    def __call__(self, *, session: Session, user_id: int, key: str) -> OpenProposal: ...


def _apply(
    session: Session, user: User, body: Body, critique: Critique, find_proposal: FindProposal
) -> list[tuple[int, int, int]]:
    """Carry out ``body`` (filings, folder creation); returns the explicit triples it states."""
    undo: dict[str, Any] = {}
    triples: list[tuple[int, int, int]] = []
    if isinstance(body, MoveCritique):
        document = get_document(session=session, user=user, document_id=body.document_id)
        folders.get_folder(session=session, user=user, folder_id=body.folder_id)
        if document.folder_id == body.folder_id:
            raise ConflictError(
                f"document {body.document_id} is already in folder {body.folder_id}"
            )
        critique.document_id, critique.folder_id = body.document_id, body.folder_id
        undo = {
            "filed": filing.file_documents(session, [document.id], body.folder_id),
            "target": body.folder_id,
        }
    elif isinstance(body, AcceptCritique | RenameCritique | RejectCritique):
        proposal = find_proposal(session=session, user_id=user.id, key=body.proposal_id)
        if proposal.parent_key is not None:
            raise ConflictError(
                f"proposal {body.proposal_id} lies in proposal {proposal.parent_key}: accept "
                f"or reject {proposal.parent_key}, and {body.proposal_id} goes with it"
            )
        members = proposal.members
        critique.proposal_id = body.proposal_id
        parent = proposal.parent_folder_id
        if parent is not None and session.get(Folder, parent) is None:
            parent = None
        if not members:
            raise ConflictError(f"proposal {body.proposal_id} has no unfiled documents left")
        if isinstance(body, RejectCritique):
            critique.folder_id = parent
            session.add(
                RejectedGroup(
                    user_id=user.id,
                    critique_id=critique.id,
                    document_ids=sorted(proposal.document_ids),
                    parent_folder_id=parent,
                )
            )
            # A rejection says "not this group", not "these belong in the parent": filing
            # them there would put a guess into the person's own folders. They stay unfiled;
            # the tree shows each in its best existing folder, and the group is not proposed
            # again (core.same_proposal).
            undo = {"filed": {}, "target": None}
        else:
            name = body.name if isinstance(body, RenameCritique) else proposal.name
            created = folders.create_folder(session=session, user=user, name=name, parent_id=parent)
            critique.name, critique.folder_id = created.name, created.id
            made_subfolders: list[int] = []
            # Each member goes to the folder of the innermost proposal holding it, or all to
            # the one folder where the person accepts it undivided.
            targets = (
                _accept_parts(session, user, proposal, created.id, made_subfolders)
                if body.subfolders
                else {}
            )
            by_folder: dict[int, list[int]] = {}
            for d in members:
                by_folder.setdefault(targets.get(d, created.id), []).append(d)
            filed: dict[str, int | None] = {}
            for folder_id, docs in by_folder.items():
                filed |= filing.file_documents(session, docs, folder_id)
            undo = {"filed": filed, "target": created.id, "created_folder_id": created.id}
            if made_subfolders:
                undo["targets"] = {str(d): f for d, f in targets.items() if str(d) in filed}
                undo["created_folder_ids"] = made_subfolders
    elif isinstance(body, CloserCritique):
        if len({body.a, body.b, body.c}) < 3:
            raise InvalidInputError("a, b and c must be three different documents")
        for doc_id in (body.a, body.b, body.c):
            get_document(session=session, user=user, document_id=doc_id)
        critique.a, critique.b, critique.c = body.a, body.b, body.c
        triples = [(body.a, body.b, body.c)]
    elif isinstance(body, NotInCritique):
        get_document(session=session, user=user, document_id=body.document_id)
        members = find_proposal(session=session, user_id=user.id, key=body.proposal_id).members
        if body.document_id not in members:
            raise InvalidInputError(
                f"document {body.document_id} is not in proposal {body.proposal_id}"
            )
        others = [d for d in members if d != body.document_id][:NOT_IN_MAX_MEMBERS]
        if len(others) < 2:
            raise InvalidInputError(
                f"proposal {body.proposal_id} needs two other members to say that "
                f"document {body.document_id} does not belong with them"
            )
        critique.document_id, critique.proposal_id = body.document_id, body.proposal_id
        triples = [(p, q, body.document_id) for p, q in combinations(others, 2)]
    critique.undo = undo
    return triples


def _accept_parts(
    session: Session, user: User, proposal: OpenProposal, folder_id: int, created: list[int]
) -> dict[int, int]:
    """Make a subfolder of ``folder_id`` for each proposal nested in ``proposal``, and so on
    down; returns the folder each of their members goes to (the innermost), and appends the
    folders made to ``created`` (outer ones first, so an undo deletes inner ones first)."""
    targets: dict[int, int] = {}
    for part in proposal.parts:
        if not part.members:
            continue
        sub = folders.create_folder(session=session, user=user, name=part.name, parent_id=folder_id)
        created.append(sub.id)
        targets |= dict.fromkeys(part.members, sub.id)
        targets |= _accept_parts(session, user, part, sub.id, created)
    return targets


def create_critique(
    *, session: Session, user: User, body: Body, find_proposal: FindProposal
) -> Critique:
    """Store a critique, carry out its filings and add its triples, or change nothing.

    ``find_proposal`` looks up the proposal that accept, rename, reject and not_in name.
    Raises ``NotFoundError`` (unknown ids), ``InvalidInputError`` or ``ConflictError`` (e.g. it
    contradicts the triples in force; the message names them). The caller commits.
    """
    return filing.change(
        session=session,
        user=user,
        kind=body.kind,
        apply=lambda critique: _apply(session, user, body, critique, find_proposal),
    )


def get_critique(*, session: Session, user: User, critique_id: int) -> Critique:
    """The user's critique; ``NotFoundError`` for unknown ids and other users' critiques."""
    critique = session.get(Critique, critique_id)
    if critique is None or critique.user_id != user.id:
        raise NotFoundError(f"critique {critique_id} not found")
    return critique


def undo_critique(*, session: Session, user: User, critique_id: int) -> CritiqueUndone:
    """Undo a history entry: remove its triples, put back what it changed where it can.

    A document (or folder) is put back only if it is still where the entry put it (the person
    may have moved it since: then it stays, and a note says so). Folders the entry made are
    deleted only if they ended up empty and without subfolders; folders it deleted come back
    (with new ids) unless their name is taken there since.
    """
    critique = get_critique(session=session, user=user, critique_id=critique_id)
    if critique.undone_at is not None:
        raise ConflictError(f"critique {critique_id} was already undone")
    notes: list[str] = []
    removed = session.execute(
        delete(CritiqueTriple).where(CritiqueTriple.critique_id == critique.id)
    ).rowcount  # type: ignore[attr-defined]
    session.execute(delete(RejectedGroup).where(RejectedGroup.critique_id == critique.id))
    undo = critique.undo or {}
    remap = filing.restore_folders(session, user, undo.get("deleted_folders") or [], notes)
    if undo.get("moved_folder"):
        filing.revert_folder_move(session, undo["moved_folder"], notes)
    targets = undo.get("targets") or {}
    unfiled = restored = 0
    for doc_id, previous in (undo.get("filed") or {}).items():
        document = session.get(Document, int(doc_id))
        if document is None:
            continue
        if document.folder_id != targets.get(doc_id, undo.get("target")):
            notes.append(f"document {doc_id} was moved since; left where it is")
            continue
        if previous is not None:
            previous = remap.get(previous, previous)
            if session.get(Folder, previous) is None:
                notes.append(f"document {doc_id} stays: its old folder is gone")
                continue
        document.folder_id = previous
        if previous is None:
            unfiled += 1
        else:
            restored += 1
    session.flush()
    created = list(undo.get("created_folder_ids") or [])  # top-down: undone bottom-up
    if undo.get("created_folder_id") is not None:
        created.insert(0, undo["created_folder_id"])
    deleted = [f for f in reversed(created) if filing.delete_if_empty(session, f, notes)]
    critique.undone_at = utcnow()
    filing.after_change(session=session, user_id=user.id)
    return CritiqueUndone(
        id=critique.id,
        triples_removed=removed,
        documents_unfiled=unfiled,
        documents_restored=restored,
        folder_deleted=bool(deleted),
        folders_restored=len(remap),
        notes=notes,
    )


def list_critiques(
    *, session: Session, user: User, include_undone: bool = False, offset: int = 0, limit: int = 50
) -> list[Critique]:
    """The user's critiques, newest first."""
    query = select(Critique).where(Critique.user_id == user.id)
    if not include_undone:
        query = query.where(Critique.undone_at.is_(None))
    return list(session.scalars(query.order_by(Critique.id.desc()).offset(offset).limit(limit)))


def critique_read(*, session: Session, critique: Critique) -> CritiqueRead:
    """The API view of a critique, with its triples and filings."""
    triples = [
        [x, y, z]
        for x, y, z in session.execute(
            select(CritiqueTriple.x, CritiqueTriple.y, CritiqueTriple.z)
            .where(CritiqueTriple.critique_id == critique.id)
            .order_by(CritiqueTriple.id)
        )
    ]
    undo = critique.undo or {}
    read = CritiqueRead.model_validate(critique)
    return read.model_copy(
        update={
            "triples": triples,
            "filed_document_ids": sorted(int(d) for d in (undo.get("filed") or {})),
            "created_folder_id": undo.get("created_folder_id"),
        }
    )
