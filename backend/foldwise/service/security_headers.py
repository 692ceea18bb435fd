"""Security headers on every answer (docs/bad-input.md, "Headers").

* ``Content-Security-Policy``: scripts only from this origin, never inline; the one page
  that needs an inline import map (``/``) sends its own policy with a per-response nonce
  (:func:`content_security_policy`). Style attributes stay allowed: the tree indents rows
  with them, and a style cannot run code.
* ``X-Content-Type-Options: nosniff``: a browser never runs a file as another type than the
  one declared (an uploaded ``evil.html`` served as ``application/octet-stream`` stays inert).
* ``X-Frame-Options: DENY`` and ``frame-ancestors 'none'``: no other site can frame the app.
* ``Referrer-Policy: same-origin``: document and folder ids in URLs never leave the site.

The interactive API docs (``/docs``, ``/redoc``) load their viewer from a CDN with an inline
script, so they keep every header but the CSP.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_DOCS_PATHS = ("/docs", "/redoc")


def content_security_policy(nonce: str | None = None) -> str:
    """The policy: scripts from this origin (and an inline one carrying ``nonce``)."""
    scripts = "'self'" + (f" 'nonce-{nonce}'" if nonce else "")
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'; form-action 'self'"
    )


_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)
_CSP = (b"content-security-policy", content_security_policy().encode())


class SecurityHeaders:
    """ASGI middleware: add the headers above to every HTTP answer that lacks them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        defaults: tuple[tuple[bytes, bytes], ...] = _HEADERS
        if not scope["path"].startswith(_DOCS_PATHS):
            defaults = (*_HEADERS, _CSP)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend((n, v) for n, v in defaults if n not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
