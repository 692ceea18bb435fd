"""Ingestion and filing of documents (keyword-only functions; callers commit)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from foldwise.service.db import in_chunks, settings_of
from foldwise.service.documents import extract as extraction
from foldwise.service.documents import language
from foldwise.service.documents.blobs import BlobStore, content_hash
from foldwise.service.documents.models import EXTRACTED, OCR_PENDING, Document
from foldwise.service.documents.writers import reclaim_dead_writers
from foldwise.service.errors import InvalidInputError, NotFoundError, TooLargeError
from foldwise.service.folders.models import Folder
from foldwise.service.folders.service import folder_path, get_folder
from foldwise.service.users.models import User

_UNSAFE_FILENAME = re.compile(r"[\x00-\x1f\x7f/\\]")


@dataclass(frozen=True)
class Prepared:
    """A document checked and extracted, not yet stored (batches check all before storing)."""

    data: bytes
    digest: str
    text: str
    title: str
    filename: str
    media_type: str
    #: Pages the OCR task reads (a scan: ``text`` is ""); 0 when the text was extracted.
    ocr_pages: int = 0
    #: ``text``'s language posteriors as stored (``language.posteriors_of``).
    language_posteriors: bytes | None = None

    def new_document(self, user: User, folder_id: int | None, blob_path: str) -> Document:
        """The row of this document (a scan waits for OCR: docs/ocr.md)."""
        return Document(
            user_id=user.id,
            folder_id=folder_id,
            title=self.title,
            text=self.text,
            content_hash=self.digest,
            filename=self.filename,
            media_type=self.media_type,
            size=len(self.data),
            blob_path=blob_path,
            text_status=OCR_PENDING if self.ocr_pages else EXTRACTED,
            ocr_pages_total=self.ocr_pages,
            language_posteriors=self.language_posteriors,
        )


def blob_store(session: Session) -> BlobStore:
    """The blob store of the session's data directory."""
    return BlobStore(settings_of(session).blob_dir)


def safe_filename(filename: str | None, default: str) -> str:
    """The last path component of ``filename`` without control characters (or ``default``)."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name
    name = _UNSAFE_FILENAME.sub("_", name).strip()[:255]
    return name or default


def _title_from(text: str, filename: str, limit: int) -> str:
    stem = PurePosixPath(filename).stem
    if stem and stem not in ("untitled", "document"):
        return stem[:limit]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "Untitled")
    return first[:limit]


def prepare(
    *,
    session: Session,
    title: str | None = None,
    text: str | None = None,
    data: bytes | None = None,
    filename: str | None = None,
    media_type: str | None = None,
) -> Prepared:
    """Check and extract one document (no writes). Give ``text`` or the file's ``data``."""
    cfg = settings_of(session)
    if (text is None) == (data is None):
        raise ValueError("give exactly one of text and data")
    if title is not None and "\x00" in title:  # JSON is checked at the edge; forms are not
        raise InvalidInputError("title contains a NUL character")
    if text is not None:
        if len(text) > cfg.max_text_chars:
            raise TooLargeError(
                f"text has {len(text)} characters; the limit is {cfg.max_text_chars}"
            )
        # Without a file name, the title names the stored original ("Shopping.txt").
        name = safe_filename(
            filename or (f"{title.strip()}.txt" if title else None), "document.txt"
        )
        # JSON text is plain text; only a markdown name keeps its own type.
        if extraction.MEDIA_TYPES.get(PurePosixPath(name).suffix.lower()) != "text/markdown":
            name = (
                name if PurePosixPath(name).suffix.lower() in (".txt", ".text") else name + ".txt"
            )
        data = text.replace("\x00", "").encode("utf-8")
        if len(data) > cfg.max_document_bytes:
            raise TooLargeError(
                f"document is {len(data)} bytes; the limit is {cfg.max_document_bytes}"
            )
        if not text.strip():
            raise InvalidInputError("text is empty")
        media = extraction.MEDIA_TYPES[PurePosixPath(name).suffix.lower()]
        found = extraction.Extracted(text=data.decode(), title=None, media_type=media)
    else:
        assert data is not None
        name = safe_filename(filename, "")
        if not name:
            raise InvalidInputError("an uploaded file needs a filename")
        if len(data) > cfg.max_document_bytes:
            raise TooLargeError(
                f"{name!r} is {len(data)} bytes; the limit is {cfg.max_document_bytes}"
            )
        found = extraction.extract(data, name, media_type)
        if len(found.text) > cfg.max_text_chars:
            raise TooLargeError(
                f"{name!r} yields {len(found.text)} characters; the limit is {cfg.max_text_chars}"
            )
    chosen = (
        (title or "").strip() or found.title or _title_from(found.text, name, cfg.max_title_chars)
    )
    return Prepared(
        data=data,
        digest=content_hash(data),
        text=found.text,
        title=chosen[: cfg.max_title_chars],
        filename=name,
        media_type=found.media_type,
        ocr_pages=found.ocr_pages,
        language_posteriors=language.posteriors_of(found.text),
    )


def find_duplicate(*, session: Session, user: User, digest: str) -> Document | None:
    """The user's document with this content hash, if any."""
    return session.scalar(
        select(Document).where(Document.user_id == user.id, Document.content_hash == digest)
    )


def store(
    *, session: Session, user: User, prepared: Prepared, folder_id: int | None = None
) -> tuple[Document, bool]:
    """Store a prepared document; returns (document, duplicate).

    A duplicate is the user's existing document with the same content; it is returned as it
    is (not moved, not retitled). The folder must be the user's (checked by the caller).
    """
    existing = find_duplicate(session=session, user=user, digest=prepared.digest)
    if existing is not None:
        return existing, True
    blob_path = blob_store(session).put(prepared.data, prepared.digest)
    document = prepared.new_document(user, folder_id, blob_path)
    session.add(document)
    session.flush()
    return document, False


def create_document(
    *,
    session: Session,
    user: User,
    title: str | None = None,
    text: str | None = None,
    data: bytes | None = None,
    filename: str | None = None,
    media_type: str | None = None,
    folder_id: int | None = None,
) -> tuple[Document, bool]:
    """Check, extract and store one document; returns (document, duplicate).

    Parameters
    ----------
    text, data
        Exactly one: plain text, or the raw bytes of a file (type from ``filename``).
    folder_id
        The user's folder to file it in; ``None`` leaves it unfiled.

    Raises ``InvalidInputError``, ``UnsupportedTypeError``, ``TooLargeError`` or
    ``NotFoundError``; the caller commits.
    """
    if folder_id is not None:
        get_folder(session=session, user=user, folder_id=folder_id)
    prepared = prepare(
        session=session, title=title, text=text, data=data, filename=filename, media_type=media_type
    )
    return store(session=session, user=user, prepared=prepared, folder_id=folder_id)


def store_many(
    *, session: Session, user: User, items: list[tuple[Prepared, int | None]]
) -> list[tuple[Document, bool]]:
    """Store prepared documents with their (checked) folders; returns (document, duplicate)
    in order. A content that occurs twice is stored once and reported as a duplicate the
    second time. One query finds duplicates and one flush inserts the rest."""
    known: dict[str, Document] = {}
    for chunk in in_chunks({p.digest for p, _ in items}):
        known.update(
            (d.content_hash, d)
            for d in session.scalars(
                select(Document).where(
                    Document.user_id == user.id, Document.content_hash.in_(chunk)
                )
            )
        )
    new: dict[str, tuple[Prepared, int | None]] = {}
    for prepared, folder_id in items:
        if prepared.digest not in known and prepared.digest not in new:
            new[prepared.digest] = (prepared, folder_id)
    paths = blob_store(session).put_many({d: p.data for d, (p, _) in new.items()})
    created = {
        digest: prepared.new_document(user, folder_id, paths[digest])
        for digest, (prepared, folder_id) in new.items()
    }
    session.add_all(created.values())
    session.flush()
    results, seen = [], set()
    for prepared, _ in items:
        if prepared.digest in created and prepared.digest not in seen:
            seen.add(prepared.digest)
            results.append((created[prepared.digest], False))
        else:
            results.append((known.get(prepared.digest) or created[prepared.digest], True))
    return results


def create_many(
    *,
    session: Session,
    user: User,
    items: list[tuple[Prepared, int | None]],
) -> list[tuple[Document, bool]]:
    """Store a batch of prepared documents with their folders, in order; the caller commits."""
    cfg = settings_of(session)
    if len(items) > cfg.max_batch_documents:
        raise TooLargeError(
            f"{len(items)} documents; a batch holds at most {cfg.max_batch_documents}"
        )
    for folder_id in {f for _, f in items if f is not None}:
        get_folder(session=session, user=user, folder_id=folder_id)
    return store_many(session=session, user=user, items=items)


def get_document(*, session: Session, user: User, document_id: int) -> Document:
    """The user's document; ``NotFoundError`` for unknown ids and other users' documents."""
    document = session.get(Document, document_id)
    if document is None or document.user_id != user.id:
        raise NotFoundError(f"document {document_id} not found")
    return document


def update_document(
    *,
    session: Session,
    user: User,
    document_id: int,
    title: str | None = None,
) -> Document:
    """Retitle a document. Filing it elsewhere is ``critiques.filing.move_document``."""
    document = get_document(session=session, user=user, document_id=document_id)
    if title is not None:
        if not title.strip():
            raise InvalidInputError("title is empty")
        document.title = title.strip()
    session.flush()
    return document


def delete_document(*, session: Session, user: User, document_id: int) -> None:
    """Delete the document row. Its blob may be shared by content with other documents (of
    any user); ``collect_blobs`` (``foldwise gc-blobs``) removes blobs nobody references."""
    document = get_document(session=session, user=user, document_id=document_id)
    session.delete(document)
    session.flush()


def list_documents(
    *,
    session: Session,
    user: User,
    folder_id: int | None = None,
    unfiled: bool = False,
    offset: int = 0,
    limit: int = 50,
) -> tuple[list[Document], int]:
    """A page of the user's documents (in a folder, unfiled, or all), by title; and the total."""
    where = [Document.user_id == user.id]
    if folder_id is not None:
        get_folder(session=session, user=user, folder_id=folder_id)
        where.append(Document.folder_id == folder_id)
    elif unfiled:
        where.append(Document.folder_id.is_(None))
    total = session.scalar(select(func.count()).select_from(Document).where(*where)) or 0
    page = session.scalars(
        select(Document)
        .where(*where)
        .order_by(Document.title, Document.id)
        .offset(offset)
        .limit(limit)
    )
    return list(page), total


def unfile_folders(*, session: Session, user: User, folder_ids: list[int]) -> int:
    """Unfile the user's documents in ``folder_ids`` (their folders are about to be deleted);
    returns how many. Explicit, not only ``ON DELETE SET NULL``, so the count is known and
    SQLite without foreign keys enabled behaves the same."""
    result = session.execute(
        update(Document)
        .where(Document.user_id == user.id, Document.folder_id.in_(folder_ids))
        .values(folder_id=None)
    )
    return getattr(result, "rowcount", 0) or 0


def folder_path_of(*, session: Session, document: Document) -> str | None:
    """The path of the document's folder, ``None`` if unfiled."""
    if document.folder_id is None:
        return None
    folder = session.get(Folder, document.folder_id)
    return folder_path(session=session, folder=folder) if folder else None


def collect_blobs(*, session: Session, min_age_seconds: float = 3600, dry_run: bool = False) -> int:
    """Remove stored files that no document references any more (deleted documents, failed
    requests) and that are older than ``min_age_seconds``; returns how many."""
    referenced = set(session.scalars(select(Document.blob_path).distinct()))
    return blob_store(session).collect(referenced, min_age_seconds, dry_run=dry_run)


def reclaim_crashed_writes(*, session: Session) -> int:
    """Remove the blobs and temporary files that processes which died (kill -9, OOM, power)
    wrote and never committed; returns how many files went. Run at start-up; safe while
    other processes write (``writers.py``)."""

    def referenced(paths: set[str]) -> set[str]:
        found: set[str] = set()
        for chunk in in_chunks(paths):
            found.update(
                session.scalars(
                    select(Document.blob_path).where(Document.blob_path.in_(chunk)).distinct()
                )
            )
        return found

    return reclaim_dead_writers(blob_store(session).root, referenced)
