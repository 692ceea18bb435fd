"""Database engine, sessions and the ``SessionDep`` dependency.

SQLite (a file in the data directory) is the embedded default; PostgreSQL is used when
``FOLDWISE_DATABASE_URL`` is given. A session carries the ``Settings`` it was made for in
``session.info["settings"]`` so that service functions find the blob store and the limits
of the database they write to.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncGenerator, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import (
    Connection,
    DateTime,
    Dialect,
    Engine,
    MetaData,
    TypeDecorator,
    create_engine,
    event,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from foldwise.service.config import Settings, settings

# Stable constraint names keep Alembic autogenerate and SQLite batch mode predictable.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC timestamp on every database.

    SQLite stores no time zone and hands back naive values; they were written as UTC, so
    they are read back as UTC, and the API shows the same instant either way.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    """Declarative base of every service table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}  # noqa: RUF012


_Key = TypeVar("_Key", int, str)


def in_chunks(values: Iterable[_Key], size: int = 500) -> Iterator[list[_Key]]:
    """``values`` (sorted) in lists of ``size``, for ``IN`` clauses: a statement may bind
    at most 32,766 parameters on SQLite and 65,535 on PostgreSQL, and a user's documents
    can be more (a recluster that read 32,767 or more documents in one statement failed)."""
    ordered = sorted(values)
    for start in range(0, len(ordered), size):
        yield ordered[start : start + size]


def utcnow() -> datetime:
    """Aware UTC now, the one clock of every timestamp column."""
    return datetime.now(UTC)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # Foreign keys are off by default in SQLite; WAL lets the worker read while the API writes.
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


#: Connections kept per engine: one per thread that can hold a session at once. Sync routes
#: run in AnyIO's thread pool (40 threads by default), plus the embedded queue workers.
#: The old default (5 + 10 overflow) made requests under load wait out the pool timeout.
POOL_SIZE = 40
POOL_OVERFLOW = 10


def make_engine(url: str) -> Engine:
    """Create an engine for ``url``; for SQLite, create the file's directory first."""
    parsed = make_url(url)
    pool = {"pool_size": POOL_SIZE, "max_overflow": POOL_OVERFLOW}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ":memory:"
        memory = database == ":memory:"
        if not memory:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False}, **({} if memory else pool)
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url, **pool)
    _ping_after_idle(engine)
    return engine


#: A pooled connection that sat unused for longer than this is tested before a request gets
#: it (seconds).
PING_AFTER_IDLE_SECONDS = 1.0


def _ping_after_idle(engine: Engine) -> None:
    """Test a pooled connection before use when it sat idle: SQLAlchemy's pessimistic
    disconnect handling (``pool_pre_ping``) for idle connections only.

    A connection the server closed (a restart, an idle timeout) is found and replaced before
    a request sees it, as with ``pool_pre_ping``. Under load connections come back within
    milliseconds and go out again untested: ``pool_pre_ping`` cost every request one more
    round trip (about 0.2 ms of the server's CPU, docs/bad-input.md, "Concurrent writers").
    Raising ``DisconnectionError`` at checkout makes the pool discard the connection and
    open another (SQLAlchemy, "Disconnect Handling - Pessimistic", custom events).
    """

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop("idle_since", None)
        if since is None or time.monotonic() - since < PING_AFTER_IDLE_SECONDS:
            return  # new, or back in the pool only just now
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(f"a pooled connection was closed: {exc}") from exc


def connection_shortfall(engine: Engine, api_processes: int, other: int = 5) -> str | None:
    """Why the database may refuse connections to ``api_processes`` API processes (each up
    to :data:`POOL_SIZE`, one per request thread) and ``other`` more (workers), or ``None``.

    PostgreSQL only: its ``max_connections`` (100 by default, less the superuser reserve) is
    shared by every client, and a refused connection is a failed request under load.
    """
    if engine.dialect.name != "postgresql":
        return None
    try:
        with engine.connect() as conn:
            allowed = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
            reserved = int(conn.exec_driver_sql("SHOW superuser_reserved_connections").scalar_one())
    except DBAPIError:  # unreachable now: /healthz says so; nothing to compare
        return None
    wanted = api_processes * POOL_SIZE + other
    if wanted <= allowed - reserved:
        return None
    return (
        f"PostgreSQL allows {allowed - reserved} connections; {api_processes} API processes "
        f"may open up to {wanted} under load: raise max_connections or lower --processes"
    )


def make_sessionmaker(engine: Engine, cfg: Settings) -> sessionmaker[Session]:
    """A session factory whose sessions know ``cfg`` (see module docstring)."""
    return sessionmaker(bind=engine, expire_on_commit=False, info={"settings": cfg})


def settings_of(session: Session) -> Settings:
    """The settings a session was made for (the global ones for foreign sessions)."""
    cfg = session.info.get("settings")
    return cfg if isinstance(cfg, Settings) else settings


def database_of(session: Session) -> str:
    """The URL of the database a session talks to (password hidden): a key for per-process
    caches, since one process may serve several databases (tests, several apps)."""
    bind = session.get_bind()
    return str(bind.engine.url if isinstance(bind, Connection) else bind.url)


_default_lock = threading.Lock()
_default: list[sessionmaker[Session]] = []


def default_sessions() -> sessionmaker[Session]:
    """The session factory of the global settings, on an engine made at first use.

    Not at import: making a SQLite engine creates the data directory, and importing the
    package (tests, tools, a wheel's entry points) must not touch the disk or the database.
    """
    with _default_lock:
        if not _default:
            _default.append(make_sessionmaker(make_engine(settings.sqlalchemy_url), settings))
        return _default[0]


def SessionLocal() -> Session:  # noqa: N802  (the name the CLI and tests use)
    """A new plain session on the default database (see :func:`default_sessions`), for the
    CLI commands that store no documents: the domains' session listeners are installed on a
    runtime's sessions only (``service/composition.py``)."""
    return default_sessions()()


async def get_db(request: Request) -> AsyncGenerator[Session, None]:
    """Yield a session for one request, from the app's runtime (its session listeners
    installed); roll back whatever the request did not commit.

    Async, so that a request does not pay two hops to the thread pool (enter and exit) for
    it: making a session does no I/O, and neither does closing one that holds no
    connection (a committed one); a rollback or a close that releases a connection runs on
    the pool, since it talks to the database."""
    factory: sessionmaker[Session] = request.app.state.session_factory
    session = factory()
    try:
        yield session
    except Exception:
        with anyio.CancelScope(shield=True):
            await run_in_threadpool(session.rollback)
        raise
    finally:
        if session.in_transaction():
            # Shielded: in a cancelled request (a client gone, a shutdown) the await would
            # raise at once and the connection would stay checked out of the pool.
            with anyio.CancelScope(shield=True):
                await run_in_threadpool(session.close)
        else:
            session.close()


SessionDep = Annotated[Session, Depends(get_db)]


def listen_on_sessions(factory: sessionmaker[Session], handlers: dict[str, Any]) -> None:
    """Install ``{event name: handler}`` on the sessions ``factory`` makes (only those): the
    domain hooks that act after a commit (recluster scheduling, OCR queueing), installed by
    the composition root on its runtime's factory (docs/architecture.md sec. 2)."""
    for name, fn in handlers.items():
        event.listen(factory, name, fn)
