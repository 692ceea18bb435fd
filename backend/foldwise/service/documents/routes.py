"""Document endpoints: post (JSON or file, single or batch), read, download, file, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Response, UploadFile, status
from fastapi.responses import FileResponse

from foldwise.service.config import SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.documents import service
from foldwise.service.documents.schemas import (
    BatchResult,
    DocumentBatchCreate,
    DocumentCreate,
    DocumentPage,
    DocumentRead,
    DocumentSummary,
    IngestResult,
)
from foldwise.service.errors import InvalidInputError, NotFoundError, TooLargeError
from foldwise.service.inputs import Offset, RowId
from foldwise.service.rate_limits import LimitsDep
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api/documents", tags=["documents"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown folder or document (or another user's)"},
    413: {"description": "over a size limit"},
    415: {"description": "unsupported file type"},
    422: {"description": "invalid, empty or corrupt input"},
}
# Served as themselves; anything else (HTML, or a type a later version adds) is opaque bytes.
_INERT_TYPES = frozenset(
    {
        "text/plain",
        "text/markdown",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "message/rfc822",
        "image/png",
        "image/jpeg",
        "image/tiff",
    }
)
_OPAQUE = "application/octet-stream"
_INGEST_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": IngestResult, "description": "a duplicate: the stored document"},
    **_ERRORS,
}


def document_read(session: SessionDep, document: service.Document) -> DocumentRead:
    """The API view of ``document``, with its folder path."""
    path = service.folder_path_of(session=session, document=document)
    return DocumentRead.model_validate(document).model_copy(update={"folder_path": path})


def _result(document: service.Document, duplicate: bool) -> IngestResult:
    return IngestResult(document=DocumentSummary.model_validate(document), duplicate=duplicate)


def _read_upload(upload: UploadFile, limit: int) -> bytes:
    # Read one byte past the limit: enough to know the file is too big without holding more.
    # Sync routes read the spooled file directly; extraction and the DB then run in the
    # threadpool too, never on the event loop.
    data = upload.file.read(limit + 1)
    if len(data) > limit:
        raise TooLargeError(f"{upload.filename!r} is over the limit of {limit} bytes")
    return data


def _set_status(response: Response, duplicate: bool) -> None:
    # 201 for a new document, 200 when the same content was already stored.
    response.status_code = status.HTTP_200_OK if duplicate else status.HTTP_201_CREATED


@router.post("", response_model=IngestResult, status_code=201, responses=_INGEST_ANSWERS)
def post_document(
    body: DocumentCreate,
    user: CurrentUser,
    limits: LimitsDep,
    session: SessionDep,
    response: Response,
) -> IngestResult:
    """Post one document as JSON text. A duplicate answers the stored document."""
    limits.upload(user.id)
    document, duplicate = service.create_document(
        session=session,
        user=user,
        title=body.title,
        text=body.text,
        filename=body.filename,
        folder_id=body.folder_id,
    )
    session.commit()
    _set_status(response, duplicate)
    return _result(document, duplicate)


@router.post("/upload", response_model=IngestResult, status_code=201, responses=_INGEST_ANSWERS)
def upload_document(
    file: Annotated[
        UploadFile, File(description="txt, md, html, pdf, docx, eml, png, jpeg or tiff")
    ],
    user: CurrentUser,
    limits: LimitsDep,
    session: SessionDep,
    cfg: SettingsDep,
    response: Response,
    title: Annotated[str | None, Form(max_length=500)] = None,
    folder_id: Annotated[RowId | None, Form()] = None,
) -> IngestResult:
    """Post one document as a multipart file."""
    limits.upload(user.id)
    data = _read_upload(file, cfg.max_document_bytes)
    document, duplicate = service.create_document(
        session=session,
        user=user,
        title=title,
        data=data,
        filename=file.filename,
        media_type=file.content_type,
        folder_id=folder_id,
    )
    session.commit()
    _set_status(response, duplicate)
    return _result(document, duplicate)


@router.post("/batch", response_model=BatchResult, status_code=201, responses=_ERRORS)
def post_batch(
    body: DocumentBatchCreate,
    user: CurrentUser,
    limits: LimitsDep,
    session: SessionDep,
    cfg: SettingsDep,
) -> BatchResult:
    """Post several JSON documents: all are checked first, then all stored, or none."""
    limits.upload(user.id)
    size = sum(len(doc.text) for doc in body.documents)
    if size > cfg.max_batch_bytes:
        raise TooLargeError(
            f"the batch holds {size} characters; the limit is {cfg.max_batch_bytes}"
        )
    items = []
    for index, doc in enumerate(body.documents):
        try:
            prepared = service.prepare(
                session=session, title=doc.title, text=doc.text, filename=doc.filename
            )
        except (InvalidInputError, TooLargeError) as exc:
            exc.message = f"documents[{index}]: {exc.message}"
            raise
        items.append((prepared, doc.folder_id if doc.folder_id is not None else body.folder_id))
    results = service.create_many(session=session, user=user, items=items)
    session.commit()
    return _batch(results)


@router.post("/batch/upload", response_model=BatchResult, status_code=201, responses=_ERRORS)
def upload_batch(
    files: Annotated[list[UploadFile], File(description="several files")],
    user: CurrentUser,
    limits: LimitsDep,
    session: SessionDep,
    cfg: SettingsDep,
    folder_id: Annotated[RowId | None, Form()] = None,
) -> BatchResult:
    """Post several files: all are checked first, then all stored, or none."""
    limits.upload(user.id)
    if len(files) > cfg.max_batch_documents:
        raise TooLargeError(f"{len(files)} files; a batch holds at most {cfg.max_batch_documents}")
    items, total = [], 0
    for index, upload in enumerate(files):
        data = _read_upload(upload, cfg.max_document_bytes)
        total += len(data)
        if total > cfg.max_batch_bytes:
            raise TooLargeError(f"the batch is over the limit of {cfg.max_batch_bytes} bytes")
        try:
            prepared = service.prepare(
                session=session, data=data, filename=upload.filename, media_type=upload.content_type
            )
        except (InvalidInputError, TooLargeError) as exc:
            exc.message = f"files[{index}]: {exc.message}"
            raise
        items.append((prepared, folder_id))
    results = service.create_many(session=session, user=user, items=items)
    session.commit()
    return _batch(results)


def _batch(results: list[tuple[service.Document, bool]]) -> BatchResult:
    duplicates = sum(1 for _, dup in results if dup)
    return BatchResult(
        results=[_result(d, dup) for d, dup in results],
        created=len(results) - duplicates,
        duplicates=duplicates,
    )


@router.get("", response_model=DocumentPage)
def list_documents(
    user: CurrentUser,
    session: SessionDep,
    cfg: SettingsDep,
    folder_id: RowId | None = None,
    unfiled: bool = False,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> DocumentPage:
    """A page of the caller's documents: in ``folder_id``, ``unfiled`` ones, or all."""
    items, total = service.list_documents(
        session=session,
        user=user,
        folder_id=folder_id,
        unfiled=unfiled,
        offset=offset,
        limit=min(limit, cfg.max_page_size),
    )
    return DocumentPage.of(items, total=total, offset=offset, limit=limit)


@router.get("/{document_id}", response_model=DocumentRead, responses={404: _ERRORS[404]})
def get_document(document_id: RowId, user: CurrentUser, session: SessionDep) -> DocumentRead:
    """One document with its text."""
    return document_read(
        session, service.get_document(session=session, user=user, document_id=document_id)
    )


@router.get(
    "/{document_id}/file",
    response_class=FileResponse,
    responses={200: {"description": "the original file"}, 404: _ERRORS[404]},
)
def download(document_id: RowId, user: CurrentUser, session: SessionDep) -> FileResponse:
    """The original file as uploaded, always as an attachment. Types a browser could run
    (HTML) go out as ``application/octet-stream``, so an uploaded page never runs as ours."""
    document = service.get_document(session=session, user=user, document_id=document_id)
    path = service.blob_store(session).path(document.blob_path)
    if not path.is_file():
        raise NotFoundError(f"the file of document {document_id} is missing from the blob store")
    media_type = document.media_type if document.media_type in _INERT_TYPES else _OPAQUE
    return FileResponse(
        path,
        media_type=media_type,
        filename=document.filename,
        content_disposition_type="attachment",
    )


@router.delete("/{document_id}", status_code=204, responses={404: _ERRORS[404]})
def delete_document(document_id: RowId, user: CurrentUser, session: SessionDep) -> None:
    """Delete a document."""
    service.delete_document(session=session, user=user, document_id=document_id)
    session.commit()
