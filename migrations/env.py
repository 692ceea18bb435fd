"""Alembic environment: the URL comes from the service settings, never from alembic.ini.

A caller may pass a URL (``config.attributes["url"]``) or an open connection
(``config.attributes["connection"]``), which is how ``foldwise db`` and the tests target a
particular database.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from sqlalchemy import Connection

from foldwise.service import models
from foldwise.service.config import settings
from foldwise.service.db import UTCDateTime, make_engine
from foldwise.service.migrate import include_object

config = context.config
target_metadata = models.Base.metadata


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | Literal[False]:
    """Render the service's own column types as plain SQLAlchemy types.

    ``UTCDateTime`` only changes how Python reads values; in the database it is
    ``DateTime(timezone=True)``, and migrations must not import application code.
    """
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        include_object=include_object,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Emit SQL to stdout instead of running it."""
    url = config.attributes.get("url") or settings.sqlalchemy_url
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        compare_type=True,
        render_as_batch=url.startswith("sqlite"),
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on a live connection."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        return
    engine = make_engine(config.attributes.get("url") or settings.sqlalchemy_url)
    try:
        with engine.connect() as connection:
            sqlite = connection.dialect.name == "sqlite"
            if sqlite:
                # Batch mode rebuilds a table (copy, drop the old, rename the new). With
                # foreign keys on, dropping the old one deletes the rows of every table that
                # references it ON DELETE CASCADE: dropping a column of ``users`` emptied the
                # user's documents. SQLite's advice: keys off for the rebuild (the pragma is
                # a no-op inside a transaction, so before the first), then check them.
                connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            _configure(connection)
            if sqlite:
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    connection.rollback()
                    raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
            connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
