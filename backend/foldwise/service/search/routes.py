"""``GET /api/search``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from foldwise.service.db import SessionDep
from foldwise.service.inputs import Offset
from foldwise.service.search import service
from foldwise.service.search.schemas import SearchResults
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api", tags=["search"])


@router.get(
    "/search",
    response_model=SearchResults,
    responses={422: {"description": "empty query or too many words"}},
)
def search(
    user: CurrentUser,
    session: SessionDep,
    q: Annotated[str, Query(min_length=1, max_length=500, description="words, all must match")],
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SearchResults:
    """Full-text search over the caller's documents (title and text), best first."""
    hits = service.search(session=session, user=user, q=q, offset=offset, limit=limit)
    return SearchResults(query=q, hits=hits, offset=offset, limit=limit)
