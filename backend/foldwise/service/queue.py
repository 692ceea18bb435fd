"""The task queue: Huey on SQLite (embedded default) or on Redis, with the same task code.

A task module (listed in ``settings.task_modules``) registers its tasks on the queue of the
runtime it is given (``service/composition.py``)::

    def register(rt: Runtime) -> None:
        @rt.queue.task(name="myapp.recluster")
        def recluster(user_id: int) -> None: ...

Tasks take ids, not objects, and open, commit and close their own DB session.
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Any

from huey import RedisHuey, SqliteHuey
from huey.api import Huey
from huey.consumer import Consumer

from foldwise.service.config import Settings
from foldwise.service.memory import limit_heaps

log = logging.getLogger(__name__)


def make_huey(cfg: Settings) -> Huey:
    """A Huey instance for ``cfg``: ``RedisHuey`` when a Redis URL is set, else ``SqliteHuey``."""
    if cfg.redis_url:
        return RedisHuey(cfg.huey_name, url=cfg.redis_url)
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteHuey(cfg.huey_name, filename=str(cfg.data_dir / "huey.sqlite3"))


def register_builtin_tasks(queue: Huey) -> Any:
    """Register the service's own tasks on ``queue``; returns the ``ping`` task."""

    @queue.task(name="foldwise.ping")
    def ping(value: Any) -> Any:
        """Echo ``value``: proves that a worker consumes this queue."""
        return value

    return ping


def load_task_modules(cfg: Settings) -> list[str]:
    """Import the modules that define tasks; returns those that were found.

    A module that does not exist yet is skipped (the default names the module the job
    system will provide); an error *inside* a module is raised.
    """
    loaded = []
    for name in cfg.task_modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            log.info("task module %s not found; skipped", name)
            continue
        loaded.append(name)
    return loaded


class EmbeddedConsumer(Consumer):
    """A Huey consumer that runs in threads of ``foldwise serve``'s main process (the API
    process, or with ``--processes N`` the supervisor of the N API processes).

    The stock consumer installs signal handlers, which only the main thread may do and
    which would fight uvicorn's; here the host process owns the signals.
    """

    def _set_signal_handlers(self) -> None:
        pass


class EmbeddedWorker:
    """Start and stop an :class:`EmbeddedConsumer` with worker threads."""

    def __init__(self, queue: Huey, workers: int = 1) -> None:
        self.consumer = EmbeddedConsumer(
            queue,
            workers=workers,
            worker_type="thread",
            periodic=True,
            initial_delay=0.05,
            max_delay=1.0,
            check_worker_health=False,
        )
        self._lock = threading.Lock()
        self.running = False

    def start(self) -> None:
        """Start the scheduler and worker threads."""
        with self._lock:
            if not self.running:
                self.consumer.start()
                self.running = True

    def stop(self) -> None:
        """Stop after the running tasks finish."""
        with self._lock:
            if self.running:
                self.consumer.stop(graceful=True)
                self.running = False


def run_worker(queue: Huey, workers: int = 1) -> None:
    """Run a consumer process in the foreground (``foldwise worker``) until interrupted."""
    # Before any thread starts: a dedicated worker's reclusters are its memory.
    limit_heaps()
    Consumer(queue, workers=workers, worker_type="thread", max_delay=2.0).run()
