"""Where jobs run: one deployment's settings, engine and session factory (with the domains'
session listeners), queue with its tasks, and recluster options.

The composition root (``service/composition.py``) builds a :class:`Runtime` once per process
role, for the app and for the worker, and passes it down: to the app's routes (``RuntimeDep``),
to the tasks registered on its queue, to the session listeners installed on its session
factory. Nothing is looked up by settings, and nothing is built at import
(docs/architecture.md sec. 2 and 9).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from huey.api import Huey
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from foldwise.service.config import Settings
from foldwise.service.recluster.settings import ReclusterSettings


@dataclass
class Runtime:
    """The queue, the DB and the options that the jobs of one deployment use."""

    settings: Settings
    options: ReclusterSettings
    engine: Engine
    #: Sessions on ``engine`` that know ``settings``, with the domains' listeners installed.
    sessions: sessionmaker[Session]
    queue: Huey
    #: The registered Huey task ``run_job(job_id)`` (``.schedule(args, delay=...)``).
    run_task: Any = None
    reap_task: Any = None
    #: The registered Huey task ``schedule_auto(user_id)``.
    schedule_task: Any = None
    #: Tasks other domains register on this queue (``ocr/tasks.py``), by name.
    tasks: dict[str, Any] = field(default_factory=dict)
    #: The modules of ``settings.task_modules`` whose tasks this runtime registered.
    task_modules: list[str] = field(default_factory=list)
    #: Set by tests to slow the clustering down (fault tests); called at each progress report.
    progress_hook: Callable[[], None] | None = field(default=None, repr=False)
    #: When this process last asked for each user's automatic recluster (monotonic seconds).
    _last_requests: dict[int, float] = field(default_factory=dict, repr=False)
    _requests_mutex: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enqueue(self, job_id: int, delay: float = 0.0) -> None:
        """Put ``run_job(job_id)`` on the queue, to start after ``delay`` seconds."""
        if delay > 0:
            self.run_task.schedule((job_id,), delay=delay)
        else:
            self.run_task(job_id)

    def request_auto(self, user_id: int) -> None:
        """Ask the worker to schedule a debounced automatic recluster for ``user_id``.

        Called after a commit, from a request that still holds its database connection:
        it only puts a small task on the queue (no second connection from the request's
        pool, which under load made requests wait out the pool timeout). The task retries
        when it fails, so a schedule is not silently dropped.

        Requests for one user within a tenth of the debounce (at most 1 s) of the last one
        are coalesced: that one's job starts a whole debounce after it, so it already sees
        their documents. Under 50 concurrent writers this halves the queue writes that
        were a fifth of the ingestion time.
        """
        if not self.options.auto:
            return
        window = min(1.0, self.options.debounce_seconds / 10)
        now = time.monotonic()
        with self._requests_mutex:
            last = self._last_requests.get(user_id)
            if last is not None and now - last < window:
                return
            self._last_requests[user_id] = now
        try:
            self.schedule_task(user_id)
        except Exception:
            with self._requests_mutex:  # not asked after all: the next request must ask
                self._last_requests.pop(user_id, None)
            raise

    def close(self) -> None:
        """Release the engine's connections (the owner of the runtime calls it at the end)."""
        self.engine.dispose()


async def get_runtime(request: Request) -> Runtime:
    """The runtime of the app serving ``request`` (built by its composition root).
    Async because it does no I/O: FastAPI runs a sync dependency on the thread pool."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
