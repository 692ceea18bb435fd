"""The blob store's layout: new blobs in one level of directories, blobs stored under the
earlier two-level layout still found and shared."""

from __future__ import annotations

from pathlib import Path

from foldwise.service.documents.blobs import BlobStore, content_hash


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
