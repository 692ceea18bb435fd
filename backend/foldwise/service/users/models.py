"""Accounts and API tokens."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from foldwise.service.db import Base, utcnow


class User(Base):
    """An account. Every other row belongs to exactly one user."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    #: argon2 hash; ``None`` means the account can use API tokens but cannot log in.
    password_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: Whether a recluster stored a placement model for the user (set by the recluster, never
    #: unset: models are replaced, not removed). Read with the user it authenticates, an
    #: ingest request knows without a query of its own whether to suggest a folder at once.
    has_placement_model: Mapped[bool] = mapped_column(default=False, server_default=false())

    tokens: Mapped[list[ApiToken]] = relationship(
        back_populates="user", cascade="all, delete-orphan", passive_deletes=True
    )


class ApiToken(Base):
    """A bearer token for REST clients; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Tokens carry 256 random bits, so a fast hash suffices and allows an indexed lookup.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    #: First characters of the token, shown in listings so a person can tell tokens apart.
    prefix: Mapped[str] = mapped_column(String(16))
    label: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)

    user: Mapped[User] = relationship(back_populates="tokens")


class BrowserSession(Base):
    """A logged-in browser. The cookie carries a random id; only its SHA-256 is stored, and
    deleting the row ends the session whatever the cookie says."""

    __tablename__ = "browser_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
