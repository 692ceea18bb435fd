"""Where recluster jobs run: one queue, one session factory and one set of options per settings.

The app, the worker and the document / critique hooks all find the same :class:`Runtime` for a
``Settings`` object. The global settings use ``foldwise.service.queue.default_huey()`` (so
``foldwise serve`` and ``foldwise worker`` share the tasks registered by
``foldwise.service.tasks``); any other settings (tests, benchmarks) get their own Huey on their
own data directory or Redis name, with the same task code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from huey import crontab
from huey.api import Huey
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from foldwise.service import db
from foldwise.service import queue as queues
from foldwise.service.config import Settings, SettingsDep, settings
from foldwise.service.recluster.settings import ReclusterSettings


@dataclass
class Runtime:
    """The queue, the DB and the options that recluster jobs of one deployment use."""

    settings: Settings
    options: ReclusterSettings
    queue: Huey
    sessions: sessionmaker[Session]
    #: The registered Huey task ``run_job(job_id)`` (``.schedule(args, delay=...)``).
    run_task: Any = None
    reap_task: Any = None
    #: The registered Huey task ``schedule_auto(user_id)``.
    schedule_task: Any = None
    #: Tasks other domains register on this queue (:func:`add_registrar`), by name.
    tasks: dict[str, Any] = field(default_factory=dict)
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


_runtimes: dict[int, Runtime] = {}
_lock = threading.Lock()
#: Functions that register another domain's tasks on a runtime (ocr/tasks.py). Domains above
#: this one cannot be imported from here (pyproject.toml: import layers), so they add these.
_registrars: list[Callable[[Runtime], None]] = []


def add_registrar(register: Callable[[Runtime], None]) -> None:
    """Call ``register(rt)`` on every runtime, those made so far and those made later."""
    with _lock:
        if register in _registrars:
            return
        _registrars.append(register)
        existing = list(_runtimes.values())
    for rt in existing:
        register(rt)


def _register_tasks(rt: Runtime) -> None:
    # Imported here: the runner imports the clustering core, which the API process only needs
    # once a job runs in it.
    from foldwise.service.recluster.jobs import reaper, runner

    @rt.queue.task(name="foldwise.recluster.run_job")
    def run_job(job_id: int) -> None:
        """Run recluster job ``job_id`` (takes the id; opens and closes its own sessions)."""
        runner.execute(rt, job_id)

    @rt.queue.task(name="foldwise.recluster.schedule_auto", retries=5, retry_delay=2)
    def schedule_auto(user_id: int) -> None:
        """Queue or push back the user's debounced automatic recluster."""
        from foldwise.service.recluster.jobs.service import schedule_auto as schedule

        schedule(rt=rt, user_id=user_id)

    @rt.queue.periodic_task(crontab(minute="*"), name="foldwise.recluster.reap")
    def reap() -> None:
        """Every minute: retry or fail jobs whose worker stopped sending heartbeats."""
        reaper.reap(rt)

    @rt.queue.on_startup(name="foldwise.recluster.reap_on_start")
    def reap_on_start() -> None:
        # A worker that starts after a crash finds the crashed worker's jobs at once.
        reaper.reap(rt)

    rt.run_task = run_job
    rt.reap_task = reap
    rt.schedule_task = schedule_auto


def runtime_for(
    cfg: Settings | None = None,
    options: ReclusterSettings | None = None,
    *,
    sessions: sessionmaker[Session] | None = None,
    engine: Engine | None = None,
) -> Runtime:
    """The runtime of ``cfg`` (default: the global settings), created on first use.

    Passing ``options`` (or ``sessions``) replaces them on an existing runtime: tests and the
    benchmark tune debounce and heartbeat times this way. ``engine`` (the app's, or the one a
    hooked session uses) serves a runtime created now, so that an app and its jobs share one
    connection pool instead of opening a second one per settings object.
    """
    cfg = cfg or settings
    with _lock:
        rt = _runtimes.get(id(cfg))
        if rt is None or rt.settings is not cfg:
            if cfg is settings:
                queue, factory = queues.default_huey(), db.default_sessions()
            else:
                queue = queues.make_huey(cfg)
                owned = engine is None
                factory = db.make_sessionmaker(engine or db.make_engine(cfg.sqlalchemy_url), cfg)
                factory.kw["info"]["owns_engine"] = owned
            rt = Runtime(
                settings=cfg,
                options=options or cfg.recluster,
                queue=queue,
                sessions=sessions or factory,
            )
            _register_tasks(rt)
            for register in _registrars:
                register(rt)
            _runtimes[id(cfg)] = rt
        else:
            if options is not None:
                rt.options = options
            if sessions is not None:
                rt.sessions = sessions
        return rt


def get_runtime(request: Request, cfg: SettingsDep) -> Runtime:
    """The runtime of the app serving ``request`` (on the app's engine)."""
    return runtime_for(cfg, engine=request.app.state.engine)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def forget(cfg: Settings) -> None:
    """Drop the runtime of ``cfg`` (tests: release its engine)."""
    with _lock:
        rt = _runtimes.pop(id(cfg), None)
    if rt is not None and cfg is not settings and rt.sessions.kw["info"].get("owns_engine"):
        rt.sessions.kw["bind"].dispose()
