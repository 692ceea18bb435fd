"""Where a running job is, typed: :class:`Progress` holds the job's progress columns, and
:meth:`Progress.columns` is the one way they are written. :class:`Reporter` takes an
attempt's reports (the seam's ``core_adapter.Progress`` callbacks and the runner's own),
throttles them, and writes them with a heartbeat (docs/recluster.md, "Jobs and the queue").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from sqlalchemy.orm import Session

from foldwise.service.db import utcnow
from foldwise.service.recluster.jobs.models import update_owned_attempt
from foldwise.service.recluster.jobs.runtime import Runtime

log = logging.getLogger(__name__)

#: Progress writes are throttled to one per this many seconds (phase changes always write).
PROGRESS_INTERVAL = 0.25


@dataclass(frozen=True)
class Progress:
    """Progress of one attempt of a job, as the columns of its row (``ReclusterJob``).

    A field left ``None`` was not reported and is not written: a report of the biHAC run
    leaves the merge counts as they are.
    """

    #: ``load``, ``exemplars``, ``weights``, ``cluster``, ``open_set``, ``placement``,
    #: ``extended_tree``, ``commit``, ...
    phase: str | None = None
    #: biHAC run ``run`` of ``r_max``.
    run: int | None = None
    r_max: int | None = None
    #: iHAC merges done of the merges to do.
    merges_done: int | None = None
    merges_total: int | None = None
    #: Documents in the recluster (exemplars and unfiled documents).
    n_documents: int | None = None
    #: The tree version and critique count the attempt started from.
    base_version: int | None = None
    base_critique_seq: int | None = None
    #: Reruns after a stale result.
    reruns: int | None = None
    #: Seconds per finished phase of this attempt.
    timings: dict[str, float] | None = None

    @classmethod
    def counted(cls, counters: Mapping[str, int]) -> Progress:
        """A report of counters by field name (the seam's callbacks, the runner's reports);
        ``TypeError`` for a name that is no counter, rather than a column silently lost."""
        unknown = set(counters) - _COUNTERS
        if unknown:
            raise TypeError(f"not a progress counter: {', '.join(sorted(unknown))}")
        return cls(
            run=counters.get("run"),
            r_max=counters.get("r_max"),
            merges_done=counters.get("merges_done"),
            merges_total=counters.get("merges_total"),
            n_documents=counters.get("n_documents"),
            base_version=counters.get("base_version"),
            base_critique_seq=counters.get("base_critique_seq"),
            reruns=counters.get("reruns"),
        )

    def then(self, newer: Progress) -> Progress:
        """This progress with what ``newer`` reported on top."""
        return replace(self, **newer.columns())

    def columns(self) -> dict[str, Any]:
        """The reported fields by column name: what an ``UPDATE`` of the job writes."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


_COUNTERS = frozenset(
    {
        "run",
        "r_max",
        "merges_done",
        "merges_total",
        "n_documents",
        "base_version",
        "base_critique_seq",
        "reruns",
    }
)


def write_progress(session: Session, *, job_id: int, attempt: int, progress: Progress) -> bool:
    """Write ``progress`` and a heartbeat to job ``job_id`` if ``attempt`` still runs it;
    whether it does. The caller commits."""
    result = session.execute(
        update_owned_attempt(job_id, attempt).values(heartbeat_at=utcnow(), **progress.columns())
    )
    return result.rowcount == 1  # type: ignore[attr-defined,no-any-return]


class JobLostError(Exception):
    """This attempt no longer owns the job (the reaper requeued or failed it)."""


class Reporter:
    """Writes progress and heartbeats of one attempt; raises :class:`JobLostError` once disowned.

    Called as ``report(phase, counters)``, the seam's progress callback
    (``core_adapter.Progress``): counters are :class:`Progress` fields by name.
    """

    def __init__(self, rt: Runtime, job_id: int, attempt: int) -> None:
        self.rt, self.job_id, self.attempt = rt, job_id, attempt
        #: Throttled reports, written with the next write (so a phase that ends within the
        #: throttle interval still leaves its last run / merge count).
        self.pending = Progress()
        self.phase = ""
        self.last = 0.0
        self.lost = False
        self.timings: dict[str, float] = {}
        self.phase_started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{job_id}", daemon=True)
        self._thread.start()

    def _write(self, progress: Progress) -> None:
        with self.rt.sessions() as session:
            owned = write_progress(
                session, job_id=self.job_id, attempt=self.attempt, progress=progress
            )
            session.commit()
        if not owned:
            self.lost = True

    def _beat(self) -> None:
        # A thread, so that long numeric work without progress callbacks still shows life;
        # numpy / numba release the GIL in their kernels.
        while not self._stop.wait(self.rt.options.heartbeat_seconds):
            try:
                self._write(Progress())
            except Exception:  # a busy database must not kill the heartbeat
                log.exception("heartbeat of job %s failed", self.job_id)

    def __call__(self, phase: str, counters: dict[str, int]) -> None:
        report = Progress.counted(counters)
        now = time.monotonic()
        if phase != self.phase:
            if self.phase:
                self.timings[self.phase] = round(
                    self.timings.get(self.phase, 0.0) + now - self.phase_started, 3
                )
            self.phase, self.phase_started = phase, now
            report = replace(report, phase=phase, timings=dict(self.timings))
        elif now - self.last < PROGRESS_INTERVAL:
            self.pending = self.pending.then(report)
            if self.rt.progress_hook:
                self.rt.progress_hook()
            return
        self.last = now
        progress, self.pending = self.pending.then(report), Progress()
        self._write(progress)
        if self.rt.progress_hook:
            self.rt.progress_hook()
        if self.lost:
            raise JobLostError(f"job {self.job_id} attempt {self.attempt} was taken over")

    def close_phase(self) -> dict[str, float]:
        """End the current phase: the seconds per phase of this attempt."""
        if self.phase:
            self.timings[self.phase] = round(
                self.timings.get(self.phase, 0.0) + time.monotonic() - self.phase_started, 3
            )
            self.phase = ""
        return dict(self.timings)

    def stop(self) -> None:
        """Stop the heartbeat thread."""
        self._stop.set()
        self._thread.join(timeout=5)
