"""The composition root (service/composition.py): each runtime is built once and carries its
own engine, queue and session listeners; importing the service builds nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from sqlalchemy import select

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.documents import service as documents
from foldwise.service.recluster.tree.models import TreeVersion
from foldwise.service.users import service as users

from .recluster_support import fast_options


def test_importing_the_service_builds_nothing(tmp_path: Path) -> None:
    """No engine, queue, directory or session listener at import: the composition root
    makes them when it is called (docs/architecture.md sec. 2)."""
    code = textwrap.dedent(
        """
        import foldwise.cli, foldwise.service.app, foldwise.service.tasks
        from sqlalchemy.orm import Session
        session = Session()
        assert not list(session.dispatch.after_commit), list(session.dispatch.after_commit)
        assert not list(session.dispatch.after_flush), list(session.dispatch.after_flush)
        """
    )
    env = {"FOLDWISE_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "data").exists()


def test_each_runtime_hooks_only_its_own_sessions(sqlite_settings: Settings) -> None:
    """Two runtimes on one database: a document stored through one asks that runtime for the
    automatic recluster, never the other (no lookup by settings)."""
    one = app_runtime(sqlite_settings, fast_options(auto=True))
    other = app_runtime(sqlite_settings, fast_options(auto=True))
    try:
        assert one.engine is not other.engine and one.queue is not other.queue
        asked: dict[str, list[int]] = {"one": [], "other": []}
        one.schedule_task = asked["one"].append
        other.schedule_task = asked["other"].append
        with one.sessions() as session:
            user = users.create_user(session=session, name="alice")
            documents.create_document(
                session=session, user=user, title="A letter", text="about the car insurance"
            )
            session.commit()
            assert session.scalar(select(TreeVersion)) is None
            user_id = user.id
        assert asked == {"one": [user_id], "other": []}
    finally:
        one.close()
        other.close()
