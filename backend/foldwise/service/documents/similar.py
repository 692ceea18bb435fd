"""Similar documents (the UI's document panel): tf-idf cosine over the person's documents.

The matrix is built once per user and kept until a document is added or deleted or a
scanned one's text arrives from OCR (the signature below changes; text arrives at most once,
and moving or retitling a document does not touch the matrix), so opening documents one
after another costs one sparse row product each. A process keeps the matrices of its
:data:`CACHE_SIZE` most recent users, keyed by database too (one process may serve several:
tests, several apps).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from foldwise.core import text_features
from foldwise.service.db import database_of
from foldwise.service.documents import language
from foldwise.service.documents.models import WITHOUT_TEXT, Document
from foldwise.service.documents.schemas import SimilarDocument
from foldwise.service.users.models import User

#: Below this many documents the papers' term filter (min count 5) would drop most terms.
SMALL_COLLECTION = 50
#: Users whose matrices a process keeps (a matrix holds each of the user's documents' terms).
CACHE_SIZE = 8


@dataclass(frozen=True)
class _Index:
    signature: tuple[int, int, int, int]
    ids: np.ndarray
    X: sp.csr_matrix


_cache: OrderedDict[tuple[str, int], _Index] = OrderedDict()
_lock = threading.Lock()


def _signature(session: Session, user: User) -> tuple[int, int, int, int]:
    """Count, largest and summed id of the user's documents (ids are never reused:
    docs/api.md), and how many have text (an OCR that finishes adds one)."""
    has_text = Document.text_status.not_in(WITHOUT_TEXT)
    count, max_id, id_sum, with_text = session.execute(
        select(
            func.count(Document.id),
            func.max(Document.id),
            func.sum(Document.id),
            func.sum(case((has_text, 1), else_=0)),
        ).where(Document.user_id == user.id)
    ).one()
    return int(count or 0), int(max_id or 0), int(id_sum or 0), int(with_text or 0)


def _index(session: Session, user: User) -> _Index:
    signature = _signature(session, user)
    key = (database_of(session), user.id)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.signature == signature:
            _cache.move_to_end(key)
            return cached
    rows = language.read_texts(session, Document.user_id == user.id)
    ids = np.array([doc_id for doc_id, _ in rows], dtype=np.int64)
    texts = [text for _, text in rows]
    params = {"min_term_count": 1} if len(texts) < SMALL_COLLECTION else {}
    if texts:
        X, _ = text_features(texts, **params)
    else:
        X = sp.csr_matrix((0, 0))
    index = _Index(signature, ids, sp.csr_matrix(X))
    with _lock:
        _cache[key] = index
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return index


def similar_documents(
    *, session: Session, user: User, document_id: int, limit: int = 5
) -> list[SimilarDocument]:
    """Up to ``limit`` of the user's documents nearest to ``document_id``, best first."""
    index = _index(session, user)
    where = np.flatnonzero(index.ids == document_id)
    if where.size == 0 or index.X.shape[1] == 0:
        return []
    row = index.X[int(where[0])]
    scores = np.asarray((index.X @ row.T).todense()).ravel()
    scores[where[0]] = -1.0
    order = [int(i) for i in np.argsort(-scores, kind="stable")[:limit] if scores[i] > 0]
    if not order:
        return []
    chosen = [int(index.ids[i]) for i in order]
    docs = {
        d.id: d
        for d in session.scalars(
            select(Document).where(Document.user_id == user.id, Document.id.in_(chosen))
        )
    }
    return [
        SimilarDocument(
            id=doc_id,
            title=docs[doc_id].title,
            folder_id=docs[doc_id].folder_id,
            similarity=round(float(scores[i]), 3),
        )
        for i, doc_id in zip(order, chosen, strict=True)
        if doc_id in docs
    ]
