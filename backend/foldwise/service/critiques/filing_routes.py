"""The endpoints that change where a document or folder is, outside ``/api/critiques``:
``PATCH /api/documents/{id}``, ``PATCH /api/folders/{id}``, ``DELETE /api/folders/{id}``.

They live here, beside :mod:`critiques.filing`, so that the documents and folders packages
import nothing of the critiques (no import circle): each is a thin call of one filing
operation, which checks, counts, records and schedules like a critique.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from foldwise.service.critiques import filing
from foldwise.service.db import SessionDep
from foldwise.service.documents import service as documents
from foldwise.service.documents.routes import document_read
from foldwise.service.documents.schemas import DocumentRead, DocumentUpdate
from foldwise.service.folders import service as folders
from foldwise.service.folders.routes import folder_read
from foldwise.service.folders.schemas import FolderDeleted, FolderRead, FolderUpdate
from foldwise.service.inputs import RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api")

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown document or folder (or another user's)"},
    409: {
        "description": "contradicts the triples in force (the message names them), name taken, "
        "cycle, or folder not empty"
    },
    422: {"description": "invalid title or name, or too deep"},
}


@router.patch(
    "/documents/{document_id}", response_model=DocumentRead, responses=_ERRORS, tags=["documents"]
)
def update_document(
    document_id: RowId, body: DocumentUpdate, user: CurrentUser, session: SessionDep
) -> DocumentRead:
    """Retitle and/or file a document (``"folder_id": null`` unfiles it).

    Filing is a ``move`` in the history, checked against the triples in force like a critique.
    """
    document = documents.update_document(
        session=session, user=user, document_id=document_id, title=body.title
    )
    if "folder_id" in body.model_fields_set:
        filing.move_document(
            session=session, user=user, document=document, folder_id=body.folder_id
        )
    session.commit()
    return document_read(session, document)


@router.patch(
    "/folders/{folder_id}", response_model=FolderRead, responses=_ERRORS, tags=["folders"]
)
def update_folder(
    folder_id: RowId, body: FolderUpdate, user: CurrentUser, session: SessionDep
) -> FolderRead:
    """Rename and/or move (``"parent_id": null`` moves to the top level; cycles are refused).

    A move is a ``folder_move`` in the history, checked against the triples in force.
    """
    if "parent_id" in body.model_fields_set:
        folder = filing.move_folder(
            session=session, user=user, folder_id=folder_id, parent_id=body.parent_id,
            name=body.name,
        )  # fmt: skip
    else:
        folder = folders.update_folder(
            session=session, user=user, folder_id=folder_id, name=body.name
        )
    session.commit()
    return folder_read(session, folder)


@router.delete(
    "/folders/{folder_id}", response_model=FolderDeleted, responses=_ERRORS, tags=["folders"]
)
def delete_folder(
    folder_id: RowId, user: CurrentUser, session: SessionDep, recursive: bool = False
) -> FolderDeleted:
    """Delete a folder; its documents become unfiled, never deleted.

    A folder with subfolders needs ``recursive=true`` (the whole subtree goes). The delete is
    a ``folder_delete`` in the history: undo brings the folders back and refiles the documents.
    """
    count, unfiled = filing.delete_folder(
        session=session, user=user, folder_id=folder_id, recursive=recursive
    )
    session.commit()
    return FolderDeleted(folders_deleted=count, documents_unfiled=unfiled)
