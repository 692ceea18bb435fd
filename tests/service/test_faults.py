"""Faults against a real ``foldwise serve``: kill -9 in the middle of a zip import and of a
batch, then a restart; and a kill -9 after work was done, which must lose none of it.
(The worker killed mid-recluster is tests/service/test_recluster_worker.py; a critique during
a recluster, tests/service/test_recluster_jobs.py::test_stale_result_is_discarded_never_stored.)
"""

from __future__ import annotations

import io
import threading
import time
import zipfile
from pathlib import Path

import httpx2
import pytest

from foldwise.bench.served import Server
from foldwise.service.documents.writers import WRITERS_DIR

from .test_load import _database, _drop


def _stored_files(blobs: Path) -> set[str]:
    return {
        p.relative_to(blobs).as_posix()
        for p in blobs.rglob("*")
        if p.is_file() and WRITERS_DIR not in p.relative_to(blobs).parts
    }


def _writing_started(blobs: Path) -> bool:
    journals = list((blobs / WRITERS_DIR).glob("*.journal")) if blobs.exists() else []
    return any(j.stat().st_size for j in journals)


def _kill_while_writing(server: Server, blobs: Path, send: object) -> None:
    """Send a request in the background and kill -9 the server once it writes blobs."""
    errors: list[Exception] = []

    def request() -> None:
        try:
            send()  # type: ignore[operator]
        except httpx2.TransportError as exc:  # the server died under it: expected
            errors.append(exc)

    sender = threading.Thread(target=request)
    sender.start()
    deadline = time.monotonic() + 120
    while not _writing_started(blobs) and time.monotonic() < deadline and sender.is_alive():
        time.sleep(0.002)
    # Kill once files are being written (a fixed pause was too short on a loaded machine).
    while not _stored_files(blobs) and time.monotonic() < deadline and sender.is_alive():
        time.sleep(0.005)
    time.sleep(0.02)
    server.kill()
    sender.join(timeout=60)
    assert errors, "the request finished before the kill: nothing was tested"


def _assert_whole_and_clean(server: Server, blobs: Path, expected: int) -> None:
    """All or nothing, every document with its file, and no file without its document."""
    documents = server.call("GET", "/api/documents", params={"limit": 500}).json()
    assert documents["total"] in (0, expected), documents["total"]
    # Every text is unique, so every document has a file of its own.
    assert len(_stored_files(blobs)) == documents["total"]
    for document in documents["items"][:20]:
        assert server.call("GET", f"/api/documents/{document['id']}/file").status_code == 200


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_kill_9_mid_zip_import_and_mid_batch_then_restart(kind: str, tmp_path: Path) -> None:
    env, scratch = _database(kind)
    data = tmp_path / "data"
    blobs = data / "blobs"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for index in range(3000):
            zipped.writestr(f"folder{index % 30}/doc{index}.txt", f"document {index} " * 400)
    batch = {"documents": [{"text": f"batch document {i} " + "word " * 20000} for i in range(400)]}
    try:
        with Server(data, env=env) as server:
            url, headers = server.url, server.headers
            _kill_while_writing(
                server,
                blobs,
                lambda: httpx2.post(
                    f"{url}/api/import/zip",
                    files={"file": ("tree.zip", archive.getvalue(), "application/zip")},
                    headers=headers,
                    timeout=120,
                ),
            )
            assert _stored_files(blobs), "no file was written before the kill"
            server.restart()  # serve removes what the dead process never committed
            assert server.call("GET", "/api/folders").json() == []
            _assert_whole_and_clean(server, blobs, expected=3000)

            _kill_while_writing(
                server,
                blobs,
                lambda: httpx2.post(
                    f"{url}/api/documents/batch", json=batch, headers=headers, timeout=120
                ),
            )
            server.restart()
            _assert_whole_and_clean(server, blobs, expected=400)
    finally:
        _drop(scratch)


@pytest.mark.slow
def test_jobs_critiques_and_tree_versions_survive_a_kill_9(tmp_path: Path) -> None:
    with Server(tmp_path / "data", env={"FOLDWISE_RECLUSTER_AUTO": "false"}) as server:
        # No secret configured: the first start made this install's own.
        secret = (tmp_path / "data" / "secret_key").read_text()
        letters = server.call("POST", "/api/folders", json={"name": "letters"}).json()["id"]
        recipes = server.call("POST", "/api/folders", json={"name": "recipes"}).json()["id"]
        for index in range(6):
            for folder, words in ((letters, "dear insurance claim"), (recipes, "flour oven bake")):
                text = f"{words} {index} " + words * 5
                server.call("POST", "/api/documents", json={"text": text, "folder_id": folder})
        new = [
            server.call("POST", "/api/documents", json={"text": f"bake a cake {i}"}).json()
            for i in range(3)
        ]
        ids = [n["document"]["id"] for n in new]
        moved = server.call(
            "POST",
            "/api/critiques",
            json={"kind": "move", "document_id": ids[0], "folder_id": recipes},
        )
        assert moved.status_code == 201, moved.text
        tree, _ = server.recluster()
        before = {
            "jobs": server.call("GET", "/api/jobs").json()["items"],
            "critiques": server.call("GET", "/api/critiques").json(),
            "version": tree["version"],
            "placements": tree.get("placements"),
        }
        server.kill()
        server.restart()
        after_tree = server.call("GET", "/api/tree/extended").json()
        assert server.call("GET", "/api/jobs").json()["items"] == before["jobs"]
        assert server.call("GET", "/api/critiques").json() == before["critiques"]
        assert after_tree["version"] == before["version"] >= 1
        assert after_tree.get("placements") == before["placements"]
        assert (tmp_path / "data" / "secret_key").read_text() == secret  # sessions survive too
