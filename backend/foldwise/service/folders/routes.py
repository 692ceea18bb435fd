"""Folder endpoints: the tree, create, rename/move, delete, and a folder's documents."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, status

from foldwise.service.config import SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.documents import service as documents
from foldwise.service.documents.schemas import DocumentPage
from foldwise.service.folders import service
from foldwise.service.folders.models import Folder
from foldwise.service.folders.schemas import (
    FolderCreate,
    FolderRead,
    Tree,
)
from foldwise.service.inputs import Offset, RowId
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


@router.get("/tree", response_model=Tree)
def get_tree(user: CurrentUser, session: SessionDep, include_documents: bool = False) -> Response:
    """The caller's whole hierarchy, with document counts (and documents on request)."""
    tree = service.build_tree(session=session, user=user, include_documents=include_documents)
    # Serialized directly: re-validating a tree of 10,000 documents against its own
    # model would double the time of the endpoint.
    return Response(tree.model_dump_json(), media_type="application/json")


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


@router.get("/{folder_id}/documents", response_model=DocumentPage, responses={404: _ERRORS[404]})
def folder_documents(
    folder_id: RowId,
    user: CurrentUser,
    session: SessionDep,
    cfg: SettingsDep,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> DocumentPage:
    """A page of the documents directly in a folder, by title."""
    items, total = documents.list_documents(
        session=session,
        user=user,
        folder_id=folder_id,
        offset=offset,
        limit=min(limit, cfg.max_page_size),
    )
    return DocumentPage.of(items, total=total, offset=offset, limit=limit)
