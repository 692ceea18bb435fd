"""The task queue: a task round-trips through the embedded consumer and a worker process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from conftest import unavailable
from foldwise.service.config import Settings
from foldwise.service.queue import EmbeddedWorker, make_huey, register_builtin_tasks

REDIS_URL = os.environ.get("FOLDWISE_TEST_REDIS", "redis://127.0.0.1:6379/15")


def redis_unavailable() -> str | None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis not reachable at {REDIS_URL}: {exc}"
    return None


def test_make_huey_picks_sqlite_or_redis(tmp_path: Path) -> None:
    embedded = make_huey(Settings(data_dir=tmp_path))
    assert type(embedded).__name__ == "SqliteHuey"
    assert (tmp_path / "huey.sqlite3").exists()
    distributed = make_huey(Settings(data_dir=tmp_path, redis_url=REDIS_URL))
    assert type(distributed).__name__ == "RedisHuey"


def test_task_round_trips_through_the_embedded_consumer(tmp_path: Path) -> None:
    queue = make_huey(Settings(data_dir=tmp_path, huey_name="embedded-test"))
    ping = register_builtin_tasks(queue)
    result = ping({"hello": [1, 2]})
    assert result.get() is None  # nothing consumes the queue yet
    worker = EmbeddedWorker(queue)
    worker.start()
    try:
        assert result.get(blocking=True, timeout=30) == {"hello": [1, 2]}
        assert ping("again").get(blocking=True, timeout=30) == "again"
    finally:
        worker.stop()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_task_round_trips_through_a_worker_process(tmp_path: Path, backend: str) -> None:
    if backend == "redis" and (reason := redis_unavailable()):
        unavailable(reason)
    name = f"foldwise-test-{uuid.uuid4().hex[:8]}"
    cfg = Settings(
        data_dir=tmp_path, huey_name=name, redis_url=REDIS_URL if backend == "redis" else ""
    )
    queue = make_huey(cfg)
    ping = register_builtin_tasks(queue)
    result = ping(name)
    assert result.get() is None
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(tmp_path),
        "FOLDWISE_HUEY_NAME": name,
        "FOLDWISE_REDIS_URL": cfg.redis_url,
        "FOLDWISE_TASK_MODULES": "[]",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "foldwise.cli", "worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert result.get(blocking=True, timeout=60) == name
    finally:
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
        if backend == "redis":
            queue.storage.flush_all()


def test_serve_migrates_serves_and_runs_the_embedded_worker(tmp_path: Path) -> None:
    import socket

    import httpx2

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    name = f"foldwise-serve-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(tmp_path),
        "FOLDWISE_HUEY_NAME": name,
        "FOLDWISE_DATABASE_URL": "",
        "FOLDWISE_REDIS_URL": "",
        "FOLDWISE_TASK_MODULES": "[]",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "foldwise.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        queue = make_huey(Settings(data_dir=tmp_path, huey_name=name))
        ping = register_builtin_tasks(queue)
        # The embedded worker consumes the SQLite queue in the data directory.
        assert ping("embedded").get(blocking=True, timeout=60) == "embedded"
        for _ in range(600):  # the worker starts before uvicorn listens
            try:
                health = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
                break
            except httpx2.TransportError:
                time.sleep(0.1)
        assert health.json() == {"status": "ok", "database": "ok"}
        assert (tmp_path / "foldwise.sqlite3").exists()  # migrated on start
    finally:
        server.terminate()
        server.wait(timeout=30)
