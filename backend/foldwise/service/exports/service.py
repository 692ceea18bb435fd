"""What an export holds: the user's folders as directories and each document's original
file under its title (docs/api.md, "Export").

A name that a file system or a later import would refuse or hide is made safe (``/`` and
control characters become ``_``, a leading ``.`` becomes ``_``), the original suffix is kept so
that the file can be imported again, and names that clash in one directory (compared without
case, as macOS and Windows do) get `` (2)``, `` (3)``, ... Importing an export into an empty
account gives the same folders, with the same files in them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from sqlalchemy import select, true
from sqlalchemy.orm import Session

from foldwise.service.documents.models import Document
from foldwise.service.documents.service import blob_store, safe_filename
from foldwise.service.errors import ConflictError
from foldwise.service.folders import service as folders
from foldwise.service.users.models import User


@dataclass(frozen=True)
class ExportEntry:
    """A directory (``blob_path`` ``None``) or a file of the export, by its relative path."""

    path: str
    blob_path: str | None = None


_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def _file_name(document: Document) -> str:
    suffix = PurePosixPath(document.filename).suffix
    name = _UNSAFE.sub("_", document.title).strip()[:255] or PurePosixPath(document.filename).stem
    if name.startswith("."):
        name = "_" + name[1:]
    if suffix and not name.lower().endswith(suffix.lower()):
        name = name[: 255 - len(suffix)] + suffix
    return name or safe_filename(document.filename, "document.txt")


def _unique(name: str, taken: set[str]) -> str:
    stem, suffix = os.path.splitext(name)
    candidate, number = name, 1
    while candidate.lower() in taken:
        number += 1
        candidate = f"{stem} ({number}){suffix}"
    taken.add(candidate.lower())
    return candidate


def export_plan(*, session: Session, user: User, folder_id: int | None = None) -> list[ExportEntry]:
    """The directories and files of the user's tree, or of one folder's subtree (named by
    that folder at the top). Unfiled documents sit at the top of a whole-tree export."""
    paths = folders.folder_paths(session=session, user=user)
    if folder_id is None:
        scope = set(paths)
        prefix = ""
    else:
        root = folders.get_folder(session=session, user=user, folder_id=folder_id)
        scope = set(folders.subtree_ids(session=session, user=user, root_id=root.id))
        parent_path = paths[root.id].rpartition("/")[0]
        prefix = parent_path + "/" if parent_path else ""
    relative = {fid: paths[fid][len(prefix) :] for fid in scope}
    taken: dict[str, set[str]] = {"": set()}
    entries = []
    for fid in sorted(scope, key=lambda f: relative[f]):
        entries.append(ExportEntry(path=relative[fid] + "/"))
        parent, _, name = relative[fid].rpartition("/")
        taken.setdefault(parent, set()).add(name.lower())
        taken.setdefault(relative[fid], set())
    where = Document.folder_id.in_(scope) if folder_id is not None else true()
    documents = session.scalars(
        select(Document)
        .where(Document.user_id == user.id, where)
        # Oldest first: a document keeps its plain name however many arrive after it.
        .order_by(Document.folder_id, Document.id)
    )
    for document in documents:
        if document.folder_id is not None and document.folder_id not in scope:
            continue
        directory = relative[document.folder_id] if document.folder_id is not None else ""
        name = _unique(_file_name(document), taken[directory])
        path = f"{directory}/{name}" if directory else name
        entries.append(ExportEntry(path=path, blob_path=document.blob_path))
    return entries


def write_zip(*, session: Session, entries: list[ExportEntry], out: BinaryIO) -> int:
    """Write ``entries`` as a zip to ``out``; returns how many files it holds."""
    store = blob_store(session)
    files = 0
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in entries:
            if entry.blob_path is None:
                archive.writestr(zipfile.ZipInfo(entry.path), b"")
            else:
                archive.write(store.path(entry.blob_path), entry.path)
                files += 1
    return files


def write_directory(*, session: Session, entries: list[ExportEntry], target: Path) -> int:
    """Write ``entries`` under ``target`` (which must not exist or be empty); all or nothing:
    the tree is written beside it and renamed into place. Returns how many files."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConflictError(f"{target} exists and is not an empty directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    store = blob_store(session)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.export-"))
    files = 0
    try:
        for entry in entries:
            destination = staging / entry.path
            if entry.blob_path is None:
                destination.mkdir(parents=True, exist_ok=True)
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(store.path(entry.blob_path), destination)
                files += 1
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files


def iter_file(handle: BinaryIO, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """Read ``handle`` from the start in chunks, then close it (a streamed answer)."""
    try:
        handle.seek(0)
        while chunk := handle.read(chunk_bytes):
            yield chunk
    finally:
        handle.close()
