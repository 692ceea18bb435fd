"""Each document's language, detected once when its text arrives and stored with it.

Feature fitting detects every text's language (``core.TextFeatures``, docs/languages.md),
and a process remembers its detections only while it runs: a worker's first recluster of
100,000 documents spent 14.5 s detecting them (docs/recluster.md, "Languages detected at
ingest"). Ingestion stores the posteriors in ``Document.language_posteriors``; a reader of
texts hands them back to the core with :func:`remember` before fitting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session

from foldwise import core
from foldwise.service.documents.models import Document


def posteriors_of(text: str) -> bytes | None:
    """The stored form of ``text``'s language posteriors: float32 in the order of
    ``core.LANGUAGE_CODES``; ``None`` for a text without words (nothing to detect)."""
    if not text.strip():
        return None
    return np.asarray(core.language_posteriors(text), dtype=np.float32).tobytes()


def remember(texts: Sequence[str], stored: Sequence[bytes | None]) -> int:
    """Give the core the stored detections of ``texts`` (``stored[i]`` for ``texts[i]``), so
    that it does not detect them again; returns how many it took.

    A detection stored for another set of languages (another length) is left out: the core
    detects that text again.
    """
    width = 4 * len(core.LANGUAGE_CODES)
    usable = [(t, p) for t, p in zip(texts, stored, strict=True) if p and len(p) == width]
    if usable:
        found = np.frombuffer(b"".join(p for _, p in usable), dtype=np.float32)
        core.remember_language_posteriors(
            [t for t, _ in usable], found.reshape(len(usable), len(core.LANGUAGE_CODES))
        )
    return len(usable)


def read_texts(session: Session, *where: ColumnElement[bool]) -> list[tuple[int, str]]:
    """(id, text) of the documents matching ``where``, by ascending id ("" for no text);
    their stored languages are handed to the core (:func:`remember`), so that it detects
    only documents stored without them. Every reader of texts that fits features reads
    them here: the recluster, the re-placement after a critique, the similar-documents
    index (in an API process that did not ingest them, or after a restart)."""
    rows = session.execute(
        select(Document.id, Document.text, Document.language_posteriors)
        .where(*where)
        .order_by(Document.id)
    ).all()
    texts = [(doc_id, text or "") for doc_id, text, _ in rows]
    remember([text for _, text in texts], [stored for _, _, stored in rows])
    return texts


def backfill(
    session: Session, *, chunk: int = 500, progress: Callable[[int, int], None] | None = None
) -> int:
    """Detect and store the languages of every document stored without them (before
    migration 0010); returns how many were stored.

    Documents are read in chunks of ``chunk`` by ascending id, and each chunk is committed:
    an interrupted run keeps what it stored, and a second run goes on from there. A text
    without words keeps ``NULL`` (nothing to detect). ``progress(done, total)`` is called
    after each chunk.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    missing = (Document.language_posteriors.is_(None), Document.text.is_not(None))
    total = session.scalar(select(func.count()).select_from(Document).where(*missing)) or 0
    stored, done, last = 0, 0, 0
    while True:
        rows = session.execute(
            select(Document.id, Document.text)
            .where(*missing, Document.id > last)
            .order_by(Document.id)
            .limit(chunk)
        ).all()
        if not rows:
            return stored
        found = [(doc_id, posteriors_of(text)) for doc_id, text in rows]
        for doc_id, posteriors in found:
            if posteriors is not None:
                session.execute(
                    update(Document)
                    .where(Document.id == doc_id)
                    .values(language_posteriors=posteriors)
                )
        session.commit()
        stored += sum(p is not None for _, p in found)
        done += len(rows)
        last = rows[-1][0]
        if progress is not None:
            progress(done, total)
