"""Read a folder tree from a zip archive or a directory, refusing anything hostile.

Nothing here writes: it returns the entries to import, or raises before any of them is used.
Refused: absolute paths and ``..`` (path traversal), links, encrypted entries, duplicate
names, archives over the entry / size limits, and entries whose compression ratio or real
size betray a zip bomb.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from foldwise.service.config import Settings
from foldwise.service.documents.extract import is_supported
from foldwise.service.errors import InvalidInputError, TooLargeError

# Members that operating systems add to archives and folders; never the person's documents.
_JUNK_PARTS = {"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini"}


@dataclass(frozen=True)
class Entry:
    """One file to import: its folder path (tuple of names), its name and its bytes."""

    folders: tuple[str, ...]
    filename: str
    data: bytes


@dataclass
class Listing:
    """The files to import, the folders to make even when empty (an exported tree keeps its
    empty folders), and the files skipped (unsupported or hidden), by path."""

    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    folders: list[tuple[str, ...]] = field(default_factory=list)


def _safe_parts(name: str) -> tuple[str, ...]:
    """The components of an archive member name, or ``InvalidInputError`` for traversal."""
    if "\x00" in name or "\\" in name:
        raise InvalidInputError(
            f"archive member {name!r}: backslashes and NUL are not allowed in names"
        )
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise InvalidInputError(f"archive member {name!r}: absolute paths are not allowed")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise InvalidInputError(f"archive member {name!r}: '..' (path traversal) is not allowed")
    return parts


def _skippable(parts: tuple[str, ...]) -> bool:
    return any(p in _JUNK_PARTS or p.startswith(".") for p in parts) or not is_supported(parts[-1])


def _is_link(info: zipfile.ZipInfo) -> bool:
    # Unix mode bits live in the high 16 bits of external_attr when made on Unix.
    return stat.S_ISLNK(info.external_attr >> 16)


def read_zip(data: bytes, cfg: Settings) -> Listing:
    """The entries of a zip archive, all checked before any is returned."""
    if len(data) > cfg.max_archive_bytes:
        raise TooLargeError(f"archive is {len(data)} bytes; the limit is {cfg.max_archive_bytes}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise InvalidInputError(f"not a readable zip archive: {exc}") from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > cfg.max_archive_entries:
            raise TooLargeError(
                f"archive has {len(infos)} members; the limit is {cfg.max_archive_entries}"
            )
        declared = sum(i.file_size for i in infos)
        if declared > cfg.max_archive_unpacked_bytes:
            raise TooLargeError(
                f"archive unpacks to {declared} bytes; "
                f"the limit is {cfg.max_archive_unpacked_bytes}"
            )
        listing, seen = Listing(), set()
        wanted: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
        for info in infos:
            parts = _safe_parts(info.filename)
            if _is_link(info):
                raise InvalidInputError(
                    f"archive member {info.filename!r} is a link; links are not allowed"
                )
            if info.flag_bits & 0x1:
                raise InvalidInputError(f"archive member {info.filename!r} is encrypted")
            if not parts:
                continue
            if info.is_dir():
                if not any(p in _JUNK_PARTS or p.startswith(".") for p in parts):
                    listing.folders.append(parts)
                continue
            if parts in seen:
                raise InvalidInputError(f"archive member {info.filename!r} appears twice")
            seen.add(parts)
            if info.file_size > 1024 * 1024 and info.file_size > cfg.max_compression_ratio * max(
                info.compress_size, 1
            ):
                raise InvalidInputError(
                    f"archive member {info.filename!r} inflates "
                    f"{info.file_size // max(info.compress_size, 1)}"
                    f"-fold (zip bomb?); the limit is {cfg.max_compression_ratio:g}"
                )
            if _skippable(parts):
                listing.skipped.append("/".join(parts))
                continue
            if info.file_size > cfg.max_document_bytes:
                raise TooLargeError(
                    f"archive member {info.filename!r} is {info.file_size} bytes; "
                    f"the limit is {cfg.max_document_bytes}"
                )
            wanted.append((info, parts))
        total = 0
        for info, parts in wanted:
            try:
                with archive.open(info) as member:
                    # Read one byte more than declared: a member that lies about its size
                    # (a classic bomb) is caught without inflating it further.
                    content = member.read(info.file_size + 1)
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
                raise InvalidInputError(
                    f"archive member {info.filename!r} is corrupt: {exc}"
                ) from exc
            total += len(content)
            if len(content) > info.file_size or total > cfg.max_archive_unpacked_bytes:
                raise InvalidInputError(
                    f"archive member {info.filename!r} is larger than it declares"
                )
            listing.entries.append(Entry(parts[:-1], parts[-1], content))
    return listing


def read_directory(root: Path, cfg: Settings) -> Listing:
    """The files under directory ``root``, with the same rules as a zip (links refused)."""
    if root.is_symlink() or not root.is_dir():
        raise InvalidInputError(f"{root} is not a directory")
    listing, count, total = Listing(), 0, 0
    paths: list[tuple[Path, tuple[str, ...]]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for name in dirnames + filenames:
            if (here / name).is_symlink():
                raise InvalidInputError(f"{here / name} is a link; links are not allowed")
        # Hidden and system folders (.git, __MACOSX) are not walked at all: they can hold
        # far more files than the person's documents and would trip the entry limit.
        for name in [d for d in dirnames if d.startswith(".") or d in _JUNK_PARTS]:
            dirnames.remove(name)
            listing.skipped.append((here / name).relative_to(root).as_posix() + "/")
        dirnames.sort()
        listing.folders.extend((here / name).relative_to(root).parts for name in dirnames)
        for name in sorted(filenames):
            path = here / name
            parts = path.relative_to(root).parts
            count += 1
            if count > cfg.max_archive_entries:
                raise TooLargeError(f"more than {cfg.max_archive_entries} files under {root}")
            if not path.is_file():
                raise InvalidInputError(f"{path} is not a regular file")
            if _skippable(parts):
                listing.skipped.append("/".join(parts))
                continue
            size = path.stat().st_size
            if size > cfg.max_document_bytes:
                raise TooLargeError(
                    f"{path} is {size} bytes; the limit is {cfg.max_document_bytes}"
                )
            total += size
            if total > cfg.max_archive_unpacked_bytes:
                raise TooLargeError(
                    f"files under {root} exceed {cfg.max_archive_unpacked_bytes} bytes"
                )
            paths.append((path, parts))
    for path, parts in paths:
        listing.entries.append(Entry(parts[:-1], parts[-1], path.read_bytes()))
    return listing


def as_posix(parts: tuple[str, ...]) -> str:
    """Join path components for messages."""
    return str(PurePosixPath(*parts)) if parts else ""
