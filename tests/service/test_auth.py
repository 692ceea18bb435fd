"""Accounts, API tokens, the browser session and its CSRF protection."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from itsdangerous import URLSafeTimedSerializer

from foldwise.service.config import Settings
from foldwise.service.users import auth

from .helpers import Api, run_cli


def test_token_auth_and_me(client: TestClient, api: Api) -> None:
    alice = api.user()
    me = client.get("/api/users/me", headers=alice)
    assert me.status_code == 200
    assert me.json()["name"] == "alice"
    assert "password_hash" not in me.json()


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Bearer fw_not-a-real-token", "Basic YWxpY2U6cHc=", "Token abc", ""],
)
def test_missing_or_wrong_credentials_are_401(
    client: TestClient, api: Api, header: str | None
) -> None:
    api.user()
    headers = {} if header is None else {"Authorization": header}
    response = client.get("/api/documents", headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"]


def test_tokens_can_be_made_listed_and_revoked(client: TestClient, api: Api) -> None:
    alice = api.user()
    made = client.post("/api/tokens", json={"label": "laptop"}, headers=alice)
    assert made.status_code == 201
    second = {"Authorization": f"Bearer {made.json()['token']}"}
    assert client.get("/api/users/me", headers=second).status_code == 200
    listed = client.get("/api/tokens", headers=alice).json()
    assert {t["label"] for t in listed} == {"", "laptop"}
    assert all("token" not in t for t in listed)
    revoked = client.delete(f"/api/tokens/{made.json()['id']}", headers=alice)
    assert revoked.json()["revoked_at"] is not None
    assert client.get("/api/users/me", headers=second).status_code == 401
    assert client.get("/api/users/me", headers=alice).status_code == 200


def test_json_login_session_and_csrf(client: TestClient, api: Api) -> None:
    api.user("alice", password="correct horse")
    wrong = client.post("/auth/login", json={"name": "alice", "password": "nope"})
    assert wrong.status_code == 401
    assert "foldwise_session" not in wrong.cookies
    login = client.post("/auth/login", json={"name": "alice", "password": "correct horse"})
    assert login.status_code == 200
    csrf = login.json()["csrf_token"]
    assert client.cookies.get("foldwise_csrf") == csrf
    assert client.get("/api/users/me").json()["name"] == "alice"
    assert client.get("/auth/csrf").json()["csrf_token"] == csrf

    before = api.snapshot()
    no_csrf = client.post("/api/folders", json={"name": "x"})
    assert no_csrf.status_code == 403
    forged = client.post("/api/folders", json={"name": "x"}, headers={"X-CSRF-Token": "forged"})
    assert forged.status_code == 403
    assert api.snapshot() == before
    ok = client.post("/api/folders", json={"name": "x"}, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 201

    assert client.post("/auth/logout").status_code == 403  # logout is a post too
    assert client.post("/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    client.cookies.clear()
    assert client.get("/api/users/me").status_code == 401


def _login_form_token(client: TestClient) -> str:
    """The login CSRF token of a freshly loaded login page (its cookie is now in ``client``)."""
    page = client.get("/login")
    token = client.cookies.get("foldwise_login_csrf")
    assert token and f'value="{token}"' in page.text
    return token


def test_form_login_redirects_and_form_posts_carry_csrf_field(client: TestClient, api: Api) -> None:
    api.user("alice", password="pw")
    login = client.post(
        "/auth/login",
        data={
            "name": "alice",
            "password": "pw",
            "next": "/tree",
            "csrf_token": _login_form_token(client),
        },
        follow_redirects=False,
    )
    assert login.status_code == 303
    assert login.headers["location"] == "/tree"
    csrf = client.cookies.get("foldwise_csrf")
    upload = client.post(
        "/api/documents/upload",
        files={"file": ("a.txt", b"from a form")},
        data={"csrf_token": csrf},
    )
    assert upload.status_code == 201, upload.text
    refused = client.post("/api/documents/upload", files={"file": ("b.txt", b"no token")})
    assert refused.status_code == 403


def test_open_redirect_is_not_followed(client: TestClient, api: Api) -> None:
    api.user("alice", password="pw")
    login = client.post(
        "/auth/login",
        data={
            "name": "alice",
            "password": "pw",
            "next": "//evil.example",
            "csrf_token": _login_form_token(client),
        },
        follow_redirects=False,
    )
    assert login.status_code == 200  # a JSON answer, not a redirect elsewhere


@pytest.mark.parametrize("path", ["/auth/login", "/login"])
def test_a_login_form_from_another_site_is_refused(client: TestClient, api: Api, path: str) -> None:
    """Login CSRF: without the token of our own login page, a form post starts no session."""
    api.user("mallory", password="pw")
    fields = {"name": "mallory", "password": "pw"}
    no_token = client.post(path, data=fields, follow_redirects=False)
    assert no_token.status_code == 403
    assert "foldwise_session" not in no_token.headers.get("set-cookie", "")
    _login_form_token(client)
    forged = client.post(path, data={**fields, "csrf_token": "guessed"}, follow_redirects=False)
    assert forged.status_code == 403
    cross_site = client.post(
        path,
        data={**fields, "csrf_token": client.cookies.get("foldwise_login_csrf")},
        headers={"Sec-Fetch-Site": "cross-site"},
        follow_redirects=False,
    )
    assert cross_site.status_code == 403
    assert client.get("/api/users/me").status_code == 401
    own = client.post(
        path,
        data={**fields, "csrf_token": client.cookies.get("foldwise_login_csrf")},
        follow_redirects=False,
    )
    assert own.status_code in (200, 303)
    assert client.get("/api/users/me").json()["name"] == "mallory"


def test_a_json_login_needs_a_json_content_type(client: TestClient, api: Api) -> None:
    """A cross-site form can send text/plain that parses as JSON, but not application/json."""
    api.user("mallory", password="pw")
    body = b'{"name": "mallory", "password": "pw"}'
    plain = client.post("/auth/login", content=body, headers={"content-type": "text/plain"})
    assert plain.status_code == 422
    assert "application/json" in plain.json()["detail"]
    assert client.get("/api/users/me").status_code == 401
    typed = client.post(
        "/auth/login", content=body, headers={"content-type": "application/json; charset=utf-8"}
    )
    assert typed.status_code == 200


def test_tampered_session_cookie_is_401(client: TestClient, api: Api) -> None:
    api.user("alice", password="pw")
    client.post("/auth/login", json={"name": "alice", "password": "pw"})
    value = client.cookies.get("foldwise_session")
    assert value
    # The signature's first character made another (itsdangerous: payload.timestamp.signature).
    # Not its last characters: the last base64 character carries padding bits, so changing
    # it can leave the decoded signature as it was (it did once in CI).
    i = value.rindex(".") + 1
    assert len(value) - i >= 8, value
    tampered = value[:i] + ("A" if value[i] != "A" else "B") + value[i + 1 :]
    # Under the server's domain, so that it replaces the cookie instead of being sent beside
    # it (httpx2 sends both, the server reads the genuine one).
    domain = next(c.domain for c in client.cookies.jar if c.name == "foldwise_session")
    client.cookies.set("foldwise_session", tampered, domain=domain)
    assert [c.value for c in client.cookies.jar if c.name == "foldwise_session"] == [tampered]
    assert client.get("/api/users/me").status_code == 401


def test_password_change_ends_sessions(client: TestClient, api: Api) -> None:
    from foldwise.service.users import service

    api.user("alice", password="old")
    client.post("/auth/login", json={"name": "alice", "password": "old"})
    assert client.get("/api/users/me").status_code == 200
    with api.session() as session:
        user = service.get_by_name(session=session, name="alice")
        assert user is not None
        service.set_password(session=session, user=user, password="new")
        session.commit()
    assert client.get("/api/users/me").status_code == 401


def test_token_only_user_cannot_log_in(client: TestClient, api: Api) -> None:
    api.user("alice")
    response = client.post("/auth/login", json={"name": "alice", "password": "anything"})
    assert response.status_code == 401


def test_a_short_secret_is_refused_and_an_unset_one_is_made_per_install(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="SECRET_KEY"):
        Settings(environment="production", data_dir=tmp_path, secret_key="short")
    configured = Settings(environment="production", data_dir=tmp_path, secret_key="x" * 40)
    assert auth.signing_secret(configured) == "x" * 40
    first = Settings(data_dir=tmp_path / "one")
    second = Settings(data_dir=tmp_path / "two")
    secret = auth.signing_secret(first)
    assert len(secret) >= 32
    assert auth.signing_secret(second) != secret  # no two installs share one
    kept = tmp_path / "one" / "secret_key"
    assert kept.read_text() == secret
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    auth._generated_secrets.clear()  # a restart reads the same secret back
    assert auth.signing_secret(Settings(data_dir=tmp_path / "one")) == secret
    assert "dev-insecure" not in secret


def test_cookies_are_secure_by_default_in_production(tmp_path: Path) -> None:
    assert Settings(environment="production", data_dir=tmp_path).secure_cookies
    assert not Settings(environment="development", data_dir=tmp_path).secure_cookies
    assert not Settings(
        environment="production", data_dir=tmp_path, cookie_secure=False
    ).secure_cookies


def _browser_login(client: TestClient, name: str, password: str) -> str:
    response = client.post("/auth/login", json={"name": name, "password": password})
    assert response.status_code == 200, response.text
    return str(response.json()["csrf_token"])


def test_a_cookie_replayed_after_logout_opens_nothing(client: TestClient, api: Api) -> None:
    api.user("alice", password="pw")
    csrf = _browser_login(client, "alice", "pw")
    stolen = dict(client.cookies)
    assert client.post("/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    client.cookies.clear()
    for name, value in stolen.items():
        client.cookies.set(name, value)
    assert client.get("/api/users/me").status_code == 401
    replayed = client.post("/api/folders", json={"name": "x"}, headers={"X-CSRF-Token": csrf})
    assert replayed.status_code == 401
    # Another browser of the same user is not logged out by this one's logout.
    other = TestClient(client.app)
    _browser_login(other, "alice", "pw")
    assert other.get("/api/users/me").status_code == 200


def test_revoking_a_users_access_ends_their_browser_sessions(
    client: TestClient, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.user("alice", password="pw")
    _browser_login(client, "alice", "pw")
    assert client.get("/api/users/me").status_code == 200
    done = run_cli(api, monkeypatch, "users", "revoke", "alice")
    assert done.exit_code == 0, done.stderr
    assert "ended 1 browser session" in done.stdout
    assert client.get("/api/users/me").status_code == 401


def test_a_cookie_signed_with_the_old_default_secret_is_refused(
    client: TestClient, api: Api
) -> None:
    user = api.user("alice", password="pw")
    assert user
    forged = URLSafeTimedSerializer("dev-insecure-change-me", salt="foldwise-session").dumps(
        {"uid": 1, "sid": "guess", "csrf": "x"}
    )
    client.cookies.set("foldwise_session", forged)
    assert client.get("/api/users/me").status_code == 401


def test_users_cli_create_list_revoke(
    client: TestClient, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = run_cli(api, monkeypatch, "users", "create", "carol")
    assert created.exit_code == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("fw_")
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/users/me", headers=headers).json()["name"] == "carol"
    taken = run_cli(api, monkeypatch, "users", "create", "carol")
    assert taken.exit_code == 1
    assert "already exists" in taken.stderr
    listed = run_cli(api, monkeypatch, "users", "list")
    assert "carol\t1 live token(s)" in listed.stdout
    second = run_cli(api, monkeypatch, "users", "token", "carol").stdout.strip()
    revoked = run_cli(api, monkeypatch, "users", "revoke", "carol")
    assert "revoked 2 token(s)" in revoked.stdout
    for secret in (token, second):
        assert (
            client.get("/api/users/me", headers={"Authorization": f"Bearer {secret}"}).status_code
            == 401
        )
    assert run_cli(api, monkeypatch, "users", "revoke", "nobody").exit_code == 1


def test_users_password_command_enables_login(
    client: TestClient, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.user("dora")
    assert client.post("/auth/login", json={"name": "dora", "password": "pw1"}).status_code == 401
    done = run_cli(api, monkeypatch, "users", "password", "dora", "--password", "pw1")
    assert done.exit_code == 0, done.stderr
    assert client.post("/auth/login", json={"name": "dora", "password": "pw1"}).status_code == 200
