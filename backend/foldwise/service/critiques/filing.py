"""One operation for every change of where a document or folder is (docs/architecture.md,
"One way to file").

A critique, ``PATCH /api/documents/{id}`` with a ``folder_id``, ``PATCH /api/folders/{id}``
with a ``parent_id``, ``DELETE /api/folders/{id}`` and an import all go through
:func:`change`: it stores a history entry (a :class:`Critique` row, undoable), carries the
change out, checks that the triples in force still hold against the new folders (409 and
nothing written otherwise), counts one more critique (a running recluster's result becomes
stale) and asks for the debounced recluster after the commit. Callers commit.

Undo data (``Critique.undo``), by key:

- ``filed``: {document id: previous folder id or None}; ``target`` the folder they were put
  in, or ``targets`` {document id: folder id} when they went to different folders (import);
- ``created_folder_id`` / ``created_folder_ids``: folders made by the change (top-down);
- ``moved_folder``: {"id", "parent", "target", "name", "new_name"} of a folder move;
- ``deleted_folders``: [{"id", "name", "parent_id"}] top-down, of a folder delete.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.service.critiques import consistency
from foldwise.service.critiques.models import Critique, CritiqueTriple
from foldwise.service.critiques.tree_state import bump_critique_seq, tree_state
from foldwise.service.documents import service as documents
from foldwise.service.documents.models import Document
from foldwise.service.folders import service as folders
from foldwise.service.folders.models import Folder
from foldwise.service.users.models import User

Triple = tuple[int, int, int]

#: ``session.info`` key: users whose filings (critiques, undos, other changes of where things
#: are) the session's transaction changed. The recluster's session hook takes them after the
#: commit (recluster/hooks.py) to re-place their documents and schedule their recluster: the
#: critiques sit below the recluster and do not call it (docs/architecture.md sec. 11).
CHANGED_USERS = "foldwise.critiques.changed_users"


def take_changed_users(session: Session) -> set[int]:
    """The users :func:`after_change` marked in ``session`` since the last take; forgets them."""
    users: set[int] = session.info.pop(CHANGED_USERS, set())
    return users


def triples_in_force(*, session: Session, user_id: int) -> dict[Triple, list[int]]:
    """Explicit triples of critiques in force -> the critiques that stated them."""
    out: dict[Triple, list[int]] = {}
    for x, y, z, cid in session.execute(
        select(CritiqueTriple.x, CritiqueTriple.y, CritiqueTriple.z, CritiqueTriple.critique_id)
        .where(CritiqueTriple.user_id == user_id)
        .order_by(CritiqueTriple.id)
    ):
        out.setdefault((x, y, z), []).append(cid)
    return out


def after_change(*, session: Session, user_id: int, new: list[Triple] | None = None) -> None:
    """Check consistency, count a critique and mark the user for a recluster after the commit
    (:data:`CHANGED_USERS`).

    Shared by :func:`change` and undo: ``ConflictError`` (409) if the triples in force plus
    ``new`` contradict the folders as they are now in ``session``.
    """
    session.flush()
    consistency.check(
        session=session,
        user_id=user_id,
        sources=triples_in_force(session=session, user_id=user_id),
        new=new or [],
    )
    bump_critique_seq(session=session, user_id=user_id)
    session.info.setdefault(CHANGED_USERS, set()).add(user_id)


def change(
    *, session: Session, user: User, kind: str, apply: Callable[[Critique], list[Triple]]
) -> Critique:
    """Record a change of kind ``kind`` in the history and carry it out with ``apply``.

    ``apply(critique)`` validates, changes folders / filings, fills the critique's fields
    (including ``undo``) and returns the explicit triples it states. Raises what ``apply``
    raises, or ``ConflictError`` when the result contradicts the triples in force; the caller
    then rolls back and nothing is written.
    """
    state = tree_state(session=session, user_id=user.id)
    critique = Critique(
        user_id=user.id, author=user.name, kind=kind, tree_version=state.version, undo={}
    )
    session.add(critique)
    session.flush()  # its id: rejected groups and triples point at it
    triples = apply(critique)
    after_change(session=session, user_id=user.id, new=triples)
    for x, y, z in triples:
        session.add(CritiqueTriple(critique_id=critique.id, user_id=user.id, x=x, y=y, z=z))
    session.flush()
    return critique


def file_documents(
    session: Session, docs: list[int], folder_id: int | None
) -> dict[str, int | None]:
    """File ``docs`` in ``folder_id``; returns {document id: previous folder} for undo."""
    previous: dict[str, int | None] = {}
    for doc_id in docs:
        document = session.get(Document, doc_id)
        if document is None:
            continue
        previous[str(doc_id)] = document.folder_id
        document.folder_id = folder_id
    session.flush()
    return previous


def move_document(
    *, session: Session, user: User, document: Document, folder_id: int | None
) -> Critique | None:
    """File ``document`` in ``folder_id`` (``None``: unfile); ``None`` if it is there already."""
    if document.folder_id == folder_id:
        return None
    if folder_id is not None:
        folders.get_folder(session=session, user=user, folder_id=folder_id)

    def apply(critique: Critique) -> list[Triple]:
        critique.document_id, critique.folder_id = document.id, folder_id
        critique.undo = {
            "filed": file_documents(session, [document.id], folder_id),
            "target": folder_id,
        }
        return []

    return change(session=session, user=user, kind="move", apply=apply)


def move_folder(
    *, session: Session, user: User, folder_id: int, parent_id: int | None, name: str | None
) -> Folder:
    """Move a folder under ``parent_id`` (``None``: top level), renaming it if ``name``.

    Without a real move (same parent) it is a plain rename, kept out of the history.
    """
    folder = folders.get_folder(session=session, user=user, folder_id=folder_id)
    if folder.parent_id == parent_id:
        return folders.update_folder(session=session, user=user, folder_id=folder_id, name=name)
    old = {"parent": folder.parent_id, "name": folder.name}

    def apply(critique: Critique) -> list[Triple]:
        moved = folders.update_folder(
            session=session, user=user, folder_id=folder_id, name=name, move=True,
            parent_id=parent_id,
        )  # fmt: skip
        critique.folder_id, critique.name = moved.id, moved.name
        critique.undo = {
            "moved_folder": {
                "id": moved.id,
                "parent": old["parent"],
                "target": parent_id,
                "name": old["name"],
                "new_name": moved.name,
            }
        }
        return []

    change(session=session, user=user, kind="folder_move", apply=apply)
    return folder


def delete_folder(
    *, session: Session, user: User, folder_id: int, recursive: bool
) -> tuple[int, int]:
    """Delete a folder (its documents become unfiled); returns (folders, documents unfiled)."""
    folder = folders.get_folder(session=session, user=user, folder_id=folder_id)
    result: list[int] = []

    def apply(critique: Critique) -> list[Triple]:
        ids = folders.subtree_ids(session=session, user=user, root_id=folder.id)
        rows = session.execute(
            select(Folder.id, Folder.name, Folder.parent_id).where(Folder.id.in_(ids))
        ).all()
        by_id = {r.id: {"id": r.id, "name": r.name, "parent_id": r.parent_id} for r in rows}
        filed = dict(
            session.execute(
                select(Document.id, Document.folder_id).where(
                    Document.user_id == user.id, Document.folder_id.in_(ids)
                )
            ).all()
        )
        result.extend(
            folders.delete_folder(
                session=session,
                user=user,
                folder_id=folder_id,
                recursive=recursive,
                unfile=lambda ids: documents.unfile_folders(
                    session=session, user=user, folder_ids=ids
                ),
            )
        )
        critique.folder_id, critique.name = folder_id, by_id[folder_id]["name"]
        critique.undo = {
            "filed": {str(d): f for d, f in sorted(filed.items())},
            "target": None,
            "deleted_folders": [by_id[f] for f in ids],  # subtree_ids: parents first
        }
        return []

    change(session=session, user=user, kind="folder_delete", apply=apply)
    return result[0], result[1]


# ------------------------------------------------------------------------------------ undo


def delete_if_empty(session: Session, folder_id: int, notes: list[str]) -> bool:
    """Delete a folder a change created, unless it holds documents or folders added since."""
    folder = session.get(Folder, folder_id)
    if folder is None:
        return False
    docs = session.scalar(
        select(func.count()).select_from(Document).where(Document.folder_id == folder_id)
    )
    subs = session.scalar(
        select(func.count()).select_from(Folder).where(Folder.parent_id == folder_id)
    )
    if docs or subs:
        notes.append(f"folder {folder_id} is kept: it holds documents or folders added since")
        return False
    session.delete(folder)
    session.flush()
    return True


def restore_folders(
    session: Session, user: User, deleted: list[dict[str, Any]], notes: list[str]
) -> dict[int, int]:
    """Recreate deleted folders (top-down) with new ids; returns {old id: new id}.

    A folder whose parent could not come back, or whose name is taken there since, stays
    deleted (a note says so) and so does its subtree.
    """
    remap: dict[int, int] = {}
    for entry in deleted:
        parent = entry["parent_id"]
        if parent is not None and parent in {e["id"] for e in deleted}:
            if parent not in remap:
                continue  # its parent stayed deleted
            parent = remap[parent]
        elif parent is not None and session.get(Folder, parent) is None:
            notes.append(f"folder {entry['name']!r} not restored: its parent is gone")
            continue
        if folders.find_child(session=session, user=user, parent_id=parent, name=entry["name"]):
            notes.append(f"folder {entry['name']!r} not restored: the name is taken there now")
            continue
        made = Folder(user_id=user.id, name=entry["name"], parent_id=parent)
        session.add(made)
        session.flush()
        remap[entry["id"]] = made.id
    return remap


def revert_folder_move(session: Session, moved: dict[str, Any], notes: list[str]) -> None:
    """Put a moved folder back under its old parent (and name) if still where it was put."""
    folder = session.get(Folder, moved["id"])
    if folder is None:
        notes.append(f"folder {moved['id']} was deleted since")
        return
    if folder.parent_id != moved["target"]:
        notes.append(f"folder {moved['id']} was moved since; left where it is")
        return
    parent = moved["parent"]
    old_parent = None if parent is None else session.get(Folder, parent)
    if parent is not None and old_parent is None:
        notes.append(f"folder {moved['id']} stays: its old parent is gone")
        return
    if old_parent is not None and any(
        f.id == folder.id for f in folders.ancestors(session=session, folder=old_parent)
    ):
        notes.append(f"folder {moved['id']} stays: its old parent is inside it now")
        return
    name = moved["name"] if folder.name == moved["new_name"] else folder.name
    clash = session.scalar(
        select(Folder.id).where(
            Folder.user_id == folder.user_id,
            Folder.parent_id.is_(None) if parent is None else Folder.parent_id == parent,
            Folder.name == name,
            Folder.id != folder.id,
        )
    )
    if clash is not None:
        notes.append(f"folder {moved['id']} stays: the name {name!r} is taken there now")
        return
    folder.parent_id, folder.name = parent, name
    session.flush()
