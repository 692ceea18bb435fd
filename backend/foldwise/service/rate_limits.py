"""Rate limits: token buckets per (action, key), answered with 429 and ``Retry-After``.

Guarded actions (docs/bad-input.md, "Limits"): logins per account and per client address
(only failed attempts drain the bucket, and an empty bucket refuses even the right password,
so guessing stops), API token creation per user, and uploads per user. ``foldwise serve``
keeps the login and token buckets in a file of its data directory
(:class:`SharedRateLimiter`), so that its API processes (``--processes N``) and its restarts
share them; an app built without one (tests, embedding) keeps them in memory, and upload
buckets are always per process. API processes on several hosts, each with its own data
directory, would allow up to that many times the rate.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request

from foldwise.service.config import Settings
from foldwise.service.errors import RateLimitedError


@dataclass(frozen=True)
class Rate:
    """``burst`` requests at once, refilled at ``per_second``."""

    burst: int
    per_second: float


class RateLimiter:
    """Thread-safe token buckets keyed by ``(action, key)``, in this process's memory."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        self._mutex = threading.Lock()

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the buckets for one read-modify-write."""
        with self._mutex:
            yield

    def _load(self, key: tuple[str, str]) -> tuple[float, float] | None:
        return self._buckets.get(key)

    def _store(self, key: tuple[str, str], tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        # Keep memory bounded: buckets idle for an hour are full again (every rate here
        # refills in minutes), and a missing bucket reads as full.
        if len(self._buckets) >= 10_000:
            self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 3600}

    def _level(self, key: tuple[str, str], rate: Rate, now: float) -> float:
        tokens, last = self._load(key) or (float(rate.burst), now)
        return min(float(rate.burst), tokens + max(0.0, now - last) * rate.per_second)

    def check(self, action: str, key: str, rate: Rate, *, what: str) -> None:
        """Raise ``RateLimitedError`` if the bucket is empty (takes nothing)."""
        with self._exclusive():
            tokens = self._level((action, key), rate, self._clock())
        if tokens < 1:
            raise _refusal(tokens, rate, what)

    def spend(self, action: str, key: str, rate: Rate, *, what: str) -> None:
        """Take one token, or raise ``RateLimitedError`` if there is none."""
        with self._exclusive():
            now = self._clock()
            tokens = self._level((action, key), rate, now)
            if tokens >= 1:
                self._store((action, key), tokens - 1, now)
                return
        raise _refusal(tokens, rate, what)


class SharedRateLimiter(RateLimiter):
    """The same buckets in a SQLite file, shared by every process that opens it.

    ``foldwise serve --processes N`` runs N API processes; with buckets in each one's memory
    a password guesser got N times the allowed failures. Each read-modify-write is one
    ``BEGIN IMMEDIATE`` transaction on the file, so the processes see one bucket. The clock
    is the wall clock (monotonic clocks are per boot, not comparable across processes), and
    the file is written without fsync: after an OS crash buckets read as full, which only
    forgives.
    """

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, timeout=10.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS buckets (action TEXT NOT NULL, key TEXT NOT NULL, "
            "tokens REAL NOT NULL, last REAL NOT NULL, PRIMARY KEY (action, key))"
        )
        self._writes = 0

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        with self._mutex:  # one connection per process: its threads take turns
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _load(self, key: tuple[str, str]) -> tuple[float, float] | None:
        row = self._db.execute(
            "SELECT tokens, last FROM buckets WHERE action = ? AND key = ?", key
        ).fetchone()
        return (float(row[0]), float(row[1])) if row else None

    def _store(self, key: tuple[str, str], tokens: float, now: float) -> None:
        self._db.execute(
            "INSERT INTO buckets (action, key, tokens, last) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (action, key) DO UPDATE SET tokens = excluded.tokens, "
            "last = excluded.last",
            (*key, tokens, now),
        )
        self._writes += 1
        if self._writes % 10_000 == 0:  # idle an hour: full again, as in memory
            self._db.execute("DELETE FROM buckets WHERE last < ?", (now - 3600,))

    def close(self) -> None:
        self._db.close()


def shared_limiter(cfg: Settings) -> SharedRateLimiter:
    """The buckets of the processes serving ``cfg``'s data directory."""
    return SharedRateLimiter(cfg.data_dir / "rate-limits.sqlite3")


def _refusal(tokens: float, rate: Rate, what: str) -> RateLimitedError:
    """The 429 for a bucket at ``tokens`` (< 1): retry once one token has refilled."""
    wait = math.ceil((1 - tokens) / rate.per_second)
    return RateLimitedError(f"too many {what}; retry in {wait} s", wait)


def _per_minute(burst: int, per_minute: float) -> Rate:
    return Rate(burst=burst, per_second=per_minute / 60.0)


class Limits:
    """The service's rate limits, from ``Settings``; one per app (``app.state.limits``)."""

    def __init__(self, cfg: Settings, limiter: RateLimiter | None = None) -> None:
        """``limiter`` holds the login and token buckets (default: in memory). Upload
        buckets stay in this process's memory: they guard resources, where N processes'
        slack does no harm, and a transaction on a shared file per upload cost the
        2-process load bench a fifth of its rate (SQLite's busy waits between processes)."""
        self.limiter = limiter or RateLimiter()
        self.upload_limiter = RateLimiter()
        self.account = _per_minute(cfg.login_failures_burst, cfg.login_failures_per_minute)
        self.address = _per_minute(
            cfg.login_address_failures_burst, cfg.login_address_failures_per_minute
        )
        self.tokens = _per_minute(cfg.token_creation_burst, cfg.token_creation_per_minute)
        self.uploads = _per_minute(cfg.upload_burst, cfg.upload_per_minute)

    def check_login(self, name: str, address: str) -> None:
        """Refuse a login (even with the right password) after too many failures."""
        what = "failed logins"
        self.limiter.check("login-account", name.lower(), self.account, what=what)
        self.limiter.check("login-address", address, self.address, what=what)

    def login_failed(self, name: str, address: str) -> None:
        """Count a failed login against the account and the client address."""
        for action, key, rate in (
            ("login-account", name.lower(), self.account),
            ("login-address", address, self.address),
        ):
            # Already empty: the next check_login refuses.
            with contextlib.suppress(RateLimitedError):
                self.limiter.spend(action, key, rate, what="failed logins")

    def create_token(self, user_id: int) -> None:
        """Count an API token creation (429 when over the rate)."""
        self.limiter.spend("token", str(user_id), self.tokens, what="API tokens created")

    def upload(self, user_id: int) -> None:
        """Count an upload or import request (429 when over the rate)."""
        self.upload_limiter.spend("upload", str(user_id), self.uploads, what="uploads")


def client_address(request: Request) -> str:
    """The client's address (behind a proxy: as uvicorn's ``--forwarded-allow-ips`` says)."""
    return request.client.host if request.client else "unknown"


async def limits_of(request: Request) -> Limits:
    """The app's rate limits (a dependency; async: no I/O, so no thread-pool hop)."""
    limits: Limits = request.app.state.limits
    return limits


LimitsDep = Annotated[Limits, Depends(limits_of)]
