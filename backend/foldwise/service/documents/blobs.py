"""Original files, stored once per content hash and written atomically."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def content_hash(data: bytes) -> str:
    """SHA-256 hex of ``data``: the document's identity and its blob's name."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Content-addressed files under ``root``: ``ab/cd/abcd...``.

    A blob is written to a temporary file in its final directory, flushed to disk and then
    renamed into place, so a reader never sees a partial file, and a crash leaves at most a
    stray temporary file. Identical content shares one blob (also across users).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def relative_path(self, digest: str) -> str:
        """Where the blob of ``digest`` lives, relative to ``root``."""
        return f"{digest[:2]}/{digest[2:4]}/{digest}"

    def path(self, relative: str) -> Path:
        """Absolute path of a stored blob."""
        return self.root / relative

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` (if not there yet); returns its relative path."""
        digest = digest or content_hash(data)
        relative = self.relative_path(digest)
        target = self.path(relative)
        if target.exists():
            return relative
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return relative
