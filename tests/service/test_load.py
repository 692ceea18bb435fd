"""Concurrent writers against a real ``foldwise serve``: 10 clients post 100 documents with
automatic reclusters on. Every one is acknowledged and stored once, no request fails, and
exactly one (debounced) automatic recluster is scheduled. (The 50 x 1,000 run with its
figures is ``bench/load_bench.py``; no test asserts a time.)"""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

import httpx2
import psycopg
import pytest

from conftest import unavailable
from foldwise.bench.load import post_concurrently
from foldwise.bench.served import Server

from .conftest import PG_ADMIN_URL, pg_available


def _database(kind: str) -> tuple[dict[str, str], str | None]:
    if kind == "sqlite":
        return {}, None
    reason = pg_available()
    if reason:
        unavailable(reason)
    name = f"foldwise_load_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return {"FOLDWISE_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"}, name


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "processes"),
    [
        ("sqlite", 1),
        pytest.param("postgresql", 1, marks=pytest.mark.postgres),
        # Two API processes (uvicorn workers), the embedded worker in the supervisor.
        ("sqlite", 2),
    ],
)
def test_ten_clients_post_a_hundred_documents(kind: str, processes: int, tmp_path: Path) -> None:
    env, scratch = _database(kind)
    env |= {"FOLDWISE_RECLUSTER_AUTO": "true", "FOLDWISE_RECLUSTER_DEBOUNCE_SECONDS": "600"}
    serve_args = ("--processes", str(processes))
    try:
        with Server(tmp_path / "data", env=env, serve_args=serve_args) as server:
            assert server.wait_for_api_processes(processes) == processes
            result = post_concurrently(server.url, server.headers, clients=10, documents=100)
            assert (result.server_errors, result.client_errors, result.dropped) == (0, 0, 0)
            assert len(result.acknowledged) == 100 == len(set(result.acknowledged))
            listed = server.call("GET", "/api/documents", params={"limit": 500}).json()
            assert listed["total"] == 100
            assert {d["id"] for d in listed["items"]} == set(result.acknowledged)
            # The API processes share the login buckets of the data directory's file.
            failed = server.client.post("/auth/login", json={"name": "bench", "password": "x"})
            assert failed.status_code == 401
            with sqlite3.connect(tmp_path / "data" / "rate-limits.sqlite3") as limits:
                buckets = limits.execute("SELECT action FROM buckets ORDER BY 1").fetchall()
            assert buckets == [("login-account",), ("login-address",)]
            # The schedule tasks run in the worker after the responses: wait for them.
            deadline = time.monotonic() + 30
            while not (jobs := server.call("GET", "/api/jobs").json()["items"]):
                assert time.monotonic() < deadline, "no automatic recluster was scheduled"
                time.sleep(0.1)
            time.sleep(1.0)
            jobs = server.call("GET", "/api/jobs").json()["items"]
            assert [(j["trigger"], j["state"]) for j in jobs] == [("auto", "queued")]
    finally:
        _drop(scratch)


@pytest.mark.slow
def test_api_processes_end_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    """kill -9 of ``foldwise serve --processes 2`` leaves no API process serving on the port
    without the embedded worker (app.exit_with_parent)."""
    with Server(tmp_path / "data", serve_args=("--processes", "2")) as server:
        server.wait_for_api_processes(2)
        workers = server.child_pids()
        assert len(workers) >= 2
        server.kill(supervisor_only=True)
        deadline = time.monotonic() + 20
        while alive := [pid for pid in workers if _running(pid)]:
            assert time.monotonic() < deadline, f"API processes {alive} outlived the supervisor"
            time.sleep(0.2)
        with pytest.raises(httpx2.TransportError):
            httpx2.get(f"{server.url}/healthz", timeout=2)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _drop(scratch: str | None) -> None:
    """Drop the scratch PostgreSQL database of :func:`_database`, if one was made."""
    if scratch:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
