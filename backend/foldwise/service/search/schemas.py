"""Search results."""

from __future__ import annotations

from pydantic import BaseModel


class SearchHit(BaseModel):
    """A matching document, best first; ``snippet`` marks matches with [brackets]."""

    id: int
    title: str
    folder_id: int | None
    snippet: str
    rank: float


class SearchResults(BaseModel):
    """One page of hits."""

    query: str
    hits: list[SearchHit]
    offset: int
    limit: int
