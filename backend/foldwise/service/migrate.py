"""Run the Alembic migrations from code (``foldwise db``, ``foldwise serve``, tests)."""

from __future__ import annotations

from typing import Any

from alembic import command
from alembic.config import Config

from foldwise.service.resources import shipped

# Objects that the migrations create by hand and autogenerate must not try to drop:
# SQLite's FTS5 table and its shadow tables, PostgreSQL's GIN index (ix_documents_fts).
_HAND_MADE_PREFIXES = ("documents_fts", "ix_documents_fts")


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Keep hand-made full-text objects out of autogenerate (used by migrations/env.py)."""
    hand_made = name is not None and name.startswith(_HAND_MADE_PREFIXES)
    return not (type_ in ("table", "index") and hand_made)


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config for ``url`` (default: the settings' database)."""
    cfg = Config(str(shipped("alembic.ini")))
    cfg.set_main_option("script_location", str(shipped("migrations")))
    if url:
        cfg.attributes["url"] = url
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision``."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "-1") -> None:
    """Downgrade the database at ``url`` to ``revision``."""
    command.downgrade(alembic_config(url), revision)


def current(url: str | None = None) -> str:
    """The revision the database at ``url`` is at (``"base"`` when empty)."""
    from alembic.runtime.migration import MigrationContext

    from foldwise.service.config import settings
    from foldwise.service.db import make_engine

    engine = make_engine(url or settings.sqlalchemy_url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision() or "base"
    finally:
        engine.dispose()
