"""The body of a recluster job, and the reaper of jobs whose worker died.

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
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from foldwise.service.critiques.models import TreeState
from foldwise.service.critiques.tree_state import tree_state
from foldwise.service.db import utcnow
from foldwise.service.recluster import core_adapter, instant
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.jobs.store import store_version

log = logging.getLogger(__name__)

#: Progress writes are throttled to one per this many seconds (phase changes always write).
PROGRESS_INTERVAL = 0.25


class JobLostError(Exception):
    """This attempt no longer owns the job (the reaper requeued or failed it)."""


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}"


class _Reporter:
    """Writes progress and heartbeats of one attempt; raises :class:`JobLostError` once disowned."""

    def __init__(self, rt: Runtime, job_id: int, attempt: int) -> None:
        self.rt, self.job_id, self.attempt = rt, job_id, attempt
        #: Values of throttled reports, written with the next write (so a phase that ends
        #: within the throttle interval still leaves its last run / merge count).
        self.pending: dict[str, Any] = {}
        self.phase = ""
        self.last = 0.0
        self.lost = False
        self.timings: dict[str, float] = {}
        self.phase_started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{job_id}", daemon=True)
        self._thread.start()

    def _write(self, values: dict[str, Any]) -> None:
        with self.rt.sessions() as session:
            result = session.execute(
                update(ReclusterJob)
                .where(
                    ReclusterJob.id == self.job_id,
                    ReclusterJob.state == "running",
                    ReclusterJob.attempts == self.attempt,
                )
                .values(heartbeat_at=utcnow(), **values)
            )
            session.commit()
        if result.rowcount != 1:  # type: ignore[attr-defined]
            self.lost = True

    def _beat(self) -> None:
        # A thread, so that long numeric work without progress callbacks still shows life;
        # numpy / numba release the GIL in their kernels.
        while not self._stop.wait(self.rt.options.heartbeat_seconds):
            try:
                self._write({})
            except Exception:  # a busy database must not kill the heartbeat
                log.exception("heartbeat of job %s failed", self.job_id)

    def __call__(self, phase: str, values: dict[str, Any]) -> None:
        now = time.monotonic()
        if phase != self.phase:
            if self.phase:
                self.timings[self.phase] = round(
                    self.timings.get(self.phase, 0.0) + now - self.phase_started, 3
                )
            self.phase, self.phase_started = phase, now
            values = {**values, "phase": phase, "timings": dict(self.timings)}
        elif now - self.last < PROGRESS_INTERVAL:
            self.pending.update(values)
            if self.rt.progress_hook:
                self.rt.progress_hook()
            return
        self.last = now
        values, self.pending = {**self.pending, **values}, {}
        self._write(values)
        if self.rt.progress_hook:
            self.rt.progress_hook()
        if self.lost:
            raise JobLostError(f"job {self.job_id} attempt {self.attempt} was taken over")

    def close_phase(self) -> dict[str, float]:
        if self.phase:
            self.timings[self.phase] = round(
                self.timings.get(self.phase, 0.0) + time.monotonic() - self.phase_started, 3
            )
            self.phase = ""
        return dict(self.timings)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


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
                phase="load",
                run=0,
                merges_done=0,
                merges_total=0,
                timings={},
            )
        )
        session.commit()
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return job.user_id, attempt


def _finish(rt: Runtime, job_id: int, attempt: int, **values: Any) -> bool:
    with rt.sessions() as session:
        result = session.execute(
            update(ReclusterJob)
            .where(
                ReclusterJob.id == job_id,
                ReclusterJob.state == "running",
                ReclusterJob.attempts == attempt,
            )
            .values(finished_at=utcnow(), heartbeat_at=utcnow(), **values)
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
            update(ReclusterJob)
            .where(
                ReclusterJob.id == job_id,
                ReclusterJob.state == "running",
                ReclusterJob.attempts == attempt,
            )
            .values(
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
    report = _Reporter(rt, job_id, attempt)
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
                inputs = core_adapter.load_inputs(
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
                    phase="stale",
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
        _finish(rt, job_id, attempt, state="failed", phase="failed", error=f"{exc}"[:2000])
    finally:
        report.stop()
