"""The composition root (service/composition.py): each runtime carries its own engine, queue
and session listeners (that importing the service builds none: test_packaging.py)."""

from __future__ import annotations

from sqlalchemy import select

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.documents import service as documents
from foldwise.service.recluster.tree.models import TreeVersion
from foldwise.service.users import service as users

from .recluster_support import fast_options


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
