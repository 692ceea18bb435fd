"""The body of a recluster job: claim an attempt, load, compute through the seam, commit.

A job moves ``queued -> running -> done | failed | stale`` through conditional ``UPDATE``s
(``WHERE state = ... AND attempts = ...``), so two workers never both run one attempt, and
a worker that was given up for dead (its heartbeat went stale and the reaper requeued the job)
cannot commit a result any more: its ``attempts`` no longer matches.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import timedelta

from sqlalchemy import select, update

from foldwise.service.critiques.models import TreeState
from foldwise.service.critiques.tree_state import tree_state
from foldwise.service.db import utcnow
from foldwise.service.recluster import core_adapter, instant
from foldwise.service.recluster.jobs.models import ReclusterJob, update_owned_attempt
from foldwise.service.recluster.jobs.progress import JobLostError, Progress, Reporter
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.jobs.store import store_version
from foldwise.service.recluster.recluster_input import load_inputs

log = logging.getLogger(__name__)

#: What an attempt starts from: its counters reset (``r_max`` stays until biHAC reports it).
_FIRST_PROGRESS = Progress(phase="load", run=0, merges_done=0, merges_total=0, timings={})


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}"


def _claim(rt: Runtime, job_id: int) -> tuple[int, int] | None:
    """Start an attempt: ``(user_id, attempt)``, or ``None`` if there is nothing to do now."""
    with rt.sessions() as session:
        job = session.get(ReclusterJob, job_id)
        if job is None or job.state != "queued":
            return None
        now = utcnow()
        if job.not_before is not None and job.not_before > now:
            # Debounced and pushed back by newer arrivals: sleep again until then.
            rt.enqueue(job_id, delay=(job.not_before - now).total_seconds())
            return None
        fresh = now - timedelta(seconds=rt.options.heartbeat_timeout_seconds)
        busy = session.scalar(
            select(ReclusterJob.id).where(
                ReclusterJob.user_id == job.user_id,
                ReclusterJob.state == "running",
                ReclusterJob.id != job_id,
                ReclusterJob.heartbeat_at >= fresh,
            )
        )
        if busy is not None:
            # One recluster per user at a time: the second would only be stale on arrival.
            rt.enqueue(job_id, delay=rt.options.heartbeat_seconds)
            return None
        tree_state(session=session, user_id=job.user_id)
        attempt = job.attempts + 1
        result = session.execute(
            update(ReclusterJob)
            .where(
                ReclusterJob.id == job_id,
                ReclusterJob.state == "queued",
                ReclusterJob.attempts == job.attempts,
            )
            .values(
                state="running",
                attempts=attempt,
                started_at=now,
                heartbeat_at=now,
                finished_at=None,
                worker=_worker_name(),
                **_FIRST_PROGRESS.columns(),
            )
        )
        session.commit()
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return job.user_id, attempt


def _finish(
    rt: Runtime,
    job_id: int,
    attempt: int,
    *,
    state: str,
    error: str,
    timings: dict[str, float] | None = None,
) -> bool:
    """End this attempt as ``state`` (``failed`` or ``stale``, also its phase) with ``error``,
    and the phase timings when given; ``False`` if the attempt no longer owns the job."""
    with rt.sessions() as session:
        result = session.execute(
            update_owned_attempt(job_id, attempt).values(
                finished_at=utcnow(),
                heartbeat_at=utcnow(),
                state=state,
                error=error,
                **Progress(phase=state, timings=timings).columns(),
            )
        )
        session.commit()
        return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]


def _commit(
    rt: Runtime,
    job_id: int,
    attempt: int,
    user_id: int,
    base: tuple[int, int],
    method: str,
    out: core_adapter.ReclusterOutput,
    timings: dict[str, float],
) -> str:
    """Store the result as version ``base + 1``: ``"done"``, ``"stale"`` or ``"lost"``.

    One transaction: the compare-and-set on the user's tree state (still the version and the
    critique count the job started from?), the job's own state (still this attempt?), then the
    rows. Either check failing rolls everything back.
    """
    version, seq = base
    with rt.sessions() as session:
        moved = session.execute(
            update(TreeState)
            .where(
                TreeState.user_id == user_id,
                TreeState.version == version,
                TreeState.critique_seq == seq,
            )
            .values(version=version + 1, updated_at=utcnow())
        )
        if moved.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return "stale"
        mine = session.execute(
            update_owned_attempt(job_id, attempt).values(
                state="done",
                phase="done",
                result_version=version + 1,
                finished_at=utcnow(),
                heartbeat_at=utcnow(),
                timings=timings,
            )
        )
        if mine.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            return "lost"
        store_version(session, user_id, job_id, version + 1, method, seq, out)
        session.commit()
    return "done"


def _suggest_uncovered(rt: Runtime, user_id: int, out: core_adapter.ReclusterOutput) -> None:
    """Documents that arrived while the job ran are not in its version: give them the new
    model's instant suggestion (their old one came from the previous model)."""
    try:
        with rt.sessions() as session:
            placed = {p.document_id for p in out.placements}
            texts = instant.unfiled_texts(session, user_id)
            instant.suggest_documents(
                session, user_id, [(d, t) for d, t in texts.items() if d not in placed]
            )
            session.commit()
    except Exception:  # the version is stored; suggestions are a convenience
        log.exception("instant suggestions after the recluster of user %s failed", user_id)


def execute(rt: Runtime, job_id: int) -> None:
    """Run job ``job_id`` if it is due and queued; never raises for job-level failures."""
    claimed = _claim(rt, job_id)
    if claimed is None:
        return
    user_id, attempt = claimed
    report = Reporter(rt, job_id, attempt)
    try:
        while True:
            with rt.sessions() as session:
                state = tree_state(session=session, user_id=user_id)
                base = (state.version, state.critique_seq)
                job = session.get(ReclusterJob, job_id)
                assert job is not None
                method, reruns = job.method, job.reruns
                session.commit()
            report("load", {"base_version": base[0], "base_critique_seq": base[1]})
            with rt.sessions() as session:
                inputs = load_inputs(
                    session=session,
                    user_id=user_id,
                    options=rt.options,
                    # From the user only: an unchanged input gives an unchanged tree.
                    seed=user_id,
                )
            report("exemplars", {"n_documents": len(inputs.doc_ids)})
            out = core_adapter.compute(inputs, method=method, options=rt.options, report=report)
            report("commit", {})
            timings = report.close_phase()
            outcome = _commit(rt, job_id, attempt, user_id, base, method, out, timings)
            if outcome == "done":
                _suggest_uncovered(rt, user_id, out)
            if outcome != "stale":
                return
            if reruns >= rt.options.max_reruns:
                _finish(
                    rt,
                    job_id,
                    attempt,
                    state="stale",
                    timings=timings,
                    error=(
                        "critiques arrived while the job ran, "
                        f"{reruns + 1} time(s); the result was discarded, not stored"
                    ),
                )
                return
            # Critiques (or another tree) arrived while computing: redo it on the new input.
            report("rerun", {"reruns": reruns + 1})
    except JobLostError:
        log.warning("job %s attempt %s was taken over; result dropped", job_id, attempt)
    except Exception as exc:
        log.exception("recluster job %s failed", job_id)
        _finish(rt, job_id, attempt, state="failed", error=f"{exc}"[:2000])
    finally:
        report.stop()
