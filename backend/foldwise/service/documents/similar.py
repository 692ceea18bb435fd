"""Similar documents (the UI's document panel): tf-idf cosine over the person's documents.

The matrix is built once per user and kept until a document is added or deleted (the
signature below changes; a document's text never changes after upload, and moving or
retitling it does not touch the matrix), so opening documents one after another costs one
sparse row product each.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.core import text_features
from foldwise.service.documents import language
from foldwise.service.documents.models import Document
from foldwise.service.documents.schemas import SimilarDocument
from foldwise.service.users.models import User

#: Below this many documents the papers' term filter (min count 5) would drop most terms.
SMALL_COLLECTION = 50


@dataclass(frozen=True)
class _Index:
    signature: tuple[int, int, int]
    ids: np.ndarray
    X: sp.csr_matrix


_cache: dict[int, _Index] = {}
_lock = threading.Lock()


def _signature(session: Session, user: User) -> tuple[int, int, int]:
    count, max_id, id_sum = session.execute(
        select(func.count(Document.id), func.max(Document.id), func.sum(Document.id)).where(
            Document.user_id == user.id
        )
    ).one()
    return int(count or 0), int(max_id or 0), int(id_sum or 0)


def _index(session: Session, user: User) -> _Index:
    signature = _signature(session, user)
    with _lock:
        cached = _cache.get(user.id)
    if cached is not None and cached.signature == signature:
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
        _cache[user.id] = index
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
