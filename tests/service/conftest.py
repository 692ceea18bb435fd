"""Fixtures of the service tests: a fresh database per test on SQLite and on PostgreSQL.

API tests take the ``client`` fixture, which is parametrized over both databases. The
PostgreSQL variant uses the running server at 127.0.0.1:5432 (a scratch database made for
this test session) and is skipped, with the reason, when none answers.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from conftest import unavailable
from foldwise.service import migrate, models
from foldwise.service.app import create_app
from foldwise.service.config import Settings
from foldwise.service.db import make_engine

from .helpers import Api

PG_ADMIN_URL = os.environ.get("FOLDWISE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def pg_available() -> str | None:
    """``None`` when PostgreSQL answers, else the reason to skip."""
    try:
        with psycopg.connect(PG_ADMIN_URL, connect_timeout=2):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL not reachable at {PG_ADMIN_URL}: {exc}".strip()


def make_settings(data_dir: Path, database_url: str = "", **overrides: Any) -> Settings:
    """Test settings: own data directory, small limits so that limits are cheap to hit."""
    values: dict[str, Any] = {
        "environment": "test",
        "data_dir": data_dir,
        "database_url": database_url,
        "max_document_bytes": 1024 * 1024,
        "max_batch_documents": 50,
        "max_batch_bytes": 4 * 1024 * 1024,
        "max_archive_bytes": 8 * 1024 * 1024,
        "max_archive_entries": 2000,
        "max_archive_unpacked_bytes": 32 * 1024 * 1024,
        "task_modules": [],
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test (migrating once keeps tests fast)."""
    path = tmp_path_factory.mktemp("template") / "foldwise.sqlite3"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A migrated scratch PostgreSQL database for this test session."""
    reason = pg_available()
    if reason:
        unavailable(reason)
    name = f"foldwise_svc_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    try:
        migrate.upgrade(url)
        yield url
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _database_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "sqlite":
        path = tmp_path / "data" / "foldwise.sqlite3"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("pg_url")
    engine = make_engine(url)
    with engine.begin() as conn:
        # DELETE, children first, is ~50x faster than TRUNCATE on tables this small.
        for table in reversed(models.Base.metadata.sorted_tables):
            conn.execute(table.delete())
    engine.dispose()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings on a fresh database: SQLite, then PostgreSQL."""
    return make_settings(tmp_path / "data", _database_url(request.param, request, tmp_path))


@pytest.fixture
def sqlite_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings on a fresh SQLite database (for tests that need no second database)."""
    return make_settings(tmp_path / "data", _database_url("sqlite", request, tmp_path))


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A test client of an app on a fresh database (both databases)."""
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def api(client: TestClient) -> Api:
    """Helpers bound to ``client``: users, tokens, state snapshots."""
    return Api(client)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def shared_api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    """One app and database for a whole module, on each database in turn.

    For tests that assert that a request changes nothing: they can share their data, and a
    request that did change something still fails its own before/after comparison.
    """
    tmp = tmp_path_factory.mktemp("shared")
    cfg = make_settings(tmp / "data", _database_url(request.param, request, tmp))
    with TestClient(create_app(cfg)) as test_client:
        yield Api(test_client)
