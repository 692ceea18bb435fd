"""Export: the organised tree out as a zip (API) or a directory (CLI), and back in again."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from .helpers import Api, run_cli, zip_bytes
from .test_imports import post_zip


def _tree(client: TestClient, headers: dict[str, str]) -> tuple[set[str], set[tuple[str, str]]]:
    """(folder paths, (folder path, content hash) of every document) of an account."""
    folders = {f["id"]: f["path"] for f in client.get("/api/folders", headers=headers).json()}
    documents = client.get("/api/documents?limit=500", headers=headers).json()["items"]
    placed = {(folders.get(d["folder_id"], ""), d["content_hash"]) for d in documents}
    return set(folders.values()), placed


def _export(client: TestClient, headers: dict[str, str], **params: int) -> zipfile.ZipFile:
    response = client.get("/api/export", params=params, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"].startswith("attachment;")
    return zipfile.ZipFile(io.BytesIO(response.content))


def _organised(client: TestClient, api: Api, headers: dict[str, str]) -> None:
    """Folders (one empty), clashing and awkward titles, and an unfiled document."""
    archive = zip_bytes(
        {
            "taxes/2024/return.txt": b"tax return 2024",
            "taxes/2024/receipts.md": b"# receipts",
            "recipes/bread.txt": b"flour water salt",
            "recipes/soup.html": b"<html><body><p>tomato soup</p></body></html>",
        }
    )
    assert post_zip(client, headers, archive).status_code == 201
    api.folder(headers, "empty for now")
    recipes = next(
        f["id"]
        for f in client.get("/api/folders", headers=headers).json()
        if f["path"] == "recipes"
    )
    api.post(headers, "another bread", title="Bread", folder_id=recipes)
    api.post(headers, "a third bread", title="BREAD", folder_id=recipes)
    api.post(headers, "slashes", title="a/b: c\\d", folder_id=recipes)
    api.post(headers, "hidden?", title=".profile", folder_id=recipes)
    api.post(headers, "not filed yet", title="Inbox note")


def test_an_export_imported_into_a_fresh_account_gives_the_same_tree(
    client: TestClient, api: Api
) -> None:
    alice, bob = api.user("alice"), api.user("bob")
    _organised(client, api, alice)
    exported = _export(client, alice)
    names = exported.namelist()
    assert "empty for now/" in names
    # Clashes (compared without case) resolved, oldest first: the imported bread.txt keeps it.
    assert {"recipes/bread.txt", "recipes/Bread (2).txt", "recipes/BREAD (3).txt"} <= set(names)
    assert "recipes/a_b: c_d.txt" in names and "recipes/_profile.txt" in names
    assert "Inbox note.txt" in names  # unfiled at the top
    assert exported.read("recipes/bread.txt") == b"flour water salt"  # the original bytes

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as copy:
        for info in exported.infolist():
            copy.writestr(info, exported.read(info))
    assert post_zip(client, bob, buffer.getvalue()).status_code == 201
    assert _tree(client, bob) == _tree(client, alice)


def test_one_folder_exports_under_its_own_name(client: TestClient, api: Api) -> None:
    alice = api.user()
    _organised(client, api, alice)
    folder = next(
        f for f in client.get("/api/folders", headers=alice).json() if f["path"] == "taxes/2024"
    )
    exported = _export(client, alice, folder_id=folder["id"])
    assert sorted(exported.namelist()) == ["2024/", "2024/receipts.md", "2024/return.txt"]
    bob = api.user("bob")
    assert (
        client.get("/api/export", params={"folder_id": folder["id"]}, headers=bob).status_code
        == 404
    )


def test_foldwise_export_writes_the_tree_to_a_directory(
    client: TestClient, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = api.user("alice")
    _organised(client, api, alice)
    target = tmp_path / "out"
    done = run_cli(api, monkeypatch, "export", str(target), "--user", "alice")
    assert done.exit_code == 0, done.stderr
    assert (target / "recipes" / "bread.txt").read_bytes() == b"flour water salt"
    assert (target / "empty for now").is_dir()
    assert (target / "Inbox note.txt").is_file()
    again = run_cli(api, monkeypatch, "export", str(target), "--user", "alice")
    assert again.exit_code == 1 and "not an empty directory" in again.stderr
    nobody = run_cli(api, monkeypatch, "export", str(tmp_path / "x"), "--user", "nobody")
    assert nobody.exit_code == 1 and "no user" in nobody.stderr
    assert not (tmp_path / "x").exists()
