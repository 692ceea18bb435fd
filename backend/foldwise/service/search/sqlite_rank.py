"""BM25 over one user's documents on SQLite, so a user's ranking never depends on others'.

FTS5's own ``bm25()`` takes its statistics (document count, documents per term, average
length) from the whole index, that is from every user: one user's scores would move when
another adds documents with a word, which tells them what the other wrote. Here FTS5 still
finds the matches, but the score is FTS5's BM25 formula computed from the user's documents
only:

    score(d) = sum over query terms t of
               idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avg |d|))

with ``f`` the column-weighted term frequency (title 5, text 1), ``|d|`` the document's
length in tokens, ``idf(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5))`` (at least 1e-6), and
``N``, ``n(t)`` and ``avg |d|`` counted over the user's documents. Term frequencies come from
an ``fts5vocab`` instance table, lengths from the index's ``documents_fts_docsize`` table,
both documented parts of FTS5 (https://sqlite.org/fts5.html). For a single user the score
equals ``-bm25(documents_fts, 5.0, 1.0)``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

K1, B = 1.2, 0.75
COLUMN_WEIGHTS = {"title": 5.0, "text": 1.0}  # as bm25(documents_fts, 5.0, 1.0) had

# Per connection (temp schema): the index's terms, and a scratch index that tokenizes the
# query exactly as documents were (same porter/unicode61 tokenizer as migration 0001).
_SETUP = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fw_index_terms "
    "USING fts5vocab(main, documents_fts, 'instance')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fw_query "
    "USING fts5(words, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fw_query_terms "
    "USING fts5vocab(temp, fw_query, 'instance')",
)

_MATCHES = text(
    """
    SELECT d.id FROM documents_fts JOIN documents AS d ON d.id = documents_fts.rowid
    WHERE documents_fts MATCH :match AND d.user_id = :user_id
    """
)
_TERM_FREQUENCIES = text(
    """
    SELECT v.doc, v.col, count(*) AS tf
    FROM temp.fw_index_terms AS v JOIN documents AS d ON d.id = v.doc
    WHERE v.term = :term AND d.user_id = :user_id
    GROUP BY v.doc, v.col
    """
)
_LENGTHS = text(
    """
    SELECT s.id, s.sz FROM documents_fts_docsize AS s
    WHERE s.id IN (SELECT id FROM documents WHERE user_id = :user_id)
    """
)


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (big-endian 7-bit groups, the 9th byte whole): FTS5's column sizes."""
    values, value, count = [], 0, 0
    for byte in blob:
        count += 1
        if count == 9:
            values.append((value << 8) | byte)
            value, count = 0, 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            values.append((value << 7) | byte)
            value, count = 0, 0
    return values


def query_terms(session: Session, words: Sequence[str]) -> list[str]:
    """The index terms of ``words`` (stemmed and folded as documents were), deduplicated."""
    for statement in _SETUP:
        session.execute(text(statement))
    session.execute(text("DELETE FROM temp.fw_query"))
    session.execute(
        text("INSERT INTO temp.fw_query(words) VALUES (:words)"), {"words": " ".join(words)}
    )
    terms = session.scalars(text("SELECT term FROM temp.fw_query_terms ORDER BY offset"))
    return list(dict.fromkeys(terms))


def ranked_matches(
    session: Session, *, user_id: int, match: str, words: Sequence[str]
) -> list[tuple[int, float]]:
    """``(document id, score)`` of the user's documents matching ``match``, best first.

    ``match`` is the FTS5 query (every word, quoted); ``words`` are its words.
    """
    params = {"user_id": user_id}
    matched = set(session.scalars(_MATCHES, {**params, "match": match}))
    if not matched:
        return []
    lengths: dict[int, int] = {}
    for row in session.execute(_LENGTHS, params):
        lengths[row.id] = sum(_varints(row.sz))
    n_documents = len(lengths)
    average_length = sum(lengths.values()) / n_documents if n_documents else 1.0
    scores: dict[int, float] = defaultdict(float)
    for term in query_terms(session, words):
        weighted: dict[int, float] = defaultdict(float)
        for row in session.execute(_TERM_FREQUENCIES, {**params, "term": term}):
            weighted[row.doc] += COLUMN_WEIGHTS[row.col] * row.tf
        n_term = len(weighted)
        idf = max(1e-6, math.log((n_documents - n_term + 0.5) / (n_term + 0.5)))
        for doc in matched:
            f = weighted.get(doc, 0.0)
            if f:
                norm = K1 * (1 - B + B * lengths.get(doc, 0) / (average_length or 1.0))
                scores[doc] += idf * f * (K1 + 1) / (f + norm)
    return sorted(((doc, scores[doc]) for doc in matched), key=lambda item: (-item[1], item[0]))
