"""Critique endpoints: make, list, undo; the triples in force. (The "which is closer?"
question is asked from the tree: recluster/routes.py.)"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Request

from foldwise.service.critiques import service, triples
from foldwise.service.critiques.schemas import (
    CritiqueCreate,
    CritiqueRead,
    CritiqueUndone,
    TriplesRead,
)
from foldwise.service.db import SessionDep
from foldwise.service.inputs import Offset, RowId
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api", tags=["critiques"])


async def _find_proposal(request: Request) -> service.FindProposal:
    """The tree's proposal lookup, which the app's composition root puts in its state.
    Async because it does no I/O: FastAPI runs a sync dependency on the thread pool."""
    found: service.FindProposal = request.app.state.find_proposal
    return found


FindProposalDep = Annotated[service.FindProposal, Depends(_find_proposal)]

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
    find_proposal: FindProposalDep,
) -> CritiqueRead:
    """Critique the tree: file / move a document, accept / rename / reject a proposal, say a
    document is closer to one than to another, or that it does not belong in a proposal."""
    critique = service.create_critique(
        session=session, user=user, body=body, find_proposal=find_proposal
    )
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
