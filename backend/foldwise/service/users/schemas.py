"""Request and response bodies of the users domain."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

USER_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"


class UserRead(BaseModel):
    """A user as the API shows it (never the password hash)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    created_at: datetime


class LoginIn(BaseModel):
    """Credentials for the browser session."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=USER_NAME_PATTERN)
    password: str = Field(min_length=1, max_length=1024)


class LoginOut(BaseModel):
    """The logged-in user and the CSRF token to send with state-changing requests."""

    user: UserRead
    csrf_token: str


class CsrfOut(BaseModel):
    """The CSRF token of the current browser session."""

    csrf_token: str


class TokenCreate(BaseModel):
    """A new API token; the label only helps the person tell tokens apart."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(default="", max_length=100)


class TokenRead(BaseModel):
    """An API token without its secret."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    prefix: str
    label: str
    created_at: datetime
    revoked_at: datetime | None


class TokenCreated(TokenRead):
    """A token just made: the only time its secret is shown."""

    token: str
