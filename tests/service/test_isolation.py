"""Each user sees only their own data: every endpoint is called as a second user."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from .helpers import Api, zip_bytes

# Every endpoint, with what bob must get when he aims it at alice's ids (``ids`` fills in
# alice's folder ``f``, document ``d`` and token ``t``). ``None``: a listing, checked below.
ENDPOINTS: dict[tuple[str, str], tuple[dict[str, Any], int | None]] = {
    ("GET", "/api/documents/{document_id}"): ({}, 404),
    ("GET", "/api/documents/{document_id}/file"): ({}, 404),
    ("PATCH", "/api/documents/{document_id}"): ({"json": {"title": "stolen"}}, 404),
    ("DELETE", "/api/documents/{document_id}"): ({}, 404),
    ("GET", "/api/folders/{folder_id}"): ({}, 404),
    ("PATCH", "/api/folders/{folder_id}"): ({"json": {"name": "stolen"}}, 404),
    ("DELETE", "/api/folders/{folder_id}"): ({"params": {"recursive": "true"}}, 404),
    ("GET", "/api/folders/{folder_id}/documents"): ({}, 404),
    ("DELETE", "/api/tokens/{token_id}"): ({}, 404),
    # Creating things that point into alice's folders.
    ("POST", "/api/folders"): ({"json": {"name": "x", "parent_id": "{f}"}}, 404),
    ("POST", "/api/documents"): ({"json": {"text": "x", "folder_id": "{f}"}}, 404),
    ("POST", "/api/documents/upload"): (
        {"files": {"file": ("x.txt", b"x")}, "data": {"folder_id": "{f}"}},
        404,
    ),
    ("POST", "/api/documents/batch"): (
        {"json": {"documents": [{"text": "x"}], "folder_id": "{f}"}},
        404,
    ),
    ("POST", "/api/documents/batch/upload"): (
        {"files": [("files", ("x.txt", b"x"))], "data": {"folder_id": "{f}"}},
        404,
    ),
    ("POST", "/api/import/zip"): (
        {"files": {"file": ("t.zip", zip_bytes({"a/x.txt": b"x"}))}, "data": {"parent_id": "{f}"}},
        404,
    ),
    # Listings: bob's answers must not mention alice's data.
    ("GET", "/api/documents"): ({}, None),
    ("GET", "/api/folders"): ({}, None),
    ("GET", "/api/folders/tree"): ({"params": {"include_documents": "true"}}, None),
    ("GET", "/api/search"): ({"params": {"q": "confidential text"}}, None),
    ("GET", "/api/tokens"): ({}, None),
    ("GET", "/api/users/me"): ({}, None),
    ("POST", "/api/tokens"): ({"json": {}}, None),
    ("GET", "/auth/csrf"): ({}, None),  # bob has no cookie session: 401, checked below
    ("POST", "/auth/logout"): ({}, None),
}
# The endpoints of this area; other areas test their own endpoints the same way.
FOUNDATION_PREFIXES = (
    "/api/documents",
    "/api/folders",
    "/api/import",
    "/api/search",
    "/api/tokens",
    "/api/users",
    "/auth",
)
PUBLIC = {("POST", "/auth/login"), ("GET", "/healthz")}


def _fill(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids[value[1:-1]]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


def test_every_endpoint_is_covered(client: TestClient) -> None:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    routes = {
        (method.upper(), path)
        for path, ops in paths.items()
        for method in ops
        if path.startswith(FOUNDATION_PREFIXES)
    }
    assert routes - PUBLIC == set(ENDPOINTS)


def test_second_user_gets_nothing_of_the_first(client: TestClient, api: Api) -> None:
    alice, bob = api.user("alice"), api.user("bob")
    folder = api.folder(alice, "alice-private")
    api.folder(alice, "child", folder)
    doc = api.post(alice, "confidential alice text", title="alice-secret", folder_id=folder)
    token = client.post("/api/tokens", json={"label": "alice-token"}, headers=alice).json()
    ids = {"f": folder, "d": doc["document"]["id"], "t": token["id"]}
    before = api.snapshot()

    for (method, path), (kwargs, expected) in ENDPOINTS.items():
        url = path.format(document_id=ids["d"], folder_id=ids["f"], token_id=ids["t"])
        filled = {k: _fill(v, ids) for k, v in kwargs.items()}
        if "data" in filled:
            filled["data"] = {k: str(v) for k, v in filled["data"].items()}
        response = client.request(method, url, headers=bob, **filled)
        if expected is not None:
            assert response.status_code == expected, (method, path, response.text)
            continue
        assert response.status_code < 500, (method, path, response.text)
        body = response.text
        for secret in ("alice-private", "alice-secret", "confidential alice", "alice-token"):
            assert secret not in body, (method, path, body)

    after = api.snapshot()
    # Bob's own token from POST /api/tokens is the only change.
    assert after["api_tokens"] == before["api_tokens"] + 1
    for key in ("documents", "folders", "documents_state", "folders_state", "blobs"):
        assert after[key] == before[key], key
    assert client.get(f"/api/documents/{ids['d']}", headers=alice).json()["title"] == "alice-secret"
