"""Accounts, password checks, browser sessions and API tokens (keyword-only functions)."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from foldwise.service.db import utcnow
from foldwise.service.errors import ConflictError, InvalidInputError, NotFoundError
from foldwise.service.users.models import ApiToken, BrowserSession, User
from foldwise.service.users.schemas import USER_NAME_PATTERN

_hasher = PasswordHasher()
TOKEN_PREFIX = "fw_"
# A fixed hash to verify against when the user does not exist, so that the answer takes
# as long as for a wrong password and does not reveal which names exist.
_DUMMY_HASH = _hasher.hash("not a password")


def hash_token(token: str) -> str:
    """SHA-256 hex of an API token, the form in which it is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def get_by_name(*, session: Session, name: str) -> User | None:
    """The user called ``name``, or ``None``."""
    return session.scalar(select(User).where(User.name == name))


def create_user(*, session: Session, name: str, password: str | None = None) -> User:
    """Create a user; ``InvalidInputError`` for a bad name, ``ConflictError`` if taken."""
    if not re.fullmatch(USER_NAME_PATTERN, name):
        raise InvalidInputError(f"user name {name!r} must be 1-64 letters, digits, '_', '.' or '-'")
    if get_by_name(session=session, name=name) is not None:
        raise ConflictError(f"user {name!r} already exists")
    user = User(name=name, password_hash=_hasher.hash(password) if password else None)
    session.add(user)
    session.flush()
    return user


def set_password(*, session: Session, user: User, password: str) -> None:
    """Replace the user's password and end their browser sessions."""
    user.password_hash = _hasher.hash(password)
    close_all_browser_sessions(session=session, user=user)


def open_browser_session(*, session: Session, user: User, max_age_seconds: int) -> str:
    """Start a browser session for ``user``; returns its id (for the signed cookie).

    Also forgets the user's expired sessions, so rows do not pile up.
    """
    now = utcnow()
    session.execute(
        delete(BrowserSession).where(
            BrowserSession.user_id == user.id, BrowserSession.expires_at <= now
        )
    )
    session_id = secrets.token_urlsafe(32)
    session.add(
        BrowserSession(
            id_hash=hash_token(session_id),
            user_id=user.id,
            expires_at=now + timedelta(seconds=max_age_seconds),
        )
    )
    session.flush()
    return session_id


def user_for_browser_session(*, session: Session, session_id: str) -> User | None:
    """The user of a live browser session, ``None`` if it ended or expired."""
    return session.scalar(
        select(User)
        .join(BrowserSession, BrowserSession.user_id == User.id)
        .where(BrowserSession.id_hash == hash_token(session_id))
        .where(BrowserSession.expires_at > utcnow())
    )


def close_browser_session(*, session: Session, session_id: str) -> None:
    """End one browser session (logout)."""
    session.execute(delete(BrowserSession).where(BrowserSession.id_hash == hash_token(session_id)))
    session.flush()


def close_all_browser_sessions(*, session: Session, user: User) -> int:
    """End every browser session of ``user``; returns how many there were."""
    result = session.execute(delete(BrowserSession).where(BrowserSession.user_id == user.id))
    session.flush()
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def authenticate(*, session: Session, name: str, password: str) -> User | None:
    """The user if ``password`` is theirs, else ``None``."""
    user = get_by_name(session=session, name=name)
    try:
        _hasher.verify(user.password_hash if user and user.password_hash else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    return user if user and user.password_hash else None


def create_token(*, session: Session, user: User, label: str = "") -> tuple[ApiToken, str]:
    """Make a token for ``user``; returns the row and the secret (shown once, stored hashed)."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user_id=user.id, token_hash=hash_token(secret), prefix=secret[:10], label=label
    )
    session.add(token)
    session.flush()
    return token, secret


def user_for_token(*, session: Session, token: str) -> User | None:
    """The owner of a live (not revoked) token, or ``None``."""
    return session.scalar(
        select(User)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(ApiToken.token_hash == hash_token(token), ApiToken.revoked_at.is_(None))
    )


def list_tokens(*, session: Session, user: User) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included."""
    return list(
        session.scalars(
            select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())
        )
    )


def revoke_token(*, session: Session, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's tokens; ``NotFoundError`` if it is not theirs."""
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFoundError(f"token {token_id} not found")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    session.flush()
    return token


def revoke_all_tokens(*, session: Session, user: User) -> int:
    """Revoke every live token of ``user``; returns how many were live."""
    live = [t for t in list_tokens(session=session, user=user) if t.revoked_at is None]
    for token in live:
        token.revoked_at = utcnow()
    session.flush()
    return len(live)


def list_users(*, session: Session) -> list[User]:
    """All users by name (administration from the server's command line)."""
    return list(session.scalars(select(User).order_by(User.name)))
