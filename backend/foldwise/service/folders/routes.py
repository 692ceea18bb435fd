"""Folder endpoints: list, create, read one. Moving and deleting a folder are filing changes
(``critiques/filing_routes.py``); the tree and a folder's documents show documents
(``documents/folder_routes.py``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from foldwise.service.db import SessionDep
from foldwise.service.folders import service
from foldwise.service.folders.models import Folder
from foldwise.service.folders.schemas import FolderCreate, FolderRead
from foldwise.service.inputs import RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api/folders", tags=["folders"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown folder (or another user's)"},
    409: {"description": "name taken, cycle, or folder not empty"},
    422: {"description": "invalid name or too deep"},
}


def folder_read(session: SessionDep, folder: Folder) -> FolderRead:
    """The API view of ``folder``, with its path."""
    return FolderRead(
        id=folder.id,
        name=folder.name,
        parent_id=folder.parent_id,
        path=service.folder_path(session=session, folder=folder),
        created_at=folder.created_at,
        updated_at=folder.updated_at,
    )


@router.get("", response_model=list[FolderRead])
def list_folders(user: CurrentUser, session: SessionDep) -> list[FolderRead]:
    """Every folder of the caller, flat, by path."""
    paths = service.folder_paths(session=session, user=user)
    rows = service.list_folders(session=session, user=user)
    out = [
        FolderRead(
            id=f.id,
            name=f.name,
            parent_id=f.parent_id,
            path=paths[f.id],
            created_at=f.created_at,
            updated_at=f.updated_at,
        )
        for f in rows
    ]
    return sorted(out, key=lambda f: f.path)


@router.post("", response_model=FolderRead, status_code=status.HTTP_201_CREATED, responses=_ERRORS)
def create_folder(body: FolderCreate, user: CurrentUser, session: SessionDep) -> FolderRead:
    """Create a folder (top level without ``parent_id``)."""
    folder = service.create_folder(
        session=session, user=user, name=body.name, parent_id=body.parent_id
    )
    session.commit()
    return folder_read(session, folder)


@router.get("/{folder_id}", response_model=FolderRead, responses={404: _ERRORS[404]})
def get_folder(folder_id: RowId, user: CurrentUser, session: SessionDep) -> FolderRead:
    """One folder with its path."""
    return folder_read(session, service.get_folder(session=session, user=user, folder_id=folder_id))
