"""Every change of where a document or folder is goes through one operation
(critiques/filing.py): the same consistency check, critique counter, recluster, history and
undo for PATCH document, PATCH / DELETE folder, critiques and imports. SQLite and PostgreSQL."""

from __future__ import annotations

import io
import time
import zipfile
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from foldwise.service.critiques.models import TreeState
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime

from .helpers import Api
from .recluster_support import fast_options, rt, seed_small, worker  # noqa: F401 (fixtures)
from .test_critiques import _state

__all__ = ["rt"]


def _seq(rt: Runtime, user_id: int) -> int:
    with rt.sessions() as session:
        state = session.get(TreeState, user_id)
        return state.critique_seq if state is not None else 0


def _filed(rt: Runtime) -> dict[int, list[int]]:
    """Folder id -> its documents (sorted)."""
    out: dict[int, list[int]] = {}
    with rt.sessions() as session:
        for doc_id, folder_id in session.execute(
            select(Document.id, Document.folder_id)
            .where(Document.folder_id.is_not(None))
            .order_by(Document.id)
        ):
            out.setdefault(folder_id, []).append(doc_id)
    return dict(sorted(out.items()))


def _history(client: TestClient, h: dict[str, str]) -> list[dict[str, Any]]:
    return list(client.get("/api/critiques", headers=h).json())


def test_patch_document_is_checked_like_a_move_critique(client: TestClient, rt: Runtime) -> None:
    """The issue's reproduction: a move that contradicts a ``closer`` triple is refused on both
    paths, and the next, unrelated critique is not blamed for it."""
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    (f1, docs1), (_, docs2) = list(_filed(rt).items())[:2]
    u, other = sorted(d for ids in alice["new"].values() for d in ids)[:2]
    y, z = docs2[0], docs1[0]
    assert client.post(
        "/api/critiques", json={"kind": "closer", "a": u, "b": y, "c": z}, headers=h
    ).status_code == 201  # fmt: skip
    before, seq = _state(rt), _seq(rt, alice["user_id"])
    by_critique = client.post(
        "/api/critiques", json={"kind": "move", "document_id": u, "folder_id": f1}, headers=h
    )
    by_patch = client.patch(f"/api/documents/{u}", json={"folder_id": f1}, headers=h)
    assert by_critique.status_code == 409 and by_patch.status_code == 409, by_patch.text
    assert f"({u}, {y}, {z})" in by_patch.json()["detail"]
    assert _state(rt) == before and _seq(rt, alice["user_id"]) == seq
    # An unrelated move afterwards goes through.
    moved = client.patch(f"/api/documents/{other}", json={"folder_id": f1}, headers=h)
    assert moved.status_code == 200 and moved.json()["folder_id"] == f1
    assert _seq(rt, alice["user_id"]) == seq + 1


def test_patch_document_counts_schedules_and_undoes(
    client: TestClient,
    rt: Runtime,
    worker: EmbeddedWorker,  # noqa: F811 (the fixture)
) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    f1 = next(iter(_filed(rt)))
    doc = sorted(d for ids in alice["new"].values() for d in ids)[0]
    rt.options = fast_options(auto=True, debounce_seconds=60)
    seq = _seq(rt, alice["user_id"])
    # A retitle is not a filing: no history, no count.
    assert client.patch(f"/api/documents/{doc}", json={"title": "T"}, headers=h).status_code == 200
    assert _seq(rt, alice["user_id"]) == seq and len(_history(client, h)) == 1  # the import
    assert (
        client.patch(f"/api/documents/{doc}", json={"folder_id": f1}, headers=h).status_code == 200
    )
    assert _seq(rt, alice["user_id"]) == seq + 1
    # The debounced automatic recluster is queued (by the worker, from the task the commit
    # put on the queue).
    deadline = time.monotonic() + 20
    while True:
        with rt.sessions() as session:
            queued = session.scalars(
                select(ReclusterJob).where(ReclusterJob.state == "queued")
            ).all()
        if queued or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert [j.trigger for j in queued] == ["auto"]
    # Filing it where it is already changes nothing.
    assert (
        client.patch(f"/api/documents/{doc}", json={"folder_id": f1}, headers=h).status_code == 200
    )
    assert _seq(rt, alice["user_id"]) == seq + 1
    entry = _history(client, h)[0]
    assert (entry["kind"], entry["document_id"], entry["folder_id"]) == ("move", doc, f1)
    assert entry["filed_document_ids"] == [doc]
    # Unfiling goes through the same operation and is undone back into f1.
    unfile = client.patch(f"/api/documents/{doc}", json={"folder_id": None}, headers=h)
    assert unfile.json()["folder_id"] is None
    last = _history(client, h)[0]
    assert (last["kind"], last["folder_id"]) == ("move", None)
    undone = client.delete(f"/api/critiques/{last['id']}", headers=h).json()
    assert undone["documents_restored"] == 1
    assert client.get(f"/api/documents/{doc}", headers=h).json()["folder_id"] == f1
    assert _seq(rt, alice["user_id"]) == seq + 3  # two moves and an undo


def test_folder_move_is_checked_counted_and_undone(client: TestClient, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    (fa, da), (fb, db), (fc, dc) = list(_filed(rt).items())[:3]
    x, y, z = da[0], db[0], dc[0]
    closer = {"kind": "closer", "a": x, "b": y, "c": z}
    assert client.post("/api/critiques", json=closer, headers=h).status_code == 201
    before, seq = _state(rt), _seq(rt, alice["user_id"])
    # Folder c inside folder a: x and z would share a folder that y is outside of.
    refused = client.patch(f"/api/folders/{fc}", json={"parent_id": fa}, headers=h)
    assert refused.status_code == 409, refused.text
    assert f"({x}, {y}, {z})" in refused.json()["detail"]
    assert _state(rt) == before and _seq(rt, alice["user_id"]) == seq
    # Folder a inside folder b keeps (x, y, z): allowed, renamed on the way, counted.
    moved = client.patch(f"/api/folders/{fa}", json={"parent_id": fb, "name": "Moved"}, headers=h)
    assert moved.status_code == 200 and moved.json()["parent_id"] == fb
    assert _seq(rt, alice["user_id"]) == seq + 1
    entry = _history(client, h)[0]
    assert (entry["kind"], entry["folder_id"], entry["name"]) == ("folder_move", fa, "Moved")
    # A rename alone is no filing.
    client.patch(f"/api/folders/{fb}", json={"name": "B2"}, headers=h)
    assert _seq(rt, alice["user_id"]) == seq + 1
    assert client.delete(f"/api/critiques/{entry['id']}", headers=h).status_code == 200
    with rt.sessions() as session:
        folder = session.get(Folder, fa)
        assert folder is not None and folder.parent_id is None and folder.name != "Moved"


def test_folder_delete_is_counted_and_undone(client: TestClient, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    (fa, da), (fb, db) = list(_filed(rt).items())[:2]
    assert client.patch(f"/api/folders/{fb}", json={"parent_id": fa}, headers=h).status_code == 200
    before = _filed(rt)
    seq = _seq(rt, alice["user_id"])
    gone = client.delete(f"/api/folders/{fa}?recursive=true", headers=h).json()
    assert gone == {"folders_deleted": 2, "documents_unfiled": len(da) + len(db)}
    assert _seq(rt, alice["user_id"]) == seq + 1
    entry = _history(client, h)[0]
    assert entry["kind"] == "folder_delete" and entry["folder_id"] == fa
    assert entry["filed_document_ids"] == sorted(da + db)
    # Undo: both folders come back (new ids, same names and nesting), the documents refiled.
    undone = client.delete(f"/api/critiques/{entry['id']}", headers=h).json()
    assert undone["folders_restored"] == 2 and undone["documents_restored"] == len(da + db)
    after = _filed(rt)
    assert sorted(map(sorted, after.values())) == sorted(map(sorted, before.values()))
    with rt.sessions() as session:
        names = dict(session.execute(select(Folder.id, Folder.name)).all())
        parents = dict(session.execute(select(Folder.id, Folder.parent_id)).all())
    new_a = next(f for f, docs in after.items() if docs == sorted(da))
    new_b = next(f for f, docs in after.items() if docs == sorted(db))
    assert parents[new_b] == new_a and names[new_a] and new_a not in (fa, fb)
    assert _seq(rt, alice["user_id"]) == seq + 2


def _zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


def test_import_is_counted_and_undone(client: TestClient, api: Api, rt: Runtime) -> None:
    h = api.user("carol")
    data = _zip(
        {
            "notes/a.txt": "alpha beta gamma notes about regular expressions",
            "notes/deep/b.txt": "delta epsilon notes about sockets and networking",
            "top.txt": "an unfiled note at the top of the archive",
        }
    )
    made = client.post("/api/import/zip", files={"file": ("n.zip", data)}, headers=h)
    assert made.status_code == 201 and made.json()["folders_created"] == 2
    entry = _history(client, h)[0]
    assert entry["kind"] == "import" and len(entry["filed_document_ids"]) == 2
    with rt.sessions() as session:
        user_id = session.scalar(select(Document.user_id).limit(1))
    assert user_id is not None and _seq(rt, user_id) == 1
    undone = client.delete(f"/api/critiques/{entry['id']}", headers=h).json()
    assert undone["documents_unfiled"] == 2 and undone["folder_deleted"]
    tree = client.get("/api/folders/tree", headers=h).json()
    # Undo keeps the documents (unfiled) and removes the folders it made.
    assert tree["folder_count"] == 0 and tree["unfiled_count"] == 3


def test_undoing_a_folder_move_never_makes_a_cycle(client: TestClient, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    fa, fb = list(_filed(rt))[:2]
    assert client.patch(f"/api/folders/{fb}", json={"parent_id": fa}, headers=h).status_code == 200
    to_top = client.patch(f"/api/folders/{fb}", json={"parent_id": None}, headers=h)
    assert to_top.status_code == 200
    entry = _history(client, h)[0]
    assert client.patch(f"/api/folders/{fa}", json={"parent_id": fb}, headers=h).status_code == 200
    undone = client.delete(f"/api/critiques/{entry['id']}", headers=h).json()
    assert undone["notes"] == [f"folder {fb} stays: its old parent is inside it now"]
    with rt.sessions() as session:
        a, b = session.get(Folder, fa), session.get(Folder, fb)
        assert a is not None and b is not None and (a.parent_id, b.parent_id) == (fb, None)
