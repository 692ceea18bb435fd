"""``GET /api/export``: the organised tree (or one folder) as a zip to download."""

from __future__ import annotations

import tempfile

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from foldwise.service.db import SessionDep
from foldwise.service.exports import service
from foldwise.service.inputs import RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api/export", tags=["export"])


@router.get(
    "",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/zip": {}}, "description": "the tree as a zip"},
        404: {"description": "unknown folder (or another user's)"},
    },
)
def export_zip(
    user: CurrentUser, session: SessionDep, folder_id: RowId | None = None
) -> StreamingResponse:
    """The caller's folders and documents as a zip: folders as directories, each original
    file under its title. With ``folder_id``, only that folder and what is under it."""
    entries = service.export_plan(session=session, user=user, folder_id=folder_id)
    # Spooled: small exports stay in memory, large ones go to a temporary file, never whole
    # into memory; the file is closed (and so removed) once streamed.
    spool = tempfile.SpooledTemporaryFile(max_size=32 << 20)  # noqa: SIM115
    service.write_zip(session=session, entries=entries, out=spool)  # type: ignore[arg-type]
    name = "foldwise-export.zip"
    return StreamingResponse(
        service.iter_file(spool),  # type: ignore[arg-type]
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
