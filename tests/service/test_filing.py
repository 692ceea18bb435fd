"""One filing operation: PATCH document, PATCH / DELETE folder and critiques all check the
triples in force, count as a critique (history, counter, recluster) and undo alike."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from .helpers import Api


def _seq(client: TestClient, h: dict[str, str]) -> int:
    return int(client.get("/api/tree/extended", headers=h).json()["critique_seq"])


def _kinds(client: TestClient, h: dict[str, str]) -> list[str]:
    return [c["kind"] for c in client.get("/api/critiques", headers=h).json()]


def _setup(client: TestClient, api: Api) -> dict[str, Any]:
    h = api.user("alice")
    a, b, c = (api.folder(h, name) for name in ("a", "b", "c"))
    x = api.post(h, "alpha document one about apples", folder_id=a)["document"]["id"]
    y = api.post(h, "beta document two about bananas", folder_id=b)["document"]["id"]
    z = api.post(h, "gamma document three about cherries", folder_id=c)["document"]["id"]
    u = api.post(h, "an unfiled note about apples and bananas")["document"]["id"]
    return {"h": h, "a": a, "b": b, "c": c, "x": x, "y": y, "z": z, "u": u}


def test_patch_document_is_checked_like_a_move_critique(client: TestClient, api: Api) -> None:
    s = _setup(client, api)
    h = s["h"]
    said = client.post(
        "/api/critiques", headers=h, json={"kind": "closer", "a": s["u"], "b": s["y"], "c": s["z"]}
    )
    assert said.status_code == 201
    seq = _seq(client, h)
    # Filing u next to z contradicts "u is closer to y than to z": refused, as the critique is.
    for attempt in (
        client.post(
            "/api/critiques",
            headers=h,
            json={"kind": "move", "document_id": s["u"], "folder_id": s["c"]},
        ),
        client.patch(f"/api/documents/{s['u']}", headers=h, json={"folder_id": s["c"]}),
    ):
        assert attempt.status_code == 409, attempt.text
        assert "contradicts" in attempt.json()["detail"]
    assert client.get(f"/api/documents/{s['u']}", headers=h).json()["folder_id"] is None
    assert _seq(client, h) == seq
    # A consistent PATCH is a move: history, counter, undo.
    moved = client.patch(f"/api/documents/{s['u']}", headers=h, json={"folder_id": s["b"]})
    assert moved.status_code == 200 and moved.json()["folder_id"] == s["b"]
    assert _seq(client, h) == seq + 1 and _kinds(client, h)[0] == "move"
    # The same place again changes nothing; a title-only PATCH is no filing change.
    assert (
        client.patch(f"/api/documents/{s['u']}", headers=h, json={"folder_id": s["b"]}).status_code
        == 200
    )
    assert (
        client.patch(f"/api/documents/{s['u']}", headers=h, json={"title": "Note"}).status_code
        == 200
    )
    assert _seq(client, h) == seq + 1
    # Unfiling is recorded too, and undone like the rest.
    out = client.patch(f"/api/documents/{s['u']}", headers=h, json={"folder_id": None})
    assert out.status_code == 200 and out.json()["folder_id"] is None
    history = client.get("/api/critiques", headers=h).json()
    assert history[0]["kind"] == "unfile" and _seq(client, h) == seq + 2
    undone = client.delete(f"/api/critiques/{history[0]['id']}", headers=h)
    assert undone.status_code == 200
    assert client.get(f"/api/documents/{s['u']}", headers=h).json()["folder_id"] == s["b"]


def test_moving_a_folder_is_checked_recorded_and_undone(client: TestClient, api: Api) -> None:
    s = _setup(client, api)
    h = s["h"]
    # x, y, z sit in three top-level folders: "x is closer to y than to z" fits them.
    said = client.post(
        "/api/critiques", headers=h, json={"kind": "closer", "a": s["x"], "b": s["y"], "c": s["z"]}
    )
    assert said.status_code == 201, said.text
    seq = _seq(client, h)
    # Moving a under c puts x next to z, deeper than next to y: refused, nothing moves.
    refused = client.patch(f"/api/folders/{s['a']}", headers=h, json={"parent_id": s["c"]})
    assert refused.status_code == 409 and "contradicts" in refused.json()["detail"]
    assert client.get(f"/api/folders/{s['a']}", headers=h).json()["parent_id"] is None
    assert _seq(client, h) == seq
    # Under b it fits: recorded as move_folder, undone back to the top level.
    ok = client.patch(f"/api/folders/{s['a']}", headers=h, json={"parent_id": s["b"]})
    assert ok.status_code == 200 and ok.json()["parent_id"] == s["b"]
    made = client.get("/api/critiques", headers=h).json()[0]
    assert made["kind"] == "move_folder" and _seq(client, h) == seq + 1
    # A rename alone is no filing change.
    assert (
        client.patch(f"/api/folders/{s['a']}", headers=h, json={"name": "apples"}).status_code
        == 200
    )
    assert _seq(client, h) == seq + 1
    assert client.delete(f"/api/critiques/{made['id']}", headers=h).status_code == 200
    assert client.get(f"/api/folders/{s['a']}", headers=h).json()["parent_id"] is None


def test_deleting_a_folder_is_recorded_and_not_undoable(client: TestClient, api: Api) -> None:
    s = _setup(client, api)
    h = s["h"]
    seq = _seq(client, h)
    gone = client.delete(f"/api/folders/{s['c']}", headers=h)
    assert gone.status_code == 200 and gone.json()["documents_unfiled"] == 1
    made = client.get("/api/critiques", headers=h).json()[0]
    assert made["kind"] == "delete_folder" and _seq(client, h) == seq + 1
    refused = client.delete(f"/api/critiques/{made['id']}", headers=h)
    assert refused.status_code == 409 and "cannot be undone" in refused.json()["detail"]
    # Another user sees none of it.
    bob = api.user("bob")
    assert client.get("/api/critiques", headers=bob).json() == []
    assert (
        client.patch(f"/api/documents/{s['u']}", headers=bob, json={"folder_id": None}).status_code
        == 404
    )
