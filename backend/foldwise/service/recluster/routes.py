"""Recluster endpoints: start a job, read jobs (and follow one as SSE), the extended tree and
its versions, and the "which is closer?" question asked from the newest version."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from foldwise.service.critiques.schemas import CloserQuestion
from foldwise.service.db import SessionDep
from foldwise.service.errors import NotFoundError
from foldwise.service.inputs import Offset, RowId
from foldwise.service.recluster import questions
from foldwise.service.recluster.jobs import reaper
from foldwise.service.recluster.jobs import service as jobs
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import RuntimeDep
from foldwise.service.recluster.jobs.schemas import JobPage, JobRead, ReclusterRequest
from foldwise.service.recluster.tree import service as tree
from foldwise.service.recluster.tree.schemas import ExtendedTree, TreeVersionRead
from foldwise.service.users.auth import CurrentUser

router = APIRouter(prefix="/api", tags=["recluster"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown job (or another user's)"},
    422: {"description": "invalid input, e.g. an unknown method"},
}
#: How often the event stream looks at the job row.
EVENT_POLL_SECONDS = 0.5
#: Longest silence on an event stream before a comment line is sent.
KEEPALIVE_SECONDS = 15.0


@router.post("/recluster", response_model=JobRead, status_code=202, responses=_ERRORS)
def start_recluster(
    user: CurrentUser,
    session: SessionDep,
    rt: RuntimeDep,
    body: Annotated[ReclusterRequest | None, Body()] = None,
) -> JobRead:
    """Start a recluster now; answers the queued job (follow it at /api/jobs/{id}/events)."""
    job = jobs.request_recluster(
        session=session, rt=rt, user=user, method=body.method if body else None
    )
    return jobs.job_read(job)


@router.get("/jobs", response_model=JobPage)
def list_jobs(
    user: CurrentUser,
    session: SessionDep,
    rt: RuntimeDep,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> JobPage:
    """The caller's jobs, newest first (jobs of dead workers are requeued or failed first)."""
    reaper.reap(rt, user.id)
    session.expire_all()
    rows, total = jobs.list_jobs(session=session, user=user, offset=offset, limit=limit)
    return JobPage(items=[jobs.job_read(j) for j in rows], total=total)


@router.get("/jobs/{job_id}", response_model=JobRead, responses=_ERRORS)
def get_job(job_id: RowId, user: CurrentUser, session: SessionDep, rt: RuntimeDep) -> JobRead:
    """One job of the caller."""
    jobs.get_job(session=session, user=user, job_id=job_id)
    reaper.reap(rt, user.id)
    session.expire_all()
    return jobs.job_read(jobs.get_job(session=session, user=user, job_id=job_id))


@router.get(
    "/jobs/{job_id}/events",
    responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}},
    response_class=StreamingResponse,
)
async def job_events(
    job_id: RowId, request: Request, user: CurrentUser, session: SessionDep, rt: RuntimeDep
) -> StreamingResponse:
    """Server-sent events: ``progress`` whenever the job changes, then ``end`` when it is final."""
    user_id = user.id

    def snapshot() -> JobRead:
        reaper.reap(rt, user_id)
        with rt.sessions() as own:
            job = own.get(ReclusterJob, job_id)
            if job is None or job.user_id != user_id:
                raise NotFoundError(f"job {job_id} not found")
            return jobs.job_read(job)

    first = await run_in_threadpool(snapshot)  # 404 before the stream starts

    async def stream() -> AsyncIterator[str]:
        current, last, quiet = first, "", 0.0
        while True:
            data = current.model_dump_json()
            # A heartbeat alone is no news: only a change of anything else makes an event.
            key = current.model_dump_json(exclude={"heartbeat_at"})
            if key != last:
                yield f"event: progress\ndata: {data}\n\n"
                last, quiet = key, 0.0
            elif quiet >= KEEPALIVE_SECONDS:
                # A comment line keeps proxies from closing a stream during a long phase.
                yield ": keep-alive\n\n"
                quiet = 0.0
            if current.state in ("done", "failed", "stale"):
                yield f"event: end\ndata: {data}\n\n"
                return
            if await request.is_disconnected():
                return
            await asyncio.sleep(EVENT_POLL_SECONDS)
            quiet += EVENT_POLL_SECONDS
            current = await run_in_threadpool(snapshot)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/tree/extended", response_model=ExtendedTree)
def extended_tree(user: CurrentUser, session: SessionDep) -> ExtendedTree:
    """The person's folders, proposed folders and where each unfiled document goes."""
    result = tree.extended_tree(session=session, user=user)
    session.commit()  # the tree state row may have been created
    return result


@router.get("/tree/versions", response_model=list[TreeVersionRead])
def tree_versions(user: CurrentUser, session: SessionDep) -> list[TreeVersionRead]:
    """The caller's tree versions, newest first."""
    return tree.list_versions(session=session, user=user)


#: The question leads to a critique: listed with the critiques in the API description.
questions_router = APIRouter(prefix="/api", tags=["critiques"])


@questions_router.get(
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
