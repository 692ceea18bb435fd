"""Full-text search over the user's documents: SQLite FTS5 or PostgreSQL full-text.

The index itself is made by the first migration (an FTS5 table with triggers on SQLite, a
GIN expression index on PostgreSQL). Both take plain words: every word must match.
"""

from __future__ import annotations

import json
import re

from sqlalchemy import text
from sqlalchemy.orm import Session

from foldwise.service.errors import InvalidInputError
from foldwise.service.search.schemas import SearchHit
from foldwise.service.search.sqlite_rank import ranked_matches
from foldwise.service.users.models import User

# Must stay identical to the indexed expression in migrations/versions/0001_*.py.
PG_TSVECTOR = "to_tsvector('english', left(title || ' ' || text, 300000))"
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_WORDS = 32

# The ranking is per user (sqlite_rank.py); FTS5 gives the snippets of the page shown.
_SQLITE_PAGE = text(
    """
    SELECT d.id, d.title, d.folder_id,
           snippet(documents_fts, 1, '[', ']', '…', 16) AS snippet
    FROM documents_fts JOIN documents AS d ON d.id = documents_fts.rowid
    WHERE documents_fts MATCH :match AND d.id IN (SELECT value FROM json_each(:ids))
    """
)

_POSTGRES = text(
    f"""
    WITH q AS (SELECT plainto_tsquery('english', :words) AS query)
    SELECT id, title, folder_id,
           ts_headline('english', left(text, 20000), q.query,
                       'StartSel=[,StopSel=],MaxWords=24,MinWords=8,MaxFragments=1') AS snippet,
           ts_rank({PG_TSVECTOR}, q.query) AS rank
    FROM documents, q
    WHERE user_id = :user_id AND {PG_TSVECTOR} @@ q.query
    ORDER BY rank DESC, id
    LIMIT :limit OFFSET :offset
    """
)


def query_words(q: str) -> list[str]:
    """The words of a query; ``InvalidInputError`` if there are none or too many."""
    words = _WORD.findall(q)
    if not words:
        raise InvalidInputError("the search query has no words")
    if len(words) > MAX_WORDS:
        raise InvalidInputError(f"the search query has {len(words)} words; at most {MAX_WORDS}")
    return words


def search(
    *, session: Session, user: User, q: str, offset: int = 0, limit: int = 20
) -> list[SearchHit]:
    """The user's documents that contain every word of ``q``, best first."""
    words = query_words(q)
    params = {"user_id": user.id, "limit": limit, "offset": offset}
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        # Quoting every word keeps FTS5 operators (AND, NEAR, *, :) in user input literal.
        match = " ".join('"' + w.replace('"', '""') + '"' for w in words)
        return _sqlite_page(
            session, user=user, match=match, words=words, offset=offset, limit=limit
        )
    elif dialect == "postgresql":
        rows = session.execute(_POSTGRES, {**params, "words": " ".join(words)})
    else:  # pragma: no cover - only the two supported databases
        raise NotImplementedError(f"full-text search on {dialect}")
    return [
        SearchHit(
            id=r.id,
            title=r.title,
            folder_id=r.folder_id,
            snippet=r.snippet or "",
            rank=float(r.rank),
        )
        for r in rows
    ]


def _sqlite_page(
    session: Session, *, user: User, match: str, words: list[str], offset: int, limit: int
) -> list[SearchHit]:
    ranked = ranked_matches(session, user_id=user.id, match=match, words=words)
    page = ranked[offset : offset + limit]
    if not page:
        return []
    ids = json.dumps([doc for doc, _ in page])
    rows = {r.id: r for r in session.execute(_SQLITE_PAGE, {"match": match, "ids": ids})}
    return [
        SearchHit(
            id=doc,
            title=rows[doc].title,
            folder_id=rows[doc].folder_id,
            snippet=rows[doc].snippet or "",
            rank=score,
        )
        for doc, score in page
    ]
