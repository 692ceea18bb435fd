"""Refuse JSON that Python would parse but the service cannot store or echo: NaN and
Infinity (not JSON numbers, RFC 8259 sec. 6), numbers that overflow to infinity, and strings
with NUL (PostgreSQL text cannot hold it) or lone UTF-16 surrogates (not Unicode text, so not
encodable as UTF-8). Each gets a 422 that names the field (docs/bad-input.md)."""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from foldwise.service.limits import send_json_error

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class BadJsonError(ValueError):
    """The body's JSON parses but holds a value the service refuses."""


def _reject_constant(name: str) -> Any:
    raise BadJsonError(f"{name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise BadJsonError(f"the number {literal[:40]} is out of range")
    return value


def _check_text(value: str, where: str) -> None:
    if "\x00" in value:
        raise BadJsonError(f"{where} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadJsonError(f"{where} contains a lone UTF-16 surrogate: not Unicode text") from exc


def check_json(body: bytes) -> None:
    """Raise ``BadJsonError`` if ``body`` holds NaN, Infinity, NUL or a lone surrogate.
    Malformed JSON passes: the route's own parsing answers it as before."""
    try:
        document = json.loads(body, parse_constant=_reject_constant, parse_float=_finite)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return
    pending: list[tuple[Any, str]] = [(document, "body")]
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, list):
            pending.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, f"a key of {where}")
                pending.append((item, f"{where}.{key}"))


def media_type(content_type: str) -> str:
    """``"application/json"`` of ``"Application/JSON; charset=utf-8"``: no parameters, lower."""
    return content_type.split(";")[0].strip().lower()


def _is_json(scope: Scope) -> bool:
    kind = media_type(dict(scope["headers"]).get(b"content-type", b"").decode("latin-1"))
    return kind == "application/json" or kind.endswith("+json")


class StrictJson:
    """ASGI middleware: 422 for JSON bodies that :func:`check_json` refuses.

    The body is read whole (``BodySizeLimit`` outside this bounds it) and replayed to the app.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            check_json(body)
        except BadJsonError as exc:
            await send_json_error(send, 422, str(exc))
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
