"""Turn a folder tree (zip or directory) into the user's filed hierarchy, all or nothing."""

from __future__ import annotations

from sqlalchemy.orm import Session

from foldwise.service.critiques import filing
from foldwise.service.critiques.models import Critique
from foldwise.service.db import settings_of
from foldwise.service.documents import service as documents
from foldwise.service.errors import InvalidInputError, ServiceError
from foldwise.service.folders import service as folders
from foldwise.service.imports.archive import Listing, as_posix
from foldwise.service.imports.schemas import ImportReport
from foldwise.service.users.models import User


def import_listing(
    *, session: Session, user: User, listing: Listing, parent_id: int | None = None
) -> ImportReport:
    """Create the listing's folders under ``parent_id`` and file its documents in them.

    Folders that exist already (same name, same parent) are reused, so importing twice adds
    nothing new. Files directly in the archive's root go into ``parent_id`` (unfiled when
    ``None``). Every document is extracted before anything is written. The import is one
    ``import`` entry in the history (undo unfiles what it filed and removes the folders it made
    that are still empty); the caller commits.
    """
    cfg = settings_of(session)
    parent = (
        None
        if parent_id is None
        else folders.get_folder(session=session, user=user, folder_id=parent_id)
    )
    base_depth = 0 if parent is None else len(folders.ancestors(session=session, folder=parent))
    prepared = []
    for entry in listing.entries:
        where = as_posix((*entry.folders, entry.filename))
        if base_depth + len(entry.folders) > cfg.max_folder_depth:
            raise InvalidInputError(
                f"{where}: folders may be nested at most {cfg.max_folder_depth} deep"
            )
        try:
            for name in entry.folders:
                folders.clean_name(name)
            doc = documents.prepare(session=session, data=entry.data, filename=entry.filename)
        except ServiceError as exc:
            exc.message = f"{where}: {exc.message}"
            raise
        prepared.append((entry.folders, doc))
    for path in listing.folders:
        where = as_posix(path)
        if base_depth + len(path) > cfg.max_folder_depth:
            raise InvalidInputError(
                f"{where}: folders may be nested at most {cfg.max_folder_depth} deep"
            )
        try:
            for name in path:
                folders.clean_name(name)
        except ServiceError as exc:
            exc.message = f"{where}: {exc.message}"
            raise

    counts: dict[str, int] = {}

    def apply(critique: Critique) -> list[tuple[int, int, int]]:
        paths = [*listing.folders, *(p for p, _ in prepared)]
        ids, made, reused = _make_folders(session, user, parent_id, paths)
        results = documents.store_many(
            session=session, user=user, items=[(doc, ids[path]) for path, doc in prepared]
        )
        # Only documents this import stored (not duplicates) are its filings.
        filed = {
            str(doc.id): ids[path]
            for (path, _), (doc, duplicate) in zip(prepared, results, strict=True)
            if not duplicate and ids[path] is not None
        }
        critique.folder_id = parent_id
        critique.undo = {
            "filed": dict.fromkeys(filed),
            "targets": filed,
            "created_folder_ids": made,
        }
        counts.update(
            created=len(made),
            reused=reused,
            duplicates=sum(1 for _, duplicate in results if duplicate),
            stored=sum(1 for _, duplicate in results if not duplicate),
        )
        return []

    filing.change(session=session, user=user, kind="import", apply=apply)
    return ImportReport(
        folders_created=counts["created"],
        folders_reused=counts["reused"],
        documents_created=counts["stored"],
        duplicates=counts["duplicates"],
        skipped=listing.skipped,
    )


def _make_folders(
    session: Session, user: User, parent_id: int | None, paths: list[tuple[str, ...]]
) -> tuple[dict[tuple[str, ...], int | None], list[int], int]:
    """Find or create the folders of ``paths`` under ``parent_id``.

    Returns ({path: folder id}, ids of folders created (parents first), folders reused).
    """
    ids: dict[tuple[str, ...], int | None] = {(): parent_id}
    made: list[int] = []
    reused = 0
    for path in paths:
        for depth in range(1, len(path) + 1):
            key = path[:depth]
            if key in ids:
                continue
            name = folders.clean_name(key[-1])
            parent = ids[key[:-1]]
            found = folders.find_child(session=session, user=user, parent_id=parent, name=name)
            if found is None:
                found = folders.create_folder(
                    session=session, user=user, name=name, parent_id=parent
                )
                made.append(found.id)
            else:
                reused += 1
            ids[key] = found.id
    return ids, made, reused
