"""Rate limits: failed logins per account and per address, token creation, uploads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from foldwise.service.app import create_app
from foldwise.service.config import Settings
from foldwise.service.errors import RateLimitedError
from foldwise.service.rate_limits import Rate, RateLimiter, SharedRateLimiter

from .helpers import Api


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_refills_at_its_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock)
    rate = Rate(burst=3, per_second=0.5)
    for _ in range(3):
        limiter.spend("upload", "u1", rate, what="uploads")
    with pytest.raises(RateLimitedError) as refused:
        limiter.spend("upload", "u1", rate, what="uploads")
    assert refused.value.retry_after_seconds == 2  # one token at 0.5/s
    assert refused.value.headers == {"Retry-After": "2"}
    limiter.spend("upload", "u2", rate, what="uploads")  # another key has its own bucket
    clock.now += 2.0
    limiter.spend("upload", "u1", rate, what="uploads")
    with pytest.raises(RateLimitedError):
        limiter.check("upload", "u1", rate, what="uploads")
    clock.now += 3600
    for _ in range(3):  # full again, never fuller than the burst
        limiter.spend("upload", "u1", rate, what="uploads")
    with pytest.raises(RateLimitedError):
        limiter.spend("upload", "u1", rate, what="uploads")


def test_processes_sharing_the_file_share_one_bucket(tmp_path: Path) -> None:
    """Two limiters on one file (two API processes of one ``foldwise serve``, each with its
    own SQLite connection) draw from the same bucket, which outlives them (a restart)."""
    clock = FakeClock()
    path = tmp_path / "rate-limits.sqlite3"
    first, second = SharedRateLimiter(path, clock), SharedRateLimiter(path, clock)
    rate = Rate(burst=3, per_second=0.5)
    first.spend("login-account", "alice", rate, what="failed logins")
    second.spend("login-account", "alice", rate, what="failed logins")
    first.spend("login-account", "alice", rate, what="failed logins")
    with pytest.raises(RateLimitedError):
        second.check("login-account", "alice", rate, what="failed logins")
    second.spend("login-account", "bob", rate, what="failed logins")  # its own bucket
    first.close()
    second.close()
    restarted = SharedRateLimiter(path, clock)
    with pytest.raises(RateLimitedError) as refused:
        restarted.spend("login-account", "alice", rate, what="failed logins")
    assert refused.value.retry_after_seconds == 2
    clock.now += 2.0
    restarted.spend("login-account", "alice", rate, what="failed logins")
    restarted.close()


@pytest.fixture
def strict(sqlite_settings: Settings) -> Iterator[tuple[TestClient, Api]]:
    """An app with small limits, so that they are cheap to reach."""
    cfg = sqlite_settings.model_copy(
        update={
            "login_failures_burst": 3,
            "login_address_failures_burst": 5,
            "token_creation_burst": 2,
            "upload_burst": 2,
            "upload_per_minute": 1.0,
        }
    )
    with TestClient(create_app(cfg)) as client:
        yield client, Api(client)


def _login(client: TestClient, name: str, password: str) -> int:
    return client.post("/auth/login", json={"name": name, "password": password}).status_code


def test_guessing_a_password_stops_even_the_right_one(strict: tuple[TestClient, Api]) -> None:
    client, api = strict
    api.user("alice", password="right")
    api.user("bob", password="bobs")
    assert [_login(client, "alice", "wrong") for _ in range(3)] == [401, 401, 401]
    refused = client.post("/auth/login", json={"name": "alice", "password": "right"})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert "too many failed logins" in refused.json()["detail"]
    assert _login(client, "bob", "bobs") == 200  # another account is not locked


def test_failures_from_one_address_are_limited_across_accounts(
    strict: tuple[TestClient, Api],
) -> None:
    client, api = strict
    api.user("carol", password="pw")
    for index in range(5):
        assert _login(client, f"nobody{index}", "x") == 401
    assert _login(client, "carol", "pw") == 429


def test_the_login_page_says_when_to_retry(strict: tuple[TestClient, Api]) -> None:
    client, api = strict
    api.user("dora", password="pw")
    for _ in range(3):
        _login(client, "dora", "wrong")
    client.get("/login")
    page = client.post(
        "/login",
        data={
            "name": "dora",
            "password": "pw",
            "csrf_token": client.cookies["foldwise_login_csrf"],
        },
        follow_redirects=False,
    )
    assert page.status_code == 429
    assert "Too many failed attempts" in page.text
    assert "retry-after" in page.headers


def test_token_creation_and_uploads_are_rate_limited(strict: tuple[TestClient, Api]) -> None:
    client, api = strict
    alice = api.user("alice")
    made = [client.post("/api/tokens", json={}, headers=alice).status_code for _ in range(3)]
    assert made == [201, 201, 429]
    posted = [
        client.post("/api/documents", json={"text": f"document {i}"}, headers=alice).status_code
        for i in range(3)
    ]
    assert posted == [201, 201, 429]
    assert client.get("/api/documents", headers=alice).json()["total"] == 2
    bob = api.user("bob")
    assert client.post("/api/documents", json={"text": "bob's"}, headers=bob).status_code == 201
