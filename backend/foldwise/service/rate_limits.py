"""Rate limits: token buckets per (action, key), answered with 429 and ``Retry-After``.

Guarded actions (docs/bad-input.md, "Limits"): logins per account and per client address
(only failed attempts drain the bucket, and an empty bucket refuses even the right password,
so guessing stops), API token creation per user, and uploads per user. Buckets live in the
API process: one ``foldwise serve`` (as Docker Compose runs it) limits exactly; N processes
behind a balancer would allow up to N times the rate.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
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
    """Thread-safe token buckets keyed by ``(action, key)``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        self._mutex = threading.Lock()

    def _level(self, key: tuple[str, str], rate: Rate, now: float) -> float:
        tokens, last = self._buckets.get(key, (float(rate.burst), now))
        return min(float(rate.burst), tokens + (now - last) * rate.per_second)

    def check(self, action: str, key: str, rate: Rate, *, what: str) -> None:
        """Raise ``RateLimitedError`` if the bucket is empty (takes nothing)."""
        with self._mutex:
            now = self._clock()
            tokens = self._level((action, key), rate, now)
        if tokens < 1:
            raise _refusal(tokens, rate, what)

    def spend(self, action: str, key: str, rate: Rate, *, what: str) -> None:
        """Take one token, or raise ``RateLimitedError`` if there is none."""
        with self._mutex:
            now = self._clock()
            tokens = self._level((action, key), rate, now)
            if tokens >= 1:
                self._buckets[(action, key)] = (tokens - 1, now)
                self._forget_idle(now)
                return
        raise _refusal(tokens, rate, what)

    def _forget_idle(self, now: float) -> None:
        # Keep memory bounded: buckets idle for an hour are full again (every rate here
        # refills in minutes), and a missing bucket reads as full.
        if len(self._buckets) >= 10_000:
            self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 3600}


def _refusal(tokens: float, rate: Rate, what: str) -> RateLimitedError:
    """The 429 for a bucket at ``tokens`` (< 1): retry once one token has refilled."""
    wait = math.ceil((1 - tokens) / rate.per_second)
    return RateLimitedError(f"too many {what}; retry in {wait} s", wait)


def _per_minute(burst: int, per_minute: float) -> Rate:
    return Rate(burst=burst, per_second=per_minute / 60.0)


class Limits:
    """The service's rate limits, from ``Settings``; one per app (``app.state.limits``)."""

    def __init__(self, cfg: Settings, limiter: RateLimiter | None = None) -> None:
        self.limiter = limiter or RateLimiter()
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
        self.limiter.spend("upload", str(user_id), self.uploads, what="uploads")


def client_address(request: Request) -> str:
    """The client's address (behind a proxy: as uvicorn's ``--forwarded-allow-ips`` says)."""
    return request.client.host if request.client else "unknown"


async def limits_of(request: Request) -> Limits:
    """The app's rate limits (a dependency; async: no I/O, so no thread-pool hop)."""
    limits: Limits = request.app.state.limits
    return limits


LimitsDep = Annotated[Limits, Depends(limits_of)]
