"""Request and response bodies of the documents domain."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from foldwise.service.inputs import RowId

TextStatus = Literal[
    "extracted", "ocr_pending", "ocr_running", "ocr_done", "no_text_ocr_missing", "ocr_failed"
]


class DocumentCreate(BaseModel):
    """A document posted as JSON text. Without a title one is taken from the text."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    title: str | None = Field(default=None, max_length=500)
    filename: str | None = Field(default=None, max_length=255)
    folder_id: RowId | None = None


class DocumentBatchCreate(BaseModel):
    """Several JSON documents, stored all together or not at all."""

    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentCreate] = Field(min_length=1)
    folder_id: RowId | None = Field(default=None, description="default folder for the batch")


class DocumentUpdate(BaseModel):
    """Retitle and/or file. ``"folder_id": null`` unfiles; leaving it out keeps the folder."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=1, max_length=500)
    folder_id: RowId | None = None


class DocumentSummary(BaseModel):
    """A document without its text."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    title: str
    filename: str
    media_type: str
    size: int
    content_hash: str
    folder_id: int | None
    text_status: TextStatus = Field(
        description="extracted: text read from the file; ocr_pending / ocr_running: a scan "
        "waiting for or in OCR; ocr_done: text from OCR; no_text_ocr_missing: stored, but "
        "Tesseract is not installed; ocr_failed: stored, OCR could not read it (text_note)"
    )
    text_note: str | None = Field(description="why there is no text, or what OCR did")
    ocr_pages_done: int = Field(description="OCR progress: pages read so far")
    ocr_pages_total: int = Field(description="pages to OCR (0: no OCR needed)")
    created_at: datetime
    updated_at: datetime


class DocumentRead(DocumentSummary):
    """A document with its extracted text and folder path (``None``: unfiled)."""

    text: str
    folder_path: str | None = None


class IngestResult(BaseModel):
    """One stored document; ``duplicate`` means the same content was there already."""

    document: DocumentSummary
    duplicate: bool


class BatchResult(BaseModel):
    """The outcome of a batch, in the order of the request."""

    results: list[IngestResult]
    created: int
    duplicates: int


class DocumentPage(BaseModel):
    """One page of a listing."""

    items: list[DocumentSummary]
    total: int
    offset: int
    limit: int

    @classmethod
    def of(cls, rows: Sequence[Any], *, total: int, offset: int, limit: int) -> DocumentPage:
        """A page from document rows, as the listing endpoints return it."""
        items = [DocumentSummary.model_validate(d) for d in rows]
        return cls(items=items, total=total, offset=offset, limit=limit)


class SimilarDocument(BaseModel):
    """A document near the one shown, with its cosine similarity in [0, 1]."""

    id: int
    title: str
    folder_id: int | None
    similarity: float
