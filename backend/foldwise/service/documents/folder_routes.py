"""The folder endpoints that show documents: the whole tree with counts (and titles), and a
folder's documents. Served under ``/api/folders`` like the other folder endpoints; they live
here because they read documents (docs/architecture.md sec. 11: documents import folders, not
the other way round). The app includes this router before the folders router, so ``/tree``
is matched before ``/{folder_id}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from foldwise.service.config import SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.documents import folder_views, service
from foldwise.service.documents.schemas import DocumentPage
from foldwise.service.folders.schemas import Tree
from foldwise.service.inputs import Offset, RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api/folders", tags=["folders"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown folder (or another user's)"},
}


@router.get("/tree", response_model=Tree)
def get_tree(user: CurrentUser, session: SessionDep, include_documents: bool = False) -> Response:
    """The caller's whole hierarchy, with document counts (and documents on request)."""
    tree = folder_views.build_tree(session=session, user=user, include_documents=include_documents)
    # Serialized directly: re-validating a tree of 10,000 documents against its own
    # model would double the time of the endpoint.
    return Response(tree.model_dump_json(), media_type="application/json")


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
    items, total = service.list_documents(
        session=session,
        user=user,
        folder_id=folder_id,
        offset=offset,
        limit=min(limit, cfg.max_page_size),
    )
    return DocumentPage.of(items, total=total, offset=offset, limit=limit)
