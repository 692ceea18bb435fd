"""``POST /api/import/zip``: a zip of folders becomes the caller's filed hierarchy."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile, status

from foldwise.service.config import SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.errors import TooLargeError
from foldwise.service.imports import archive, service
from foldwise.service.imports.schemas import ImportReport
from foldwise.service.inputs import RowId
from foldwise.service.rate_limits import LimitsDep
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api/import", tags=["import"])


@router.post(
    "/zip",
    response_model=ImportReport,
    status_code=status.HTTP_201_CREATED,
    responses={
        404: {"description": "unknown parent folder"},
        413: {"description": "archive or a member over a limit"},
        422: {"description": "corrupt archive, traversal, link, zip bomb or bad member"},
    },
)
def import_zip(
    file: Annotated[UploadFile, File(description="a zip of folders and documents")],
    user: CurrentUser,
    session: SessionDep,
    cfg: SettingsDep,
    limits: LimitsDep,
    parent_id: Annotated[RowId | None, Form(description="folder to import under")] = None,
) -> ImportReport:
    """Import a zip: its folders and the documents in them, all or nothing."""
    limits.upload(user.id)
    # A sync route: unpacking and extraction run in the threadpool, not on the event loop.
    data = file.file.read(cfg.max_archive_bytes + 1)
    if len(data) > cfg.max_archive_bytes:
        raise TooLargeError(f"archive is over the limit of {cfg.max_archive_bytes} bytes")
    listing = archive.read_zip(data, cfg)
    report = service.import_listing(
        session=session, user=user, listing=listing, parent_id=parent_id
    )
    session.commit()
    return report
