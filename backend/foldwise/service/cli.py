"""``foldwise serve | worker | import | users | db``: the service's command line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from foldwise.service.recluster.jobs.runtime import Runtime


def _echo_err(message: str) -> None:
    typer.echo(message, err=True)


def _reclaim_crashed_writes() -> None:
    """Remove what crashed processes wrote and never committed, saying so if anything."""
    from sqlalchemy.exc import DBAPIError

    from foldwise.service.db import SessionLocal
    from foldwise.service.documents.service import reclaim_crashed_writes

    try:
        with SessionLocal() as session:
            removed = reclaim_crashed_writes(session=session)
    except DBAPIError as exc:  # e.g. a worker started before the API migrated the database
        _echo_err(f"left files of crashed processes for later: {exc.orig!r}")
        return
    if removed:
        _echo_err(f"removed {removed} file(s) that crashed processes wrote and never committed")


def _compile_kernels_in_background() -> None:
    """Compile (or load from numba's cache) the clustering kernels in a child process at low
    priority, so that a worker's first recluster does not pay the ~14 s of compilation.

    A child, not a thread: loading numba and its cache takes ~2 s of CPU even when warm, and
    on a thread that held this process's GIL while the first requests came in (p50 of the
    load bench's first seconds). The cache is on disk, so the worker's own first fit then only
    loads it."""
    import logging
    import subprocess
    import sys
    import threading

    child = [
        sys.executable,
        "-c",
        "import os; os.nice(10); import foldwise.core as c; c.compile_kernels()",
    ]

    def compile_now() -> None:
        try:
            done = subprocess.run(child, capture_output=True, check=False)
        except OSError:
            done = None
        if done is None or done.returncode != 0:  # the first recluster compiles them then
            logging.getLogger(__name__).warning("could not compile the kernels ahead")

    # The thread only waits on the child (no GIL held), and reaps it.
    threading.Thread(target=compile_now, name="compile-kernels", daemon=True).start()


def default_api_processes() -> int:
    """API processes of a plain ``foldwise serve``: 2 where there are 2 cores or more.

    One Python process serves on one core (the GIL) and its event loop was the limit under
    50 concurrent writers: 108-146 documents/s on PostgreSQL with one process, 150 or more
    with two (docs/bad-input.md, "Proof under load and faults"). More than two gained
    nothing on 2 cores, and a personal server has no use for one per core.
    """
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def command_runtime() -> Runtime:
    """The runtime of a command that stores documents (``import``, ``watch``): the app's, on
    the global settings (``composition.app_runtime``), so that its new documents schedule a
    recluster and get an instant suggestion as uploads do. Built once per command."""
    from foldwise.service.composition import app_runtime
    from foldwise.service.config import settings

    return app_runtime(settings)


def _user_or_exit(session: Any, name: str) -> Any:
    """The user called ``name``, or exit 1 with one line on stderr."""
    from foldwise.service.users import service

    user = service.get_by_name(session=session, name=name)
    if user is None:
        _echo_err(f"no user {name!r}")
        raise typer.Exit(1)
    return user


def register(app: typer.Typer) -> None:
    """Add the service commands to the main ``foldwise`` app."""
    users = typer.Typer(help="Manage accounts and API tokens.", no_args_is_help=True)
    database = typer.Typer(help="Migrate the database (Alembic).", no_args_is_help=True)
    app.add_typer(users, name="users")
    app.add_typer(database, name="db")

    @app.command()
    def serve(
        host: str = "127.0.0.1",
        port: int = 8000,
        worker: Annotated[bool, typer.Option(help="run an embedded queue worker")] = True,
        worker_threads: int = 1,
        migrate: Annotated[bool, typer.Option(help="upgrade the database first")] = True,
        processes: Annotated[
            int | None,
            typer.Option(
                min=1,
                max=64,
                help="API processes on the one port (uvicorn workers); each takes a core "
                "[default: 2, or 1 on a one-core machine]",
                show_default=False,
            ),
        ] = None,
    ) -> None:
        """Serve the API (and an embedded worker), on SQLite in ./data by default."""
        import uvicorn

        from foldwise.service import migrate as migrations
        from foldwise.service.app import serving_app
        from foldwise.service.composition import add_worker_tasks, app_runtime
        from foldwise.service.config import settings
        from foldwise.service.db import connection_shortfall
        from foldwise.service.queue import EmbeddedWorker
        from foldwise.service.users.auth import signing_secret

        if migrate:
            migrations.upgrade()
        _reclaim_crashed_writes()
        # Made on the first start (when none is configured), so every later process agrees.
        signing_secret(settings)
        # One runtime for the app and its embedded worker: one engine, one queue.
        rt = app_runtime(settings)
        embedded = None
        if worker:
            add_worker_tasks(rt)
            embedded = EmbeddedWorker(rt.queue, workers=worker_threads)
            embedded.start()
            _compile_kernels_in_background()
        if processes is None:
            processes = default_api_processes()
        shortfall = connection_shortfall(rt.engine, processes, other=worker_threads + 4)
        if shortfall:
            _echo_err(f"warning: {shortfall}")
        try:
            if processes == 1:
                uvicorn.run(serving_app(rt), host=host, port=port)
            else:
                # One Python process serves on one core (the GIL): under many concurrent
                # writers a second process uses the second core (docs/bad-input.md, "Proof
                # under load and faults"). Each builds its own runtime from the same settings
                # (the environment); the embedded worker stays here, in the supervisor.
                uvicorn.run(
                    "foldwise.service.app:served_app",
                    factory=True,
                    workers=processes,
                    host=host,
                    port=port,
                )
        finally:
            if embedded is not None:
                embedded.stop()
            rt.close()

    @app.command("worker")
    def worker_command(threads: int = 1) -> None:
        """Run a queue worker (the same SQLite queue as ``serve``, or Redis if configured)."""
        from foldwise.service.composition import worker_runtime
        from foldwise.service.config import settings
        from foldwise.service.queue import run_worker

        rt = worker_runtime(settings)
        _reclaim_crashed_writes()
        _compile_kernels_in_background()
        _echo_err(
            f"worker on {'redis' if settings.redis_url else 'sqlite'}; tasks from {rt.task_modules}"
        )
        run_worker(rt.queue, workers=threads)

    @app.command("compile-kernels")
    def compile_kernels_command() -> None:
        """Compile the clustering kernels into numba's cache (an image build runs it, so
        that no recluster pays the ~14 s of a first compilation)."""
        import time

        from foldwise.core import compile_kernels

        started = time.perf_counter()
        compile_kernels()
        _echo_err(f"kernels ready in {time.perf_counter() - started:.1f} s")

    @app.command("queue-ping")
    def queue_ping(timeout: float = 10.0) -> None:
        """Exit 0 if a worker answers a ping task within TIMEOUT seconds (health checks)."""
        from foldwise.service.config import settings
        from foldwise.service.queue import make_huey, register_builtin_tasks

        result = register_builtin_tasks(make_huey(settings))("pong")
        try:
            answer = result.get(blocking=True, timeout=timeout)
        except Exception as exc:  # huey raises its own timeout type; any failure is "down"
            _echo_err(f"no worker answered within {timeout:g}s: {exc!r}")
            raise typer.Exit(1) from exc
        typer.echo(answer)

    @app.command("gc-blobs")
    def gc_blobs(
        min_age_minutes: Annotated[float, typer.Option(help="spare younger files")] = 60.0,
        dry_run: bool = False,
    ) -> None:
        """Delete stored original files that no document references any more."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.documents.service import collect_blobs

        if not dry_run:
            _reclaim_crashed_writes()
        with SessionLocal() as session:
            count = collect_blobs(
                session=session, min_age_seconds=60 * min_age_minutes, dry_run=dry_run
            )
        typer.echo(f"{'would remove' if dry_run else 'removed'} {count} unreferenced file(s)")

    @app.command("export")
    def export_command(
        target: Annotated[Path, typer.Argument(help="a new or empty directory")],
        user: Annotated[str, typer.Option("--user", "-u", help="the owner")],
        folder_id: Annotated[int | None, typer.Option(help="only this folder")] = None,
    ) -> None:
        """Write USER's folders and documents to TARGET: folders as directories, each original
        file under its title. All or nothing; TARGET must not exist or be empty."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.errors import ServiceError
        from foldwise.service.exports import service

        with SessionLocal() as session:
            owner = _user_or_exit(session, user)
            try:
                entries = service.export_plan(session=session, user=owner, folder_id=folder_id)
                files = service.write_directory(session=session, entries=entries, target=target)
            except ServiceError as exc:
                _echo_err(exc.message)
                raise typer.Exit(1) from exc
        folders = sum(entry.blob_path is None for entry in entries)
        typer.echo(f"exported {files} document(s) in {folders} folder(s) to {target}")

    @app.command("watch")
    def watch_command(
        inbox: Annotated[Path, typer.Argument(help="the inbox directory")],
        user: Annotated[str, typer.Option("--user", "-u", help="whose documents they become")],
        interval: Annotated[float, typer.Option(help="seconds between scans", min=0.1)] = 2.0,
        settle: Annotated[
            float, typer.Option(help="seconds a file must stay unchanged", min=0.0)
        ] = 2.0,
        once: Annotated[bool, typer.Option(help="scan once, print what happened, exit")] = False,
    ) -> None:
        """Turn every file dropped in INBOX into an unfiled document of USER: stored files
        move to INBOX/done/, refused ones to INBOX/failed/ with a .why.txt beside them."""
        import dataclasses
        import json
        import logging

        from foldwise.service.inbox import watch as inbox_watch

        if not inbox.is_dir():
            _echo_err(f"{inbox} is not a directory")
            raise typer.Exit(1)
        rt = command_runtime()  # new unfiled documents schedule a recluster, as uploads do
        with rt.sessions() as session:
            user_id = _user_or_exit(session, user).id
        if once:
            report = inbox_watch.scan_once(
                sessions=rt.sessions, user_id=user_id, inbox=inbox, settle_seconds=settle
            )
            typer.echo(json.dumps(dataclasses.asdict(report)))
            return
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        _echo_err(f"watching {inbox} for {user!r} (Ctrl-C to stop)")
        try:
            inbox_watch.watch(
                sessions=rt.sessions,
                user_id=user_id,
                inbox=inbox,
                interval_seconds=interval,
                settle_seconds=settle,
            )
        except KeyboardInterrupt:
            _echo_err("stopped")

    @app.command("import")
    def import_command(
        path: Annotated[Path, typer.Argument(help="a directory tree or a .zip file")],
        user: Annotated[str, typer.Option("--user", "-u", help="the owner")],
        parent_id: Annotated[int | None, typer.Option(help="folder to import under")] = None,
    ) -> None:
        """Import a folder tree: its folders and documents become USER's filed hierarchy."""
        from foldwise.service.errors import ServiceError
        from foldwise.service.imports import archive, service
        from foldwise.service.users.service import get_by_name

        rt = command_runtime()  # unfiled documents (at the archive's root) schedule a recluster
        with rt.sessions() as session:
            owner = get_by_name(session=session, name=user)
            if owner is None:
                _echo_err(f"no user {user!r}; create one with: foldwise users create {user}")
                raise typer.Exit(1)
            cfg = session.info["settings"]
            try:
                if path.is_file() and path.suffix.lower() == ".zip":
                    listing = archive.read_zip(path.read_bytes(), cfg)
                else:
                    listing = archive.read_directory(path, cfg)
                report = service.import_listing(
                    session=session, user=owner, listing=listing, parent_id=parent_id
                )
            except ServiceError as exc:
                session.rollback()
                _echo_err(f"import refused, nothing written: {exc.message}")
                raise typer.Exit(1) from exc
            session.commit()
        typer.echo(report.model_dump_json(indent=2))

    @users.command("create")
    def users_create(
        name: str,
        password: Annotated[
            str | None,
            typer.Option(envvar="FOLDWISE_USER_PASSWORD", help="for browser login"),
        ] = None,
    ) -> None:
        """Create user NAME and print a new API token (the only time it is shown)."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.errors import ServiceError
        from foldwise.service.users import service

        with SessionLocal() as session:
            try:
                user = service.create_user(session=session, name=name, password=password)
            except ServiceError as exc:
                _echo_err(exc.message)
                raise typer.Exit(1) from exc
            _, secret = service.create_token(session=session, user=user, label="cli")
            session.commit()
        _echo_err(f"created user {name!r}; API token:")
        typer.echo(secret)

    @users.command("token")
    def users_token(name: str, label: str = "cli") -> None:
        """Print a new API token for existing user NAME."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.users import service

        with SessionLocal() as session:
            user = _user_or_exit(session, name)
            _, secret = service.create_token(session=session, user=user, label=label)
            session.commit()
        typer.echo(secret)

    @users.command("password")
    def users_password(
        name: str,
        password: Annotated[
            str,
            typer.Option(
                envvar="FOLDWISE_USER_PASSWORD",
                prompt=True,
                hide_input=True,
                confirmation_prompt=True,
            ),
        ],
    ) -> None:
        """Set NAME's password for browser login (ends their browser sessions)."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.users import service

        with SessionLocal() as session:
            user = _user_or_exit(session, name)
            service.set_password(session=session, user=user, password=password)
            session.commit()
        typer.echo(f"password of {name!r} set")

    @users.command("list")
    def users_list() -> None:
        """List users with their number of live tokens."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.users import service

        with SessionLocal() as session:
            for user in service.list_users(session=session):
                live = sum(
                    1 for t in service.list_tokens(session=session, user=user) if not t.revoked_at
                )
                typer.echo(
                    f"{user.id}\t{user.name}\t{live} live token(s)\t{user.created_at:%Y-%m-%d}"
                )

    @users.command("revoke")
    def users_revoke(
        name: str,
        token_id: Annotated[int | None, typer.Option(help="only this token")] = None,
    ) -> None:
        """Revoke NAME's API tokens and browser sessions (all of them), or one token with
        --token-id."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.errors import ServiceError
        from foldwise.service.users import service

        with SessionLocal() as session:
            user = _user_or_exit(session, name)
            try:
                ended = 0
                if token_id is None:
                    count = service.revoke_all_tokens(session=session, user=user)
                    ended = service.close_all_browser_sessions(session=session, user=user)
                else:
                    service.revoke_token(session=session, user=user, token_id=token_id)
                    count = 1
            except ServiceError as exc:
                _echo_err(exc.message)
                raise typer.Exit(1) from exc
            session.commit()
        typer.echo(f"revoked {count} token(s) and ended {ended} browser session(s) of {name!r}")

    @database.command("upgrade")
    def db_upgrade(revision: Annotated[str, typer.Argument()] = "head") -> None:
        """Upgrade the database to REVISION (default: the newest)."""
        from foldwise.service import migrate

        migrate.upgrade(revision=revision)
        _echo_err(f"database at {migrate.current()}")

    @database.command("backfill-languages")
    def db_backfill_languages() -> None:
        """Detect and store the language of documents stored before migration 0010, so that
        no recluster detects them again (docs/recluster.md, "Languages detected at ingest")."""
        from foldwise.service.db import SessionLocal
        from foldwise.service.documents import language

        def progress(done: int, total: int) -> None:
            _echo_err(f"{done} of {total} document(s) read")

        with SessionLocal() as session:
            stored = language.backfill(session, progress=progress)
        typer.echo(f"stored the language of {stored} document(s)")

    @database.command("downgrade")
    def db_downgrade(revision: Annotated[str, typer.Argument()] = "-1") -> None:
        """Downgrade the database to REVISION (default: one step; 'base' empties it)."""
        from foldwise.service import migrate

        migrate.downgrade(revision=revision)
        _echo_err(f"database at {migrate.current()}")
