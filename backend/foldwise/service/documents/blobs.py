"""Original files, stored once per content hash and written atomically."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from foldwise.service.documents.writers import WRITERS_DIR, Writer, writer_for


def content_hash(data: bytes) -> str:
    """SHA-256 hex of ``data``: the document's identity and its blob's name."""
    return hashlib.sha256(data).hexdigest()


#: Files :meth:`BlobStore.put_many` holds open at once. A batch is the new files of a whole
#: archive (up to ``max_archive_entries``, 20,000), and a process may open 1,024 files by
#: default: with one descriptor per file, an archive of more new files failed with EMFILE.
MAX_OPEN_FILES = 256

#: Per blob root: whether it holds blobs of the two-level layout (``BlobStore._has_legacy``).
_LEGACY: dict[Path, bool] = {}


def _has_subdirectory(path: str) -> bool:
    return any(entry.is_dir() for entry in os.scandir(path))


class BlobStore:
    """Content-addressed files under ``root``: ``ab/abcd...``.

    A blob is written to a temporary file in its final directory, flushed to disk and then
    renamed into place, so a reader never sees a partial file. Identical content shares one
    blob (also across users). Every path is journalled first by this process's writer
    (``writers.py``), so what a crashed process wrote and never committed can be removed.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def _touch(target: Path) -> bool:
        """Refresh the time of an existing blob; ``False`` if there is none."""
        # A reused blob is as new as its newest reference: the collector spares young blobs,
        # so one that an upload is about to reference again is not collected under it.
        try:
            os.utime(target)
        except FileNotFoundError:
            return False
        return True

    def relative_path(self, digest: str) -> str:
        """Where a new blob of ``digest`` goes, relative to ``root``.

        One level of 256 directories, as git's object store: the two-level layout this
        replaced (``ab/cd/abcd...``, 65,536 directories) made almost every one of the first
        ten thousand uploads create a directory, and ext4's directory allocation was an
        eighth of a single upload's CPU. 100,000 documents are ~400 files a directory,
        which ext4's hashed directories look up in constant time.
        """
        return f"{digest[:2]}/{digest}"

    @staticmethod
    def legacy_path(digest: str) -> str:
        """Where the two-level layout put the blob of ``digest`` (still read and reused;
        documents keep the path they were stored under)."""
        return f"{digest[:2]}/{digest[2:4]}/{digest}"

    def _has_legacy(self) -> bool:
        """Whether ``root`` holds blobs of the two-level layout (asked once per process and
        root: the new layout never makes a second level, so a fresh store never has one,
        and its uploads pay nothing for the old layout)."""
        found = _LEGACY.get(self.root)
        if found is None:
            found = self.root.is_dir() and any(
                len(top.name) == 2 and top.is_dir() and _has_subdirectory(top.path)
                for top in os.scandir(self.root)
            )
            _LEGACY[self.root] = found
        return found

    def _candidates(self, digest: str) -> list[str]:
        """Where a blob of ``digest`` may already be, newest layout first."""
        new = self.relative_path(digest)
        return [new, self.legacy_path(digest)] if self._has_legacy() else [new]

    def _reuse(self, digest: str) -> str | None:
        """The relative path of an existing blob of ``digest``, refreshed; ``None`` if none."""
        for relative in self._candidates(digest):
            if self._touch(self.path(relative)):
                return relative
        return None

    def path(self, relative: str) -> Path:
        """Absolute path of a stored blob."""
        return self.root / relative

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` (if not there yet); returns its relative path."""
        digest = digest or content_hash(data)
        relative = self.relative_path(digest)
        target = self.path(relative)
        writer = writer_for(self.root)
        writer.record(self._candidates(digest))
        reused = self._reuse(digest)
        if reused is not None:
            writer.written()
            return reused
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=writer.temp_prefix)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                writer.backdate(out.fileno())
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        writer.written()
        return relative

    def put_many(self, blobs: dict[str, bytes]) -> dict[str, str]:
        """Store several blobs (``{digest: data}``); returns ``{digest: relative path}``.

        Same guarantees as :meth:`put`, but the files are flushed to disk concurrently:
        the file system then commits them in a few journal transactions instead of one per
        file, which is most of the cost of a batch (about 10x on ext4). At most
        ``MAX_OPEN_FILES`` are open at a time.
        """
        paths = {digest: self.relative_path(digest) for digest in blobs}
        writer = writer_for(self.root)
        writer.record([p for digest in blobs for p in self._candidates(digest)])
        todo = []
        for digest in blobs:
            reused = self._reuse(digest)
            if reused is None:
                todo.append(digest)
            else:
                paths[digest] = reused
        if not todo:
            writer.written()
            return paths
        for start in range(0, len(todo), MAX_OPEN_FILES):
            self._write_batch(todo[start : start + MAX_OPEN_FILES], blobs, paths, writer)
        writer.written()
        return paths

    def _write_batch(
        self,
        todo: list[str],
        blobs: dict[str, bytes],
        paths: dict[str, str],
        writer: Writer,
    ) -> None:
        """Write, flush concurrently and rename ``todo`` (digests) into place."""
        temps: dict[str, tuple[int, str]] = {}
        try:
            for digest in todo:
                target = self.path(paths[digest])
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=writer.temp_prefix)
                temps[digest] = (fd, tmp)
                view = memoryview(blobs[digest])
                while view:
                    view = view[os.write(fd, view) :]
            writer.backdate(*(fd for fd, _ in temps.values()))  # one stat of the journal
            with ThreadPoolExecutor(max_workers=min(16, len(temps))) as pool:
                list(pool.map(os.fsync, [fd for fd, _ in temps.values()]))
            for digest, (_, tmp) in temps.items():
                os.replace(tmp, self.path(paths[digest]))
        finally:
            for fd, tmp in temps.values():
                os.close(fd)
                Path(tmp).unlink(missing_ok=True)  # no-op once renamed into place

    def collect(self, referenced: set[str], min_age_seconds: float, dry_run: bool = False) -> int:
        """Delete blobs not in ``referenced`` (relative paths) and untouched for
        ``min_age_seconds``, and stray temporary files as old; returns how many went."""
        cutoff = time.time() - min_age_seconds
        removed = 0
        for path in self.root.rglob("*"):
            if not path.is_file():
                continue
            relative = path.relative_to(self.root).as_posix()
            if relative.startswith(f"{WRITERS_DIR}/"):  # locks and journals of writers
                continue
            if relative in referenced or path.stat().st_mtime > cutoff:
                continue
            if not dry_run:
                path.unlink(missing_ok=True)
            removed += 1
        return removed
