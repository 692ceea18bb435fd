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


def test_0013_keeps_the_rows_and_no_named_id_comes_back(empty_url: str) -> None:
    """Upgrading an existing database past 0013 keeps its documents, folders and full-text
    index, and a document or folder made after it does not take the id of a deleted one
    that a tree version or a critique still names (SQLite reused it; PostgreSQL never
    did)."""
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    from foldwise.service.critiques.models import Critique
    from foldwise.service.documents.models import Document
    from foldwise.service.folders.models import Folder
    from foldwise.service.recluster.tree.models import TreeVersion
    from foldwise.service.users.models import User

    def document(user_id: int, folder_id: int | None, n: int, words: str) -> Document:
        return Document(
            user_id=user_id, folder_id=folder_id, title=f"d{n}", text=words,
            content_hash=f"{n:064d}", filename=f"d{n}.txt", media_type="text/plain",
            size=len(words), blob_path=f"b/{n}",
        )  # fmt: skip

    migrate.upgrade(empty_url, "0012")
    engine = make_engine(empty_url)
    with Session(engine) as session:
        alice = User(name="alice")
        session.add(alice)
        session.flush()
        letters, drafts = (
            Folder(user_id=alice.id, name="letters"),
            Folder(user_id=alice.id, name="drafts"),
        )
        session.add_all([letters, drafts])
        session.flush()
        filed, newest = (
            document(alice.id, letters.id, 1, "harbour"),
            document(alice.id, None, 2, "x"),
        )
        session.add_all([filed, newest])
        session.flush()
        leaves = [filed.id, newest.id]
        session.add_all([
            TreeVersion(user_id=alice.id, number=1, method="ihac", doc_ids=leaves, linkage=[]),
            Critique(user_id=alice.id, author="alice", kind="move", folder_id=drafts.id),
        ])  # fmt: skip
        session.commit()
        ids = {"user": alice.id, "letters": letters.id, "filed": filed.id}
        deleted = {"document": newest.id, "folder": drafts.id}
        session.delete(newest)
        session.delete(drafts)
        session.commit()
    engine.dispose()

    migrate.upgrade(empty_url)
    engine = make_engine(empty_url)
    with Session(engine) as session:
        kept = session.execute(select(Document.title, Document.folder_id)).all()
        assert kept == [("d1", ids["letters"])]
        made = document(ids["user"], None, 3, "lighthouse")
        folder = Folder(user_id=ids["user"], name="receipts")
        session.add_all([made, folder])
        session.commit()
        assert made.id > deleted["document"] and folder.id > deleted["folder"]
        if engine.dialect.name == "sqlite":  # the triggers were made again with the table
            found = session.execute(
                text("SELECT rowid FROM documents_fts WHERE documents_fts MATCH :q"),
                {"q": "harbour OR lighthouse"},
            ).scalars()
            assert sorted(found) == sorted([ids["filed"], made.id])
    engine.dispose()
    migrate.downgrade(empty_url, "0012")
