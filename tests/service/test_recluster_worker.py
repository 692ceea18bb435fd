"""Recluster jobs on separate ``foldwise worker`` processes (Redis queue, shared database),
and what happens when a worker is killed in the middle of a job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from conftest import unavailable
from foldwise.service.app import create_app
from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.recluster.jobs.runtime import Runtime

from .conftest import make_settings
from .recluster_support import fast_options, seed_python_docs, seed_small, wait_job

REDIS_URL = os.environ.get("FOLDWISE_TEST_REDIS", "redis://127.0.0.1:6379/15")
ASYNCIO = (
    "the-python-standard-library/networking-and-interprocess-communication/"
    "mod-asyncio-asynchronous-i-o"
)
pytestmark = pytest.mark.redis


def _redis_unavailable() -> str | None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis not reachable at {REDIS_URL}: {exc}"
    return None


@pytest.fixture
def redis_settings(sqlite_settings: Settings) -> Iterator[Settings]:
    """A SQLite database file shared with the worker processes, and a Redis queue of its own
    name (jobs on PostgreSQL are covered by test_recluster_jobs on the embedded consumer)."""
    if reason := _redis_unavailable():
        unavailable(reason)
    cfg = make_settings(
        sqlite_settings.data_dir,
        sqlite_settings.database_url,
        redis_url=REDIS_URL,
        huey_name=f"foldwise-test-{uuid.uuid4().hex[:8]}",
    )
    yield cfg


@contextmanager
def _runtime(cfg: Settings, **options: Any) -> Iterator[Runtime]:
    """The runtime of this process's app on ``cfg`` with :func:`fast_options`."""
    rt = app_runtime(cfg, fast_options(**options))
    try:
        yield rt
    finally:
        rt.close()


def _worker_env(cfg: Settings, **options: Any) -> dict[str, str]:
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(cfg.data_dir),
        "FOLDWISE_DATABASE_URL": cfg.sqlalchemy_url,
        "FOLDWISE_REDIS_URL": cfg.redis_url,
        "FOLDWISE_HUEY_NAME": cfg.huey_name,
        "FOLDWISE_ENVIRONMENT": "test",
    }
    env.update({f"FOLDWISE_RECLUSTER_{k.upper()}": str(v) for k, v in options.items()})
    return env


def _start_worker(cfg: Settings, log: Path, **options: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "foldwise.cli", "worker"],
        env=_worker_env(cfg, **options),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


FAST = {"r_max": 4, "r_ni": 2, "heartbeat_seconds": 0.2, "heartbeat_timeout_seconds": 3}


def test_jobs_run_on_separate_worker_processes(redis_settings: Settings, tmp_path: Path) -> None:
    with _runtime(redis_settings) as rt:
        _separate_workers(rt, redis_settings, tmp_path)
    # The work happened in the worker processes: this process never consumed the queue.
    logs = "".join((tmp_path / f"w{i}.log").read_text() for i in range(2))
    assert "worker on redis" in logs


def _separate_workers(rt: Runtime, redis_settings: Settings, tmp_path: Path) -> None:
    alice = seed_small(rt, "alice")
    bob = seed_small(rt, "bob", seed=1)
    workers = [_start_worker(redis_settings, tmp_path / f"w{i}.log", **FAST) for i in range(2)]
    try:
        with TestClient(create_app(runtime=rt)) as client:
            ids = [
                client.post("/api/recluster", headers=u["headers"]).json()["id"]
                for u in (alice, bob)
            ]
            jobs = [
                wait_job(client, u["headers"], i) for u, i in zip((alice, bob), ids, strict=True)
            ]
            for job in jobs:
                assert job["state"] == "done" and job["result_version"] == 1, job
                # Computed in a worker process, not in this one.
                assert job["worker"].split(":")[1] in {str(w.pid) for w in workers}
            tree = client.get("/api/tree/extended", headers=alice["headers"]).json()
            assert tree["version"] == 1 and tree["placements"]
    finally:
        for w in workers:
            _stop(w)


def _wait_for(client: TestClient, headers: dict[str, str], job_id: int, ok: Any) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job_id}", headers=headers).json()
        if ok(job):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached the expected state: {job}")


@pytest.mark.parametrize("max_attempts", [2, 1])
def test_killed_worker_job_is_retried_or_failed_and_no_critique_is_lost(
    redis_settings: Settings, tmp_path: Path, max_attempts: int
) -> None:
    options = {**FAST, "r_max": 50, "r_ni": 50, "max_attempts": max_attempts}
    with _runtime(redis_settings, **options) as rt:
        _killed_worker(rt, redis_settings, tmp_path, options, max_attempts)


def _killed_worker(
    rt: Runtime,
    redis_settings: Settings,
    tmp_path: Path,
    options: dict[str, Any],
    max_attempts: int,
) -> None:
    alice = seed_python_docs(rt, "alice", held_back=(ASYNCIO,))
    headers = alice["headers"]
    new = sorted(alice["new"])
    first = _start_worker(redis_settings, tmp_path / "first.log", **options)
    try:
        with TestClient(create_app(runtime=rt)) as client:
            job_id = client.post("/api/recluster", headers=headers).json()["id"]
            _wait_for(
                client,
                headers,
                job_id,
                lambda j: j["progress"]["phase"] == "weights" and j["progress"]["run"] >= 1,
            )
            # A critique while the job runs, then the worker dies without a word.
            closer = {"kind": "closer", "a": new[0], "b": new[1], "c": new[2]}
            assert client.post("/api/critiques", json=closer, headers=headers).status_code == 201
            first.send_signal(signal.SIGKILL)
            first.wait()
            running = client.get(f"/api/jobs/{job_id}", headers=headers).json()
            assert running["state"] == "running" and running["attempts"] == 1
            # Every process reaps with the same max_attempts, as in a deployment: the second
            # worker may reap the dead job on its start before this process reads it.
            second = _start_worker(
                redis_settings, tmp_path / "second.log", **FAST, max_attempts=max_attempts
            )
            try:
                final = _wait_for(
                    client, headers, job_id, lambda j: j["state"] in ("done", "failed", "stale")
                )
            finally:
                _stop(second)
            if max_attempts == 2:
                assert final["state"] == "done" and final["attempts"] == 2, final
                assert "stopped during attempt 1" in final["error"]
                tree = client.get("/api/tree/extended", headers=headers).json()
                # The tree was computed with the critique made before the crash (the seeding
                # import counted one before it).
                assert tree["critique_seq"] == 2 and not tree["outdated"]
            else:
                assert final["state"] == "failed" and "gave up" in final["error"], final
                assert client.get("/api/tree/extended", headers=headers).json()["version"] == 0
            critiques = client.get("/api/critiques", headers=headers).json()
            closers = [(c["a"], c["b"], c["c"]) for c in critiques if c["kind"] == "closer"]
            assert closers == [(new[0], new[1], new[2])]
            triples = client.get("/api/triples", headers=headers).json()["triples"]
            assert {"x": new[0], "y": new[1], "z": new[2]}.items() <= triples[0].items()
    finally:
        _stop(first)
