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

import hashlib
import hmac
import secrets
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from foldwise.service.config import Settings, SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.errors import ForbiddenError, UnauthorizedError
from foldwise.service.users import service
from foldwise.service.users.models import User

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
LOGIN_CSRF_COOKIE = "foldwise_login_csrf"
LOGIN_CSRF_MAX_AGE_SECONDS = 2 * 3600


def _serializer(cfg: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(cfg.secret_key, salt="foldwise-session")


def _password_fingerprint(user: User) -> str:
    # Changing the password changes this and so ends every existing browser session.
    return hashlib.sha256((user.password_hash or "").encode()).hexdigest()[:16]


def new_csrf_token() -> str:
    """A fresh random CSRF token."""
    return secrets.token_urlsafe(32)


def start_session(response: Response, *, user: User, cfg: Settings, csrf: str | None = None) -> str:
    """Set the session and CSRF cookies on ``response``; returns the CSRF token."""
    csrf = csrf or new_csrf_token()
    value = _serializer(cfg).dumps(
        {"uid": user.id, "pw": _password_fingerprint(user), "csrf": csrf}
    )
    common: dict[str, Any] = {
        "max_age": cfg.session_max_age_seconds,
        "secure": cfg.cookie_secure,
        "samesite": "lax",
        "path": "/",
    }
    response.set_cookie(cfg.session_cookie, value, httponly=True, **common)
    # Readable by the page's scripts, which echo it in the X-CSRF-Token header.
    response.set_cookie(cfg.csrf_cookie, csrf, httponly=False, **common)
    return csrf


def set_login_csrf(response: Response, token: str, *, cfg: Settings) -> None:
    """Set the login page's CSRF cookie; ``token`` goes in its form's ``csrf_token`` field."""
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        max_age=LOGIN_CSRF_MAX_AGE_SECONDS,
        secure=cfg.cookie_secure,
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


def end_session(response: Response, *, cfg: Settings) -> None:
    """Clear the session and CSRF cookies."""
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


def _user_from_session(session: Session, data: dict[str, Any]) -> User:
    user = session.get(User, data.get("uid"))
    if user is None or not hmac.compare_digest(str(data.get("pw")), _password_fingerprint(user)):
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
