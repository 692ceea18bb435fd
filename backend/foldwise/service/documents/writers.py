"""Which process wrote which blob: so a restart after a crash can remove exactly what the
dead process wrote and never committed (docs/architecture.md, "Blobs after a crash").

Every process that writes blobs holds a *writer*: a lock file ``<root>/.writers/<id>.lock``
locked with ``flock`` for the life of the process, and a journal ``<id>.journal`` listing
every blob path it wrote or reused, appended *before* the file is touched. The kernel drops
the lock when the process dies, however it dies (kill -9 included), so a lock that can be
taken belongs to a dead writer. :func:`reclaim_dead_writers` then removes the dead writer's
temporary files and those of its blobs that

- no committed row references (asked of the caller, who knows the database),
- no live writer has journalled (another transaction may be about to commit them), and
- nobody touched since the dead writer's last write (``mtime`` not newer than its journal:
  a blob reused after the crash is refreshed by :meth:`BlobStore._touch`).

Linux and other POSIX systems only (``fcntl``), as is the service.
"""

from __future__ import annotations

import fcntl
import os
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

WRITERS_DIR = ".writers"


class Writer:
    """This process's lock and journal under one blob root."""

    def __init__(self, root: Path) -> None:
        self.directory = root / WRITERS_DIR
        self.directory.mkdir(parents=True, exist_ok=True)
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.pid = os.getpid()
        # Lock a file under a temporary name, then rename it: a cleaner never sees the lock
        # file of a live writer unlocked (between creating and locking it).
        pending = self.directory / f".{self.id}.pending"
        self._lock_fd = os.open(pending, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.journal = self.directory / f"{self.id}.journal"
        self.journal.touch()
        os.replace(pending, self.directory / f"{self.id}.lock")
        self._mutex = threading.Lock()
        self._out: TextIO | None = None

    @property
    def temp_prefix(self) -> str:
        """Prefix of this writer's temporary files (a dead writer's are all removed)."""
        return f".tmp-{self.id}-"

    def record(self, relatives: Iterable[str]) -> None:
        """Journal blob paths (relative to the root) before they are written or reused."""
        lines = "".join(f"{r}\n" for r in relatives)
        with self._mutex:
            # Kept open: one write per upload, flushed to the kernel (a kill -9 loses
            # nothing the kernel has; an OS crash is left to gc-blobs' age rule).
            if self._out is None:
                self._out = self.journal.open("a", encoding="ascii")
            self._out.write(lines)
            self._out.flush()

    def backdate(self, *fds: int) -> None:
        """Give finished temporary files (open as ``fds``) the journal's time before they are
        renamed into place: a kill between the rename and :meth:`written` then leaves blobs
        no newer than the journal, which a restart reclaims (they were spared before, as if
        someone had touched them since). ``record`` has just written the journal, so the
        time is seconds old at most and the collector's age rule is not fooled."""
        stamp = self.journal.stat().st_mtime_ns
        for fd in fds:
            os.utime(fd, ns=(stamp, stamp))

    def written(self) -> None:
        """Mark the journal as newer than every blob this writer finished writing."""
        os.utime(self.journal)


_writers: dict[Path, Writer] = {}
_writers_mutex = threading.Lock()


def writer_for(root: Path) -> Writer:
    """This process's writer under ``root`` (a new one after a fork: locks are per process)."""
    with _writers_mutex:
        writer = _writers.get(root)
        if writer is None or writer.pid != os.getpid():
            writer = _writers[root] = Writer(root)
        return writer


def _journal_paths(journal: Path) -> set[str]:
    try:
        return set(journal.read_text(encoding="ascii").split())
    except FileNotFoundError:
        return set()


def reclaim_dead_writers(root: Path, referenced: Callable[[set[str]], set[str]]) -> int:
    """Remove what dead writers under ``root`` left uncommitted; returns how many files went.

    ``referenced(paths)`` answers which of ``paths`` committed rows reference. Safe to run
    while other processes write: live writers and the blobs they journal are left alone.
    """
    directory = root / WRITERS_DIR
    if not directory.is_dir():
        return 0
    dead: list[tuple[str, int]] = []
    alive: list[str] = []
    for lock_path in sorted(directory.glob("*.lock")):
        writer_id = lock_path.name.removesuffix(".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR)
        except FileNotFoundError:  # reclaimed by a concurrent cleaner
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            alive.append(writer_id)
            continue
        dead.append((writer_id, fd))
    protected: set[str] = set()
    for writer_id in alive:
        protected |= _journal_paths(directory / f"{writer_id}.journal")
    removed = 0
    for writer_id, fd in dead:
        try:
            removed += _reclaim(root, directory, writer_id, referenced, protected)
        finally:
            (directory / f"{writer_id}.lock").unlink(missing_ok=True)
            os.close(fd)
    return removed


def _reclaim(
    root: Path,
    directory: Path,
    writer_id: str,
    referenced: Callable[[set[str]], set[str]],
    protected: set[str],
) -> int:
    journal = directory / f"{writer_id}.journal"
    paths = _journal_paths(journal)
    try:
        last_write = journal.stat().st_mtime_ns
    except FileNotFoundError:
        last_write = 0
    removed = 0
    orphans = paths - protected - (referenced(paths) if paths else set())
    for relative in orphans:
        blob = root / relative
        try:
            if blob.stat().st_mtime_ns <= last_write:
                blob.unlink()
                removed += 1
        except FileNotFoundError:
            pass
    for parent in {(root / p).parent for p in paths}:
        for temp in parent.glob(f".tmp-{writer_id}-*"):
            temp.unlink(missing_ok=True)
            removed += 1
    journal.unlink(missing_ok=True)
    return removed
