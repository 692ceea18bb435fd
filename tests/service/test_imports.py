"""Import of a folder tree: zip upload and ``foldwise import``, and hostile archives."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from corpus_path import PYTHON_DOCS
from foldwise.service.config import Settings

from .helpers import Api, run_cli, zip_bytes, zip_directory

CORPUS = PYTHON_DOCS
needs_corpus = pytest.mark.usefixtures("corpus")


@pytest.fixture(scope="module")
def corpus_zip() -> bytes:
    return zip_directory(CORPUS)


def corpus_paths() -> set[str]:
    return {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()}


def stored_paths(client: TestClient, headers: dict[str, str]) -> set[str]:
    """``folder/path/filename`` of every stored document (``filename`` alone when unfiled)."""
    folders = {f["id"]: f["path"] for f in client.get("/api/folders", headers=headers).json()}
    paths, offset = set(), 0
    while True:
        page = client.get(f"/api/documents?offset={offset}&limit=500", headers=headers).json()
        for d in page["items"]:
            prefix = folders[d["folder_id"]] + "/" if d["folder_id"] else ""
            paths.add(prefix + d["filename"])
        offset += len(page["items"])
        if offset >= page["total"]:
            return paths


def post_zip(client: TestClient, headers: dict[str, str], data: bytes, **form: str):
    return client.post(
        "/api/import/zip", files={"file": ("tree.zip", data)}, data=form, headers=headers
    )


@needs_corpus
def test_python_docs_zip_gives_its_475_documents_in_its_folders(
    client: TestClient, api: Api, corpus_zip: bytes
) -> None:
    alice = api.user()
    response = post_zip(client, alice, corpus_zip)
    assert response.status_code == 201, response.text
    report = response.json()
    expected = corpus_paths()
    assert len(expected) == 475
    assert report["documents_created"] == 475
    assert report["duplicates"] == 0
    assert report["skipped"] == []
    # Every file, intro pages (_NAME.txt) included, sits in its own folder.
    assert stored_paths(client, alice) == expected
    tree = client.get("/api/folders/tree", headers=alice).json()
    assert tree["document_count"] == 475

    again = post_zip(client, alice, corpus_zip).json()
    assert (again["documents_created"], again["duplicates"]) == (0, 475)
    assert again["folders_created"] == 0


def test_import_under_a_folder_and_root_files(client: TestClient, api: Api) -> None:
    alice = api.user()
    target = api.folder(alice, "imported")
    data = zip_bytes(
        {
            "top.txt": b"top",
            "a/b/deep.md": b"deep",
            "a/mid.txt": b"mid",
            "a/pic.gif": b"GIF89a",  # GIF is not read (PNG is: a scan)
            "__MACOSX/a/._mid.txt": b"junk",
            "a/.DS_Store": b"junk",
        }
    )
    response = post_zip(client, alice, data, parent_id=str(target))
    assert response.status_code == 201, response.text
    report = response.json()
    assert report["documents_created"] == 3
    assert sorted(report["skipped"]) == ["__MACOSX/a/._mid.txt", "a/.DS_Store", "a/pic.gif"]
    assert stored_paths(client, alice) == {
        "imported/top.txt",
        "imported/a/mid.txt",
        "imported/a/b/deep.md",
    }


def test_import_merges_into_existing_folders(client: TestClient, api: Api) -> None:
    alice = api.user()
    existing = api.folder(alice, "a")
    report = post_zip(client, alice, zip_bytes({"a/x.txt": b"x", "b/y.txt": b"y"})).json()
    assert (report["folders_created"], report["folders_reused"]) == (1, 1)
    assert client.get(f"/api/folders/{existing}/documents", headers=alice).json()["total"] == 1


def _symlink_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ok/fine.txt", b"fine")
        link = zipfile.ZipInfo("ok/link.txt")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    return buffer.getvalue()


def _patched(data: bytes, local_offset: int, central_offset: int, value: bytes) -> bytes:
    """Overwrite a field in the first local header and the first central directory entry."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    central = out.find(b"PK\x01\x02")
    out[local + local_offset : local + local_offset + len(value)] = value
    out[central + central_offset : central + central_offset + len(value)] = value
    return bytes(out)


def _lying_size_zip() -> bytes:
    # 2 MB of zeros that claims to unpack to 1,000 bytes (a bomb that hides its size).
    data = zip_bytes({"big.txt": b"\0" * (2 * 1024 * 1024)})
    return _patched(data, 22, 24, (1000).to_bytes(4, "little"))


def _encrypted_flag_zip() -> bytes:
    data = zip_bytes({"secret.txt": b"secret"})
    return _patched(data, 6, 8, (1).to_bytes(2, "little"))


def _duplicate_zip() -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate we want
        archive.writestr("a/x.txt", b"first")
        archive.writestr("a/x.txt", b"second")
    return buffer.getvalue()


HOSTILE = {
    "traversal": (zip_bytes({"../evil.txt": b"evil"}), 422, "traversal"),
    "nested traversal": (zip_bytes({"a/../../evil.txt": b"evil"}), 422, "traversal"),
    "absolute path": (zip_bytes({"/etc/evil.txt": b"evil"}), 422, "absolute"),
    "windows drive": (zip_bytes({"C:/evil.txt": b"evil"}), 422, "absolute"),
    "backslash": (zip_bytes({"a\\..\\evil.txt": b"evil"}), 422, "backslash"),
    "symlink": (_symlink_zip(), 422, "link"),
    "zip bomb ratio": (zip_bytes({"bomb.txt": b"\0" * (5 * 1024 * 1024)}), 422, "bomb"),
    "zip bomb size": (
        zip_bytes({f"b{i}.txt": b"\0" * (1024 * 1024 - 1) for i in range(40)}),
        413,
        "unpacks",
    ),
    "lying sizes": (_lying_size_zip(), 422, "big.txt"),
    "encrypted": (_encrypted_flag_zip(), 422, "encrypted"),
    "too many entries": (zip_bytes({f"f{i}.txt": b"x" for i in range(2001)}), 413, "members"),
    "not a zip": (b"PK\x03\x04 this is not a zip at all", 422, "zip"),
    "empty upload": (b"", 422, "zip"),
    "corrupt member": (
        zip_bytes({"a/ok.txt": b"ok", "a/bad.pdf": b"%PDF-1.4 garbage"}),
        422,
        "a/bad.pdf",
    ),
    "empty member": (zip_bytes({"a/ok.txt": b"ok", "a/empty.txt": b""}), 422, "a/empty.txt"),
    "duplicate member": (_duplicate_zip(), 422, "twice"),
}


@pytest.fixture(scope="module")
def zip_world(shared_api: Api) -> tuple[Api, dict[str, str]]:
    """A user with a stored document, shared by the hostile-archive cases (each asserts
    that it changed nothing)."""
    alice = shared_api.user("alice")
    shared_api.post(alice, "already stored")
    return shared_api, alice


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_zip_is_refused_and_nothing_is_written(
    zip_world: tuple[Api, dict[str, str]], case: str
) -> None:
    api, alice = zip_world
    before = api.snapshot()
    data, status, needle = HOSTILE[case]
    response = post_zip(api.client, alice, data)
    assert response.status_code == status, response.text
    assert needle in response.json()["detail"]
    assert api.snapshot() == before


def test_oversized_archive_is_413(client: TestClient, api: Api) -> None:
    alice = api.user()
    before = api.snapshot()
    response = post_zip(client, alice, os.urandom(9 * 1024 * 1024))
    assert response.status_code == 413
    assert api.snapshot() == before


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(settings.data_dir),
        "FOLDWISE_DATABASE_URL": settings.sqlalchemy_url,
    }
    return subprocess.run(
        [sys.executable, "-m", "foldwise.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_corpus
def test_foldwise_import_command_gives_the_same_tree(
    client: TestClient, api: Api, settings: Settings
) -> None:
    alice = api.user()
    done = _cli(settings, "import", str(CORPUS), "--user", "alice")
    assert done.returncode == 0, done.stderr
    assert '"documents_created": 475' in done.stdout
    assert stored_paths(client, alice) == corpus_paths()


def test_foldwise_import_refuses_links_and_writes_nothing(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.user()
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "ok.txt").write_text("ok")
    (tree / "a" / "link.txt").symlink_to("/etc/hostname")
    before = api.snapshot()
    done = run_cli(api, monkeypatch, "import", str(tree), "--user", "alice")
    assert done.exit_code == 1
    assert "link" in done.stderr
    assert api.snapshot() == before
    unknown = run_cli(api, monkeypatch, "import", str(tree), "--user", "nobody")
    assert unknown.exit_code == 1
    assert "no user" in unknown.stderr


def test_foldwise_import_of_a_zip_file(
    client: TestClient, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = api.user()
    archive = tmp_path / "tree.zip"
    archive.write_bytes(zip_bytes({"a/x.txt": b"x", "a/b/y.md": b"y"}))
    done = run_cli(api, monkeypatch, "import", str(archive), "--user", "alice")
    assert done.exit_code == 0, done.stderr
    assert stored_paths(client, alice) == {"a/x.txt", "a/b/y.md"}


def test_foldwise_import_skips_hidden_folders_without_walking_them(
    client: TestClient, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = api.user()
    tree = tmp_path / "tree"
    (tree / "notes" / ".git" / "objects").mkdir(parents=True)
    (tree / "notes" / "todo.md").write_text("buy milk")
    limit = api.app.state.settings.max_archive_entries  # type: ignore[attr-defined]
    for i in range(limit + 1):  # more files than an import may hold, all hidden
        (tree / "notes" / ".git" / "objects" / f"{i}.txt").write_text("x")
    done = run_cli(api, monkeypatch, "import", str(tree), "--user", "alice")
    assert done.exit_code == 0, done.stderr
    assert '"notes/.git/"' in done.stdout
    assert stored_paths(client, alice) == {"notes/todo.md"}
