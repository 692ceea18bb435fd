"""Recluster jobs (keyword-only functions; callers commit unless told).

The queue is told about a job only after the job row is committed, so a worker never looks
for a row that is not there yet.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.service.db import utcnow
from foldwise.service.errors import InvalidInputError, NotFoundError
from foldwise.service.recluster.jobs.models import FINAL_STATES, ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.jobs.schemas import JobProgress, JobRead
from foldwise.service.users.models import User


def check_method(method: str | None, rt: Runtime) -> str:
    """The method to use; ``InvalidInputError`` names the choices for an unknown one."""
    from foldwise.service.recluster.core_adapter import available_methods

    chosen = method or rt.options.method
    choices = available_methods()
    if chosen not in choices:
        raise InvalidInputError(f"unknown method {chosen!r}; choose one of {', '.join(choices)}")
    return chosen


def request_recluster(
    *, session: Session, rt: Runtime, user: User, method: str | None
) -> ReclusterJob:
    """A job that starts now (``POST /api/recluster``); commits and enqueues it.

    A queued automatic job of the user is taken over (started now, with this method) instead of
    adding a second job for the same input.
    """
    chosen = check_method(method, rt)
    job = session.scalar(
        select(ReclusterJob)
        .where(ReclusterJob.user_id == user.id, ReclusterJob.state == "queued")
        .order_by(ReclusterJob.id.desc())
        .limit(1)
    )
    if job is None:
        job = ReclusterJob(user_id=user.id, method=chosen, trigger="request")
        session.add(job)
    else:
        job.method, job.trigger = chosen, "request"
    job.not_before = None
    job.heartbeat_at = utcnow()  # for a queued job: when it was last put on the queue
    session.commit()
    rt.enqueue(job.id)
    return job


def schedule_auto(*, rt: Runtime, user_id: int) -> int | None:
    """Debounced automatic recluster after new unfiled documents or critiques.

    The user's queued job (if any) has its start pushed to now + debounce; otherwise a new
    ``auto`` job is queued with that delay. The task re-checks ``not_before`` when it wakes
    and sleeps again if it was pushed. Opens its own session; returns the job id.
    """
    if not rt.options.auto:
        return None
    delay = rt.options.debounce_seconds
    with rt.sessions() as session:
        job = session.scalar(
            select(ReclusterJob)
            .where(ReclusterJob.user_id == user_id, ReclusterJob.state == "queued")
            .order_by(ReclusterJob.id.desc())
            .limit(1)
        )
        if job is not None:
            if job.trigger == "auto":
                job.not_before = utcnow() + timedelta(seconds=delay)
            session.commit()
            return job.id
        job = ReclusterJob(
            user_id=user_id,
            method=rt.options.method,
            trigger="auto",
            not_before=utcnow() + timedelta(seconds=delay),
            heartbeat_at=utcnow(),
        )
        session.add(job)
        session.commit()
        job_id = job.id
    rt.enqueue(job_id, delay=delay)
    return job_id


def get_job(*, session: Session, user: User, job_id: int) -> ReclusterJob:
    """The user's job; ``NotFoundError`` for unknown ids and other users' jobs."""
    job = session.get(ReclusterJob, job_id)
    if job is None or job.user_id != user.id:
        raise NotFoundError(f"job {job_id} not found")
    return job


def list_jobs(
    *, session: Session, user: User, offset: int = 0, limit: int = 50
) -> tuple[list[ReclusterJob], int]:
    """A page of the user's jobs, newest first, and their total."""
    where = ReclusterJob.user_id == user.id
    total = session.scalar(select(func.count()).select_from(ReclusterJob).where(where)) or 0
    rows = session.scalars(
        select(ReclusterJob)
        .where(where)
        .order_by(ReclusterJob.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list(rows), total


def is_final(job: ReclusterJob) -> bool:
    """Whether the job will not change any more."""
    return job.state in FINAL_STATES


def job_read(job: ReclusterJob) -> JobRead:
    """The API view of a job row."""
    return JobRead(
        id=job.id,
        state=job.state,  # type: ignore[arg-type]
        trigger=job.trigger,
        method=job.method,
        progress=JobProgress(
            phase=job.phase,
            run=job.run,
            r_max=job.r_max,
            merges_done=job.merges_done,
            merges_total=job.merges_total,
        ),
        n_documents=job.n_documents,
        base_version=job.base_version,
        base_critique_seq=job.base_critique_seq,
        result_version=job.result_version,
        attempts=job.attempts,
        reruns=job.reruns,
        worker=job.worker,
        error=job.error,
        created_at=job.created_at,
        not_before=job.not_before,
        started_at=job.started_at,
        finished_at=job.finished_at,
        heartbeat_at=job.heartbeat_at,
        timings=dict(job.timings or {}),
    )
