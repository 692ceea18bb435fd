"""The app as a whole: health check, OpenAPI schema, request size guard."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import psycopg
import pytest
from fastapi.concurrency import run_in_threadpool
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from foldwise.service import db
from foldwise.service.app import create_app
from foldwise.service.config import Settings
from foldwise.service.db import POOL_SIZE, connection_shortfall, get_db, make_engine

from .conftest import PG_ADMIN_URL, make_settings
from .helpers import Api
from .test_isolation import ENDPOINTS, FOUNDATION_PREFIXES, PUBLIC


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "database": "ok"}


def test_healthz_reports_an_unreachable_database(tmp_path: Path) -> None:
    cfg = make_settings(tmp_path, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    with TestClient(create_app(cfg)) as client:
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"


def test_a_serving_process_freezes_its_startup_heap(tmp_path: Path) -> None:
    """What ``foldwise serve`` builds at start is out of the collector's reach, so that full
    collections under load do not rescan it (app.freeze_startup_heap)."""
    probe = "import gc; from foldwise.service.app import served_app; served_app(); "
    probe += "print(gc.get_freeze_count())"
    env = {**os.environ, "FOLDWISE_DATA_DIR": str(tmp_path)}
    env.pop("FOLDWISE_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert int(done.stdout.strip().splitlines()[-1]) > 50_000


def _schema_of(operation: dict, status: str) -> dict | None:  # type: ignore[type-arg]
    content = operation["responses"].get(status, {}).get("content", {})
    for media in content.values():
        return media.get("schema")  # type: ignore[no-any-return]
    return None


def test_openapi_lists_every_endpoint_with_request_and_response_models(
    sqlite_settings: Settings,
) -> None:
    schema = create_app(sqlite_settings).openapi()
    operations = {
        (method.upper(), path): op
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if path.startswith(FOUNDATION_PREFIXES) or (method.upper(), path) in PUBLIC
    }
    assert set(operations) == set(ENDPOINTS) | PUBLIC
    for (method, path), op in operations.items():
        assert op.get("summary") and op.get("description"), (method, path)
        if method in ("POST", "PATCH") and path != "/auth/logout":
            body = op["requestBody"]["content"]
            assert any(media.get("schema") for media in body.values()), (method, path)
        success = next(s for s in op["responses"] if s.startswith("2"))
        if success == "204" or path.endswith("/file"):
            continue
        assert _schema_of(op, success), (method, path, success)
        if "{" in path or method != "GET":
            assert any(s.startswith("4") for s in op["responses"]), (method, path)
    assert "DocumentRead" in schema["components"]["schemas"]
    assert "Tree" in schema["components"]["schemas"]


def test_token_creation_takes_a_body(sqlite_settings: Settings) -> None:
    op = create_app(sqlite_settings).openapi()["paths"]["/api/tokens"]["post"]
    assert "TokenCreate" in str(op["requestBody"])


def test_compose_and_dockerfile_run_real_commands() -> None:
    import re
    import shlex

    import typer
    import yaml
    from typer.testing import CliRunner

    from foldwise import cli

    root = Path(__file__).resolve().parents[2]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    assert set(compose["services"]) == {"db", "redis", "api", "worker", "inbox"}
    commands = [compose["services"][s]["command"] for s in ("api", "worker")]
    # The inbox runs through sh for its user variable; the command inside must parse.
    inbox = shlex.split(compose["services"]["inbox"]["command"][-1])
    assert inbox[:4] == ["foldwise", "watch", "/inbox", "--user"]
    commands.append([*inbox[:4], "alice"])
    commands.append(compose["services"]["worker"]["healthcheck"]["test"][1:])
    dockerfile = (root / "Dockerfile").read_text()
    cmd_line = next(line for line in dockerfile.splitlines() if line.startswith("CMD"))
    commands.append(yaml.safe_load(cmd_line.removeprefix("CMD ")))
    for service in compose["services"].values():
        assert "healthcheck" in service

    # PostgreSQL takes the connections of the README's 4 API processes (40 each) and workers.
    # Compose fills ${VAR:-default} from the environment; here, with the default.
    def with_default(part: str) -> str:
        return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", part)

    db_command = compose["services"]["db"]["command"]
    setting = with_default(db_command[db_command.index("-c") + 1])
    assert setting.startswith("max_connections=")
    assert int(setting.split("=")[1]) >= 4 * POOL_SIZE + 20
    commands = [[with_default(part) for part in c] for c in commands]
    for command in commands:
        assert command[0] == "foldwise", command
        # --help after the options parses them all: unknown options fail here.
        result = CliRunner().invoke(cli.app, [*command[1:], "--help"])
        assert result.exit_code == 0, (shlex.join(command), result.output)
        # --help is eager and skips the values' types: parse them without running.
        group: Any = typer.main.get_command(cli.app)
        sub = group.commands[command[1]]
        sub.make_context(command[1], command[2:])  # raises on a value of the wrong type


@pytest.mark.postgres
def test_serve_warns_when_postgresql_has_too_few_connections(pg_url: str) -> None:
    """``foldwise serve`` says so at start when its API processes may need more connections
    than PostgreSQL allows (db.connection_shortfall); SQLite has no such limit."""
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            allowed = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
        assert connection_shortfall(engine, 1, other=0) is None
        too_many = allowed // POOL_SIZE + 1
        warning = connection_shortfall(engine, too_many)
        assert warning is not None
        assert f"{too_many} API processes" in warning
        assert "raise max_connections" in warning
    finally:
        engine.dispose()
    assert connection_shortfall(make_engine("sqlite://"), 64) is None
    unreachable = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert connection_shortfall(unreachable, 64) is None


def test_a_cancelled_request_still_returns_its_connection(sqlite_settings: Settings) -> None:
    """The session dependency closes its session even when the request is cancelled (a
    client gone, a shutdown): the connection goes back to the pool (db.get_db)."""
    app = create_app(sqlite_settings)
    request = SimpleNamespace(app=app)  # get_db reads only the app's state

    async def cancelled_request() -> None:
        requests = get_db(request)  # type: ignore[arg-type]
        session = await anext(requests)
        await run_in_threadpool(session.execute, text("SELECT 1"))  # holds a connection
        assert app.state.engine.pool.checkedout() == 1
        with anyio.CancelScope() as scope:
            scope.cancel()
            await requests.aclose()

    anyio.run(cancelled_request)
    assert app.state.engine.pool.checkedout() == 0


def test_streamed_body_over_the_hard_limit_is_413(sqlite_settings: Settings) -> None:
    cfg = sqlite_settings.model_copy(update={"max_archive_bytes": 1000, "max_batch_bytes": 1000})
    with TestClient(create_app(cfg)) as client:
        api = Api(client)
        alice = api.user()
        before = api.snapshot()

        def chunks() -> Iterator[bytes]:  # no Content-Length: the body is streamed
            yield b'{"text": "'
            for _ in range(100):
                yield b"x" * 100
            yield b'"}'

        response = client.post(
            "/api/documents",
            content=chunks(),
            headers={**alice, "content-type": "application/json"},
        )
        assert response.status_code == 413
        assert "limit of 2000 bytes" in response.json()["detail"]
        assert api.snapshot() == before
        small = client.post(
            "/api/documents",
            content=iter([b'{"text": "fits"}']),
            headers={**alice, "content-type": "application/json"},
        )
        assert small.status_code == 201


@pytest.mark.postgres
def test_a_connection_closed_while_idle_in_the_pool_is_replaced(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled connection that sat idle is tested at checkout, and one the server closed is
    replaced before a request sees it (db._ping_after_idle). One that came back moments ago
    is handed out untested: the first statement fails, and the pool then renews itself."""
    engine = make_engine(pg_url)

    def backend_pid() -> int:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())

    def close_on_the_server(pid: int) -> None:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

    try:
        monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 0.0)
        closed = backend_pid()
        close_on_the_server(closed)
        assert backend_pid() != closed  # tested, found closed, replaced

        monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 3600.0)
        closed = backend_pid()
        close_on_the_server(closed)
        with pytest.raises(DBAPIError):
            backend_pid()  # not idle long enough to be tested
        assert backend_pid() != closed
    finally:
        engine.dispose()
