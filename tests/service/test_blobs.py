"""The blob store's layout: new blobs in one level of directories, blobs stored under the
earlier two-level layout still found and shared; a batch larger than the process may hold
open."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from foldwise.service.documents.blobs import MAX_OPEN_FILES, BlobStore, content_hash


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".writers")
    }


def test_a_new_blob_goes_one_directory_deep(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    data = b"one level"
    digest = content_hash(data)

    relative = store.put(data)

    assert relative == f"{digest[:2]}/{digest}"
    assert store.path(relative).read_bytes() == data
    assert store.put_many({digest: data}) == {digest: relative}
    assert _files(tmp_path) == {relative}


def test_a_blob_of_the_two_level_layout_is_reused_not_copied(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    old, other = b"stored before the layout changed", b"also before"
    legacy = {}
    for data in (old, other):
        digest = content_hash(data)
        legacy[digest] = f"{digest[:2]}/{digest[2:4]}/{digest}"
        store.path(legacy[digest]).parent.mkdir(parents=True, exist_ok=True)
        store.path(legacy[digest]).write_bytes(data)

    assert store.put(old) == legacy[content_hash(old)]
    assert store.put_many({content_hash(other): other}) == {
        content_hash(other): legacy[content_hash(other)]
    }
    assert _files(tmp_path) == set(legacy.values())


def test_a_batch_of_more_files_than_the_process_may_open_is_stored(tmp_path: Path) -> None:
    # An archive's new files are one batch; the soft limit is often 1,024 descriptors.
    store = BlobStore(tmp_path)
    blobs = {content_hash(d): d for d in (f"blob {i}".encode() for i in range(3 * MAX_OPEN_FILES))}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    already_open = len(os.listdir("/proc/self/fd"))
    limit = already_open + MAX_OPEN_FILES + 64
    if hard != resource.RLIM_INFINITY and hard < limit:
        limit = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        paths = store.put_many(blobs)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    assert len(paths) == len(blobs)
    assert all(store.path(paths[d]).read_bytes() == data for d, data in blobs.items())
