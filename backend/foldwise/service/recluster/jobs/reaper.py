"""The reaper: jobs whose worker died are retried, or failed after ``max_attempts``.

A running job writes a heartbeat every ``heartbeat_seconds``; one whose heartbeat is older
than ``heartbeat_timeout_seconds`` lost its worker (killed, machine gone). The reaper runs
when a worker starts, every minute in every worker (a periodic task), and whenever the job
list or a job is read, so a dead job never stays ``running``. Its updates are conditional on
the row it read (state, attempt, heartbeat), so concurrent reapers act once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from foldwise.service.db import utcnow
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime


def reap(rt: Runtime, user_id: int | None = None) -> list[int]:
    """Requeue (or fail, after ``max_attempts``) running jobs with a stale heartbeat, and put
    back on the queue queued jobs whose queue message may have died with a worker.

    Runs on worker start, every minute in the worker, and when jobs are read. Returns the ids
    put back on the queue.
    """
    now = utcnow()
    cutoff = now - timedelta(seconds=rt.options.heartbeat_timeout_seconds)
    requeue: list[int] = []
    with rt.sessions() as session:
        where = [ReclusterJob.state.in_(("running", "queued")), ReclusterJob.heartbeat_at < cutoff]
        if user_id is not None:
            where.append(ReclusterJob.user_id == user_id)
        for job in session.scalars(select(ReclusterJob).where(*where)).all():
            same = (
                ReclusterJob.id == job.id,
                ReclusterJob.state == job.state,
                ReclusterJob.attempts == job.attempts,
                ReclusterJob.heartbeat_at == job.heartbeat_at,
            )
            if job.state == "queued":
                if job.not_before is not None and job.not_before > cutoff:
                    continue
                values: dict[str, Any] = {"heartbeat_at": now}
            elif job.attempts < rt.options.max_attempts:
                values = {
                    "state": "queued",
                    "phase": "queued",
                    "heartbeat_at": now,
                    "not_before": None,
                    "error": (
                        f"worker {job.worker} stopped during attempt {job.attempts} "
                        f"(last heartbeat {job.heartbeat_at:%Y-%m-%dT%H:%M:%SZ}); retried"
                    ),
                }
            else:
                values = {
                    "state": "failed",
                    "phase": "failed",
                    "finished_at": now,
                    "error": (
                        f"worker {job.worker} stopped during attempt {job.attempts} of "
                        f"{rt.options.max_attempts} (last heartbeat "
                        f"{job.heartbeat_at:%Y-%m-%dT%H:%M:%SZ}); gave up"
                    ),
                }
            result = session.execute(update(ReclusterJob).where(*same).values(**values))
            if result.rowcount == 1 and values.get("state", "queued") == "queued":  # type: ignore[attr-defined]
                requeue.append(job.id)
        session.commit()
    for job_id in requeue:
        rt.enqueue(job_id)
    return requeue
