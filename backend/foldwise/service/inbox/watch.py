"""An inbox directory: every file that lands in it becomes an unfiled document of one user,
with the same checks as an upload (docs/api.md, "Inbox").

A file is taken once it is complete: unchanged in size and time for ``settle_seconds``, and
not hidden or named like a partial download (``.part``, ``.tmp``, ``.crdownload``, ``~``).
It is stored first and moved out after: to ``done/`` once stored, or to ``failed/`` with a
``.why.txt`` beside it saying why it was refused. A watcher killed between the two finds the
file again after a restart; its content is then a duplicate, so it is moved to ``done/`` and
not stored twice. Nothing is deleted.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from foldwise.service.documents import service as documents
from foldwise.service.errors import ServiceError
from foldwise.service.users.models import User

log = logging.getLogger(__name__)

DONE, FAILED = "done", "failed"
#: Touched after every scan: a health check can tell a live watcher from a stuck one.
HEARTBEAT = ".foldwise-watch"
_PARTIAL_SUFFIXES = (".part", ".tmp", ".crdownload", ".download", "~")


@dataclass
class ScanReport:
    """What one pass over the inbox did, by file name."""

    stored: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)


def _candidates(inbox: Path) -> list[Path]:
    return sorted(
        path
        for path in inbox.iterdir()
        if path.is_file()
        and not path.is_symlink()
        and not path.name.startswith(".")
        and not path.name.lower().endswith(_PARTIAL_SUFFIXES)
    )


def _move_out(path: Path, folder: str) -> Path:
    """Move ``path`` into ``<inbox>/<folder>/`` under a name not taken there yet."""
    target_dir = path.parent / folder
    target_dir.mkdir(exist_ok=True)
    target, number = target_dir / path.name, 1
    while target.exists():
        number += 1
        target = target_dir / f"{path.stem} ({number}){path.suffix}"
    os.replace(path, target)
    return target


def scan_once(
    *,
    sessions: Callable[[], Session],
    user_id: int,
    inbox: Path,
    settle_seconds: float = 2.0,
    now: float | None = None,
) -> ScanReport:
    """Take every complete file in ``inbox`` once; returns what happened to each."""
    report = ScanReport()
    now = time.time() if now is None else now
    for path in _candidates(inbox):
        stat = path.stat()
        if now - stat.st_mtime < settle_seconds:
            report.waiting.append(path.name)  # maybe still being written
            continue
        data = path.read_bytes()
        if path.stat().st_size != stat.st_size or path.stat().st_mtime != stat.st_mtime:
            report.waiting.append(path.name)
            continue
        with sessions() as session:
            user = session.get(User, user_id)
            if user is None:
                raise RuntimeError(f"user {user_id} no longer exists")
            try:
                _, duplicate = documents.create_document(
                    session=session, user=user, data=data, filename=path.name
                )
                session.commit()
            except ServiceError as exc:
                session.rollback()
                moved = _move_out(path, FAILED)
                moved.with_name(moved.name + ".why.txt").write_text(exc.message + "\n")
                report.failed[path.name] = exc.message
                continue
        _move_out(path, DONE)
        (report.duplicates if duplicate else report.stored).append(path.name)
    return report


def watch(
    *,
    sessions: Callable[[], Session],
    user_id: int,
    inbox: Path,
    interval_seconds: float = 2.0,
    settle_seconds: float = 2.0,
) -> None:
    """Scan ``inbox`` every ``interval_seconds`` until interrupted, logging each file."""
    while True:
        try:
            report = scan_once(
                sessions=sessions, user_id=user_id, inbox=inbox, settle_seconds=settle_seconds
            )
        except (OSError, SQLAlchemyError) as exc:  # inbox or database away: try again later
            log.warning("inbox scan failed, retrying: %s", exc)
        else:
            for name in report.stored:
                log.info("stored %s", name)
            for name in report.duplicates:
                log.info("already stored: %s", name)
            for name, why in report.failed.items():
                log.warning("refused %s: %s", name, why)
            (inbox / HEARTBEAT).touch()
        time.sleep(interval_seconds)
