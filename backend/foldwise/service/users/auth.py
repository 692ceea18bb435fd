"""Who is calling: bearer tokens for REST clients, a signed session cookie for the browser.

Cookie-authenticated requests that change state must prove they come from a Foldwise page
(CSRF): they send the session's CSRF token in the ``X-CSRF-Token`` header or, for HTML form
posts, in a ``csrf_token`` form field. The token lives inside the signed session cookie and
is also given to the page in a readable cookie and by ``GET /auth/csrf``. Token-authenticated
requests need no CSRF token: a browser never attaches an ``Authorization`` header by itself.

Logging in is guarded too (login CSRF: another site must not log a victim into the
attacker's account). A login form carries a token that must match the HttpOnly cookie the
login page set (double submit: another site can neither read nor set that cookie); a JSON
login must say ``Content-Type: application/json``, which no cross-site form can send without
a CORS preflight that Foldwise never grants; and a browser's ``Sec-Fetch-Site: cross-site``
is refused outright.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import tempfile
import threading
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from foldwise.service.config import Settings, SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.errors import ForbiddenError, UnauthorizedError
from foldwise.service.rate_limits import Limits, client_address
from foldwise.service.users import service
from foldwise.service.users.models import User

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
LOGIN_CSRF_COOKIE = "foldwise_login_csrf"
LOGIN_CSRF_MAX_AGE_SECONDS = 2 * 3600


_generated_secrets: dict[Path, str] = {}
_secrets_mutex = threading.Lock()


def signing_secret(cfg: Settings) -> str:
    """The configured secret, or this install's own: made once at random and kept in
    ``<data_dir>/secret_key`` (mode 0600), so no two installs can forge each other's
    cookies. Creation is atomic: concurrent first starts agree on one secret."""
    if cfg.secret_key:
        return cfg.secret_key
    path = (cfg.data_dir / "secret_key").resolve()
    with _secrets_mutex:
        if path not in _generated_secrets:
            _generated_secrets[path] = _read_or_create_secret(path)
        return _generated_secrets[path]


def _read_or_create_secret(path: Path) -> str:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mode 0600
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(48))
                out.flush()
                os.fsync(out.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
    secret = path.read_text().strip()
    if len(secret) < 32:
        raise RuntimeError(f"{path} holds no usable secret: delete it to make a new one")
    return secret


def _serializer(cfg: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(signing_secret(cfg), salt="foldwise-session")


def new_csrf_token() -> str:
    """A fresh random CSRF token."""
    return secrets.token_urlsafe(32)


def start_session(
    response: Response, *, session: Session, user: User, cfg: Settings, csrf: str | None = None
) -> str:
    """Open a server-side session for ``user`` and set its cookies on ``response``; returns
    the CSRF token. The signed cookie holds the session's id: deleting the row ends it."""
    csrf = csrf or new_csrf_token()
    session_id = service.open_browser_session(
        session=session, user=user, max_age_seconds=cfg.session_max_age_seconds
    )
    value = _serializer(cfg).dumps({"sid": session_id, "csrf": csrf})
    common: dict[str, Any] = {
        "max_age": cfg.session_max_age_seconds,
        "secure": cfg.secure_cookies,
        "samesite": "lax",
        "path": "/",
    }
    response.set_cookie(cfg.session_cookie, value, httponly=True, **common)
    # Readable by the page's scripts, which echo it in the X-CSRF-Token header.
    response.set_cookie(cfg.csrf_cookie, csrf, httponly=False, **common)
    return csrf


def attempt_login(
    request: Request, *, session: Session, limits: Limits, name: str, password: str
) -> User | None:
    """The user if ``password`` is theirs, else ``None`` (a failure counted against the
    account and the client address); ``RateLimitedError`` after too many failures, before
    the password is even checked. Slow on purpose (argon2): call it off the event loop."""
    address = client_address(request)
    limits.check_login(name, address)
    user = service.authenticate(session=session, name=name, password=password) if password else None
    if user is None:
        limits.login_failed(name, address)
    return user


def set_login_csrf(response: Response, token: str, *, cfg: Settings) -> None:
    """Set the login page's CSRF cookie; ``token`` goes in its form's ``csrf_token`` field."""
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        max_age=LOGIN_CSRF_MAX_AGE_SECONDS,
        secure=cfg.secure_cookies,
        httponly=True,
        samesite="strict",
        path="/",
    )


def check_login_origin(request: Request, form_token: str | None, *, is_form: bool) -> None:
    """Refuse a login another site could have sent (``ForbiddenError``).

    ``form_token`` is the ``csrf_token`` field of a form login; JSON logins (``is_form``
    false) are checked for their content type by the caller.
    """
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise ForbiddenError("a login from another site is refused")
    if not is_form:
        return
    expected = request.cookies.get(LOGIN_CSRF_COOKIE)
    if not form_token or not expected or not hmac.compare_digest(form_token, expected):
        raise ForbiddenError(
            "the login form has expired or did not come from this site: reload the login page"
        )


def end_session(request: Request, response: Response, *, session: Session, cfg: Settings) -> None:
    """End the request's browser session on the server and clear its cookies."""
    data = read_session(request, cfg)
    if data and isinstance(data.get("sid"), str):
        service.close_browser_session(session=session, session_id=data["sid"])
    response.delete_cookie(cfg.session_cookie, path="/")
    response.delete_cookie(cfg.csrf_cookie, path="/")


def read_session(request: Request, cfg: Settings) -> dict[str, Any] | None:
    """The verified content of the session cookie, or ``None``."""
    raw = request.cookies.get(cfg.session_cookie)
    if not raw:
        return None
    try:
        data = _serializer(cfg).loads(raw, max_age=cfg.session_max_age_seconds)
    except BadSignature:
        return None
    return data if isinstance(data, dict) else None


def csrf_token(request: Request, cfg: Settings) -> str | None:
    """The CSRF token of the request's browser session, for templates and ``/auth/csrf``."""
    data = read_session(request, cfg)
    return str(data["csrf"]) if data and "csrf" in data else None


def _user_from_token(session: Session, header: str) -> User:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedError("Authorization header must be 'Bearer <token>'")
    user = service.user_for_token(session=session, token=token.strip())
    if user is None:
        raise UnauthorizedError("invalid or revoked API token")
    return user


def session_user(session: Session, data: dict[str, Any]) -> User | None:
    """The user of a verified session cookie's content, ``None`` if the session ended."""
    session_id = data.get("sid")
    if not isinstance(session_id, str):
        return None  # a cookie from before server-side sessions
    return service.user_for_browser_session(session=session, session_id=session_id)


def _user_from_session(session: Session, data: dict[str, Any]) -> User:
    user = session_user(session, data)
    if user is None:
        raise UnauthorizedError("session expired; log in again")
    return user


async def _sent_csrf(request: Request) -> str | None:
    sent = request.headers.get(CSRF_HEADER)
    if sent:
        return sent
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        return value if isinstance(value, str) else None
    return None


async def current_user(request: Request, session: SessionDep, cfg: SettingsDep) -> User:
    """The calling user, from ``Authorization: Bearer`` or the session cookie (401 if none)."""
    header = request.headers.get("authorization")
    if header is not None:
        return await run_in_threadpool(_user_from_token, session, header)
    data = read_session(request, cfg)
    if data is None:
        raise UnauthorizedError(
            "authentication required: send 'Authorization: Bearer <token>' or log in"
        )
    user = await run_in_threadpool(_user_from_session, session, data)
    if request.method not in SAFE_METHODS:
        sent = await _sent_csrf(request)
        if not sent or not hmac.compare_digest(sent, str(data.get("csrf", ""))):
            raise ForbiddenError(
                f"CSRF token missing or wrong: send the {CSRF_HEADER} header "
                f"or a {CSRF_FIELD} form field (GET /auth/csrf gives the token)"
            )
    return user


CurrentUser = Annotated[User, Depends(current_user)]
