"""One filing operation: every change of where documents or folders are.

A move through ``PATCH /api/documents/{id}``, a folder moved or deleted, and the critiques
themselves all change where the person's documents are, so they all go through the same
steps (docs/recluster.md, "Filing changes"):

1. the change is made in the session;
2. the triples in force are checked against the new hierarchy (409 naming the contradiction,
   and the caller's rollback leaves nothing changed);
3. a critique row records it for the history, with what undo needs;
4. the critique counter is bumped: a running recluster's result is stale, and the commit
   schedules the debounced automatic recluster (``recluster.hooks``).

A move to a folder is exactly a ``move`` critique (``critiques.service.create_critique``).
An import is not a filing change: it adds documents and folders but moves no document that
was there, so no triple in force can contradict it; the next recluster learns from it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.critiques import consistency
from foldwise.service.critiques.models import Critique
from foldwise.service.critiques.schemas import MoveCritique
from foldwise.service.critiques.service import create_critique, triples_in_force
from foldwise.service.documents.models import Document
from foldwise.service.documents.service import get_document
from foldwise.service.folders import service as folders
from foldwise.service.recluster.service import bump_critique_seq, tree_state
from foldwise.service.users.models import User


def record(
    *,
    session: Session,
    user: User,
    kind: str,
    undo: dict[str, Any],
    document_id: int | None = None,
    folder_id: int | None = None,
    name: str | None = None,
) -> Critique:
    """Steps 2-4 for a change already made in ``session``; returns its history row."""
    session.flush()
    consistency.check(
        session=session,
        user_id=user.id,
        sources=triples_in_force(session=session, user_id=user.id),
        new=[],
    )
    critique = Critique(
        user_id=user.id,
        author=user.name,
        kind=kind,
        tree_version=tree_state(session=session, user_id=user.id).version,
        document_id=document_id,
        folder_id=folder_id,
        name=name,
        undo=undo,
    )
    session.add(critique)
    bump_critique_seq(session=session, user_id=user.id)
    session.flush()
    return critique


def file_document(
    *, session: Session, user: User, document_id: int, folder_id: int | None
) -> Critique | None:
    """File ``document_id`` in ``folder_id`` (``None``: take it out of its folder).

    Filing in a folder is a ``move`` critique; unfiling is recorded as ``unfile``. Nothing
    happens (and ``None`` is returned) when the document is already there.
    """
    document = get_document(session=session, user=user, document_id=document_id)
    if document.folder_id == folder_id:
        return None
    if folder_id is not None:
        return create_critique(
            session=session,
            user=user,
            body=MoveCritique(kind="move", document_id=document_id, folder_id=folder_id),
        )
    previous = document.folder_id
    document.folder_id = None
    return record(
        session=session,
        user=user,
        kind="unfile",
        undo={"filed": {str(document_id): previous}, "target": None},
        document_id=document_id,
    )


def move_folder(
    *,
    session: Session,
    user: User,
    folder_id: int,
    name: str | None,
    move: bool,
    parent_id: int | None,
) -> tuple[Any, Critique | None]:
    """Rename and/or move a folder; a move (which changes every path below it) is a filing
    change, recorded as ``move_folder`` (undo puts it back under its old parent)."""
    before = folders.get_folder(session=session, user=user, folder_id=folder_id).parent_id
    folder = folders.update_folder(
        session=session, user=user, folder_id=folder_id, name=name, move=move, parent_id=parent_id
    )
    if folder.parent_id == before:
        return folder, None
    critique = record(
        session=session,
        user=user,
        kind="move_folder",
        undo={"folder": folder.id, "parent": before, "target": folder.parent_id},
        folder_id=folder.id,
    )
    return folder, critique


def delete_folder(
    *, session: Session, user: User, folder_id: int, recursive: bool
) -> tuple[int, int]:
    """Delete a folder (its documents become unfiled), recorded as ``delete_folder``.

    Not undoable: the folder is gone; the history keeps which documents it unfiled.
    """
    ids = folders.subtree_ids(session=session, user=user, folder_id=folder_id)
    filed = {
        str(d): f
        for d, f in session.execute(
            select(Document.id, Document.folder_id).where(
                Document.user_id == user.id, Document.folder_id.in_(ids)
            )
        )
    }
    deleted, unfiled = folders.delete_folder(
        session=session, user=user, folder_id=folder_id, recursive=recursive
    )
    record(
        session=session,
        user=user,
        kind="delete_folder",
        undo={"unfiled": filed, "undoable": False},
        folder_id=folder_id,
    )
    return deleted, unfiled
