"""Migrations upgrade a fresh database to the models and downgrade it cleanly."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, select

from conftest import unavailable
from foldwise.service import migrate, models
from foldwise.service.db import make_engine
from foldwise.service.migrate import include_object

from .conftest import PG_ADMIN_URL, pg_available


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
        return
    if reason := pg_available():
        unavailable(reason)
    name = f"foldwise_mig_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _diff(url: str) -> list[object]:
    engine = make_engine(url)
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": include_object}
        )
        diff = compare_metadata(context, models.Base.metadata)
    engine.dispose()
    return diff


def test_upgrade_matches_the_models_and_downgrade_empties(empty_url: str) -> None:
    migrate.upgrade(empty_url)
    engine = make_engine(empty_url)
    tables = set(inspect(engine).get_table_names())
    assert {"users", "api_tokens", "folders", "documents"} <= tables
    engine.dispose()
    assert _diff(empty_url) == []

    migrate.downgrade(empty_url, "base")
    engine = make_engine(empty_url)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    engine.dispose()

    migrate.upgrade(empty_url)  # and up again from base
    engine = make_engine(empty_url)
    assert "documents" in inspect(engine).get_table_names()
    engine.dispose()


def test_db_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from foldwise import cli
    from foldwise.service import config

    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    monkeypatch.setattr(config, "settings", config.Settings(data_dir=tmp_path, database_url=url))
    runner = CliRunner()
    for args, expected in [
        (["db", "upgrade"], "head"),
        (["db", "downgrade", "base"], "base"),
        (["db", "upgrade", "0001"], "0001"),
        (["db", "upgrade"], "head"),
    ]:
        result = runner.invoke(cli.app, args)
        assert result.exit_code == 0, result.output
        at = migrate.current(url)
        heads = migrate_heads()
        assert at == (heads if expected == "head" else expected), (args, at)


def migrate_heads() -> str:
    from alembic.script import ScriptDirectory

    return str(ScriptDirectory.from_config(migrate.alembic_config()).get_current_head())


def test_0009_marks_the_users_that_have_placement_models(empty_url: str) -> None:
    """Upgrading to 0009 sets ``has_placement_model`` from the models already stored."""
    from sqlalchemy.orm import Session

    from foldwise.service.recluster.tree.models import PlacementModel, TreeVersion
    from foldwise.service.users.models import User

    migrate.upgrade(empty_url)
    engine = make_engine(empty_url)
    with Session(engine) as session:
        alice, bob = User(name="alice"), User(name="bob")
        session.add_all([alice, bob])
        session.flush()
        version = TreeVersion(user_id=alice.id, number=1, method="ihac", doc_ids=[], linkage=[])
        session.add(version)
        session.flush()
        session.add(PlacementModel(version_id=version.id, user_id=alice.id, npz=b"x"))
        session.commit()
    engine.dispose()
    migrate.downgrade(empty_url, "0008")
    migrate.upgrade(empty_url)
    engine = make_engine(empty_url)
    with Session(engine) as session:
        flags = dict(session.execute(select(User.name, User.has_placement_model)).all())
    engine.dispose()
    assert flags == {"alice": True, "bob": False}
