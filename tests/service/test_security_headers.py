"""Security headers on every answer, and originals that a browser never runs."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from .helpers import Api


def _assert_hardened(headers: dict[str, str] | object) -> None:
    assert headers["x-content-type-options"] == "nosniff"  # type: ignore[index]
    assert headers["x-frame-options"] == "DENY"  # type: ignore[index]
    assert headers["referrer-policy"] == "same-origin"  # type: ignore[index]
    policy = headers["content-security-policy"]  # type: ignore[index]
    scripts = re.search(r"script-src ([^;]*)", policy).group(1)  # type: ignore[union-attr]
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts
    assert "frame-ancestors 'none'" in policy


def test_every_kind_of_answer_carries_the_headers(client: TestClient, api: Api) -> None:
    alice = api.user()
    answers = [
        client.get("/healthz"),
        client.get("/api/documents", headers=alice),
        client.get("/api/documents/999999", headers=alice),  # 404
        client.post(
            "/api/folders",
            content=b'{"name": NaN}',
            headers={**alice, "content-type": "application/json"},
        ),  # 422 from the JSON check
        client.get("/login"),
        client.get("/static/app.css"),
    ]
    for answer in answers:
        _assert_hardened(answer.headers)


def test_the_app_page_allows_only_its_nonced_import_map(client: TestClient, api: Api) -> None:
    api.user("alice", password="pw")
    assert client.post("/auth/login", json={"name": "alice", "password": "pw"}).status_code == 200
    page = client.get("/")
    assert page.status_code == 200
    _assert_hardened(page.headers)
    nonce = re.search(r"'nonce-([^']+)'", page.headers["content-security-policy"]).group(1)  # type: ignore[union-attr]
    scripts = re.findall(r"<script([^>]*)>", page.text)
    assert scripts
    for attributes in scripts:
        runs_inline = "src=" not in attributes and 'type="application/json"' not in attributes
        if runs_inline:
            assert f'nonce="{nonce}"' in attributes, attributes
    assert (
        client.get("/").headers["content-security-policy"]
        != page.headers["content-security-policy"]
    )


def test_an_uploaded_page_comes_back_as_an_inert_attachment(client: TestClient, api: Api) -> None:
    alice = api.user()
    evil = b"<html><body><script>alert(document.cookie)</script>steal</body></html>"
    stored = client.post(
        "/api/documents/upload", files={"file": ("evil.html", evil, "text/html")}, headers=alice
    ).json()["document"]
    original = client.get(f"/api/documents/{stored['id']}/file", headers=alice)
    assert original.content == evil
    assert original.headers["content-type"] == "application/octet-stream"
    assert original.headers["content-disposition"].startswith("attachment;")
    assert original.headers["x-content-type-options"] == "nosniff"
    text = client.post(
        "/api/documents/upload", files={"file": ("notes.txt", b"plain notes")}, headers=alice
    ).json()["document"]
    plain = client.get(f"/api/documents/{text['id']}/file", headers=alice)
    assert plain.headers["content-type"].startswith("text/plain")
    assert plain.headers["content-disposition"].startswith("attachment;")
