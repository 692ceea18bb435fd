"""The composition root: the one place that builds a runtime from settings, once per process
role, and passes it down (docs/architecture.md sec. 2, "One composition root").

:func:`app_runtime` is the runtime of the app (``create_app``) and of the commands that
store documents (``foldwise import``, ``foldwise watch``); :func:`worker_runtime` that of
``foldwise worker``. Both make the engine and the session factory, install the domains'
session listeners on that factory (new unfiled documents schedule a recluster and get an
instant suggestion, new scans are queued for OCR), and make the queue with its ``ping``
task. Nothing of this happens at import, and nothing is found again by settings: whoever
needs the runtime is given it.
"""

from __future__ import annotations

import importlib

from foldwise.service import db, tasks
from foldwise.service.config import Settings
from foldwise.service.ocr import hooks as ocr_hooks
from foldwise.service.queue import load_task_modules, make_huey, register_builtin_tasks
from foldwise.service.recluster import hooks as recluster_hooks
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.settings import ReclusterSettings

PING = "foldwise.ping"


def _runtime(cfg: Settings, options: ReclusterSettings | None) -> Runtime:
    engine = db.make_engine(cfg.sqlalchemy_url)
    queue = make_huey(cfg)
    rt = Runtime(
        settings=cfg,
        options=options or cfg.recluster,
        engine=engine,
        sessions=db.make_sessionmaker(engine, cfg),
        queue=queue,
    )
    rt.tasks[PING] = register_builtin_tasks(queue)
    recluster_hooks.install(rt)
    ocr_hooks.install(rt)
    return rt


def app_runtime(cfg: Settings, options: ReclusterSettings | None = None) -> Runtime:
    """The runtime of the app and of the commands that store documents: also the service's
    own tasks (recluster jobs, OCR), which they put on the queue. ``options`` replace
    ``cfg.recluster`` (tests and benchmarks tune debounce and heartbeat times this way)."""
    rt = _runtime(cfg, options)
    tasks.register(rt)
    return rt


def worker_runtime(cfg: Settings) -> Runtime:
    """The runtime of ``foldwise worker``: the tasks of ``cfg.task_modules``
    (:func:`add_worker_tasks`)."""
    rt = _runtime(cfg, None)
    add_worker_tasks(rt)
    return rt


def add_worker_tasks(rt: Runtime) -> list[str]:
    """Register the tasks of ``rt.settings.task_modules`` on ``rt`` (each module's
    ``register(runtime)``; a module without one registers what it registers on import), as
    ``foldwise serve`` does for its embedded worker; the module names, also kept as
    ``rt.task_modules``."""
    loaded = load_task_modules(rt.settings)
    for name in loaded:
        register = getattr(importlib.import_module(name), "register", None)
        if callable(register):
            register(rt)
    rt.task_modules = loaded
    return loaded
