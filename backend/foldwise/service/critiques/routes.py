"""Critique endpoints: make, list, undo; the triples in force; "which is closer?" questions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from foldwise.service.critiques import questions, service, triples
from foldwise.service.critiques.schemas import (
    CloserQuestion,
    CritiqueCreate,
    CritiqueRead,
    CritiqueUndone,
    TriplesRead,
)
from foldwise.service.db import SessionDep
from foldwise.service.inputs import Offset, RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api", tags=["critiques"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown document, folder, proposal or critique (or another user's)"},
    409: {"description": "contradicts the triples in force, or the proposal is closed"},
    422: {"description": "invalid critique"},
}


@router.post("/critiques", response_model=CritiqueRead, status_code=201, responses=_ERRORS)
def post_critique(
    body: Annotated[CritiqueCreate, Body()],
    user: CurrentUser,
    session: SessionDep,
) -> CritiqueRead:
    """Critique the tree: file / move a document, accept / rename / reject a proposal, say a
    document is closer to one than to another, or that it does not belong in a proposal."""
    critique = service.create_critique(session=session, user=user, body=body)
    session.commit()  # the debounced recluster is scheduled on commit (critiques/filing.py)
    return service.critique_read(session=session, critique=critique)


@router.get("/critiques", response_model=list[CritiqueRead])
def list_critiques(
    user: CurrentUser,
    session: SessionDep,
    include_undone: bool = False,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[CritiqueRead]:
    """The caller's critiques, newest first."""
    rows = service.list_critiques(
        session=session, user=user, include_undone=include_undone, offset=offset, limit=limit
    )
    return [service.critique_read(session=session, critique=c) for c in rows]


@router.delete("/critiques/{critique_id}", response_model=CritiqueUndone, responses=_ERRORS)
def undo_critique(critique_id: RowId, user: CurrentUser, session: SessionDep) -> CritiqueUndone:
    """Undo a critique: its triples go, its filings are reverted where they can be."""
    result = service.undo_critique(session=session, user=user, critique_id=critique_id)
    session.commit()  # the debounced recluster is scheduled on commit (critiques/filing.py)
    return result


@router.get("/triples", response_model=TriplesRead)
def list_triples(user: CurrentUser, session: SessionDep) -> TriplesRead:
    """The triples in force and where each came from."""
    return triples.list_triples(session=session, user=user)


@router.get(
    "/questions/closer",
    response_model=CloserQuestion,
    responses={204: {"description": "nothing to ask"}},
)
def closer_question(
    user: CurrentUser,
    session: SessionDep,
    exclude: Annotated[
        list[Annotated[RowId, Query()]],
        Query(max_length=1000, description="document ids the person skipped: not asked again"),
    ] = [],  # noqa: B006 (FastAPI copies query defaults)
) -> CloserQuestion | Response:
    """Is document a closer to b or to c? Asked where an answer changes the most."""
    question = questions.closer_question(session=session, user=user, exclude=set(exclude))
    return question if question is not None else Response(status_code=204)
