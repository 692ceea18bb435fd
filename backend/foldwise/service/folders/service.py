"""The folder hierarchy: create, rename, move (no cycles), delete, paths. The tree with its
documents is a documents view (``documents/folder_views.py``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.db import settings_of
from foldwise.service.errors import ConflictError, InvalidInputError, NotFoundError
from foldwise.service.folders.models import Folder
from foldwise.service.folders.schemas import FOLDER_NAME_MAX
from foldwise.service.users.models import User


def clean_name(name: str) -> str:
    """The trimmed name, or ``InvalidInputError`` for '/', control characters, '.' or '..'."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > FOLDER_NAME_MAX:
        raise InvalidInputError(f"folder name must be 1-{FOLDER_NAME_MAX} characters")
    if "/" in cleaned or "\\" in cleaned or cleaned in (".", ".."):
        raise InvalidInputError(
            f"folder name {name!r} may not contain '/' or '\\' or be '.' or '..'"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in cleaned):
        raise InvalidInputError("folder name may not contain control characters")
    return cleaned


def get_folder(*, session: Session, user: User, folder_id: int) -> Folder:
    """The user's folder; ``NotFoundError`` for unknown ids and other users' folders."""
    folder = session.get(Folder, folder_id)
    if folder is None or folder.user_id != user.id:
        raise NotFoundError(f"folder {folder_id} not found")
    return folder


def find_child(*, session: Session, user: User, parent_id: int | None, name: str) -> Folder | None:
    """The folder called ``name`` directly under ``parent_id`` (``None``: top level)."""
    parent = Folder.parent_id.is_(None) if parent_id is None else Folder.parent_id == parent_id
    return session.scalar(
        select(Folder).where(Folder.user_id == user.id, parent, Folder.name == name)
    )


def ancestors(*, session: Session, folder: Folder) -> list[Folder]:
    """``folder`` and its ancestors, from the top down."""
    chain = [folder]
    while chain[-1].parent_id is not None:
        parent = session.get(Folder, chain[-1].parent_id)
        if parent is None:  # pragma: no cover - the FK makes this impossible
            break
        chain.append(parent)
    return chain[::-1]


def folder_path(*, session: Session, folder: Folder) -> str:
    """The folder's path from the top, names joined by '/' (e.g. ``"library/text/re"``)."""
    return "/".join(f.name for f in ancestors(session=session, folder=folder))


def list_folders(*, session: Session, user: User) -> list[Folder]:
    """Every folder of the user."""
    return list(session.scalars(select(Folder).where(Folder.user_id == user.id)))


def folder_paths(*, session: Session, user: User) -> dict[int, str]:
    """Path of every folder of the user, by id, in one query."""
    rows = session.execute(
        select(Folder.id, Folder.name, Folder.parent_id).where(Folder.user_id == user.id)
    ).all()
    by_id = {r.id: (r.name, r.parent_id) for r in rows}
    paths: dict[int, str] = {}

    def path(fid: int) -> str:
        if fid not in paths:
            name, parent = by_id[fid]
            paths[fid] = name if parent is None else f"{path(parent)}/{name}"
        return paths[fid]

    for fid in by_id:
        path(fid)
    return paths


def _check_depth(*, session: Session, parent: Folder | None, subtree_height: int = 1) -> None:
    depth = 0 if parent is None else len(ancestors(session=session, folder=parent))
    limit = settings_of(session).max_folder_depth
    if depth + subtree_height > limit:
        raise InvalidInputError(f"folders may be nested at most {limit} deep")


def create_folder(
    *, session: Session, user: User, name: str, parent_id: int | None = None
) -> Folder:
    """Create a folder under ``parent_id``; ``ConflictError`` if a sibling has the name."""
    name = clean_name(name)
    parent = (
        None if parent_id is None else get_folder(session=session, user=user, folder_id=parent_id)
    )
    _check_depth(session=session, parent=parent)
    if find_child(session=session, user=user, parent_id=parent_id, name=name) is not None:
        raise ConflictError(f"a folder named {name!r} already exists there")
    folder = Folder(user_id=user.id, name=name, parent_id=parent_id)
    session.add(folder)
    session.flush()
    return folder


def _children_of(*, session: Session, user: User) -> dict[int | None, list[int]]:
    """The caller's folder tree as parent id -> child ids, in one query."""
    rows = session.execute(
        select(Folder.id, Folder.parent_id).where(Folder.user_id == user.id)
    ).all()
    children: dict[int | None, list[int]] = defaultdict(list)
    for fid, parent in rows:
        children[parent].append(fid)
    return children


def subtree_ids(*, session: Session, user: User, root_id: int) -> list[int]:
    """``root_id`` and the folders under it, every parent before its children."""
    children = _children_of(session=session, user=user)
    out, stack = [], [root_id]
    while stack:
        fid = stack.pop()
        out.append(fid)
        stack.extend(children[fid])
    return out


def _subtree_height(*, session: Session, user: User, folder: Folder) -> int:
    children = _children_of(session=session, user=user)

    def height(fid: int) -> int:
        return 1 + max((height(c) for c in children[fid]), default=0)

    return height(folder.id)


def update_folder(
    *,
    session: Session,
    user: User,
    folder_id: int,
    name: str | None = None,
    move: bool = False,
    parent_id: int | None = None,
) -> Folder:
    """Rename (``name``) and/or move (``move=True`` to ``parent_id``, ``None`` = top level).

    A folder cannot move into itself or one of its descendants (``ConflictError``).
    """
    folder = get_folder(session=session, user=user, folder_id=folder_id)
    new_name = folder.name if name is None else clean_name(name)
    new_parent_id = parent_id if move else folder.parent_id
    if move and parent_id is not None:
        parent = get_folder(session=session, user=user, folder_id=parent_id)
        if any(f.id == folder.id for f in ancestors(session=session, folder=parent)):
            raise ConflictError(f"cannot move folder {folder.id} into itself or its own subfolder")
        height = _subtree_height(session=session, user=user, folder=folder)
        _check_depth(session=session, parent=parent, subtree_height=height)
    if (new_name, new_parent_id) != (folder.name, folder.parent_id):
        clash = find_child(session=session, user=user, parent_id=new_parent_id, name=new_name)
        if clash is not None and clash.id != folder.id:
            raise ConflictError(f"a folder named {new_name!r} already exists there")
    folder.name, folder.parent_id = new_name, new_parent_id
    session.flush()
    return folder


def delete_folder(
    *,
    session: Session,
    user: User,
    folder_id: int,
    recursive: bool = False,
    unfile: Callable[[list[int]], int],
) -> tuple[int, int]:
    """Delete a folder. Documents are never deleted: they become unfiled.

    Without ``recursive`` a folder that holds subfolders is refused (``ConflictError``); with it,
    the whole subtree goes. ``unfile(folder_ids)`` unfiles the documents of the folders about
    to go and returns how many (``documents.service.unfile_folders``; the documents domain
    sits above this one, docs/architecture.md sec. 11). Returns (folders deleted, documents
    unfiled).
    """
    folder = get_folder(session=session, user=user, folder_id=folder_id)
    ids = subtree_ids(session=session, user=user, root_id=folder.id)
    if len(ids) > 1 and not recursive:
        raise ConflictError(
            f"folder {folder_id} has {len(ids) - 1} subfolder(s); "
            "delete with recursive=true to delete them too (their documents become unfiled)"
        )
    unfiled = unfile(ids)
    for fid in reversed(ids):  # children before parents
        session.delete(session.get(Folder, fid))
        session.flush()
    return len(ids), unfiled
