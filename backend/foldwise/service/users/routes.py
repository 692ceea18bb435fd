"""Login, logout, CSRF token, the current user and API tokens."""

from __future__ import annotations

import functools
from typing import Any

from fastapi import APIRouter, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy.orm import Session

from foldwise.service.config import Settings, SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.errors import InvalidInputError, UnauthorizedError
from foldwise.service.inputs import RowId
from foldwise.service.json_input import media_type
from foldwise.service.rate_limits import LimitsDep
from foldwise.service.users import auth, service
from foldwise.service.users.auth import CurrentUser
from foldwise.service.users.models import User
from foldwise.service.users.schemas import (
    CsrfOut,
    LoginIn,
    LoginOut,
    TokenCreate,
    TokenCreated,
    TokenRead,
    UserRead,
)

auth_router = APIRouter(prefix="/auth", tags=["auth"])
router = APIRouter(prefix="/api", tags=["users"])

_LOGIN_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": LoginIn.model_json_schema()},
            "application/x-www-form-urlencoded": {
                "schema": {
                    **LoginIn.model_json_schema(),
                    "properties": {
                        **LoginIn.model_json_schema()["properties"],
                        "next": {"type": "string", "description": "local page to go to"},
                    },
                }
            },
        },
    }
}


async def _login_fields(request: Request) -> tuple[dict[str, Any], str | None]:
    """The login's ``{name, password}`` and ``next`` page, checked against login CSRF."""
    kind = media_type(request.headers.get("content-type", ""))
    if kind in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.form()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        auth.check_login_origin(request, fields.get(auth.CSRF_FIELD), is_form=True)
        return {k: fields[k] for k in ("name", "password") if k in fields}, fields.get("next")
    auth.check_login_origin(request, None, is_form=False)
    # Only a real JSON type: a cross-site form can post text/plain that parses as JSON.
    if kind != "application/json":
        raise InvalidInputError(
            "body must be JSON {name, password} with Content-Type: application/json, "
            "or the login form"
        )
    try:
        body = await request.json()
    except ValueError as exc:
        raise InvalidInputError("body must be JSON {name, password} or a form") from exc
    if not isinstance(body, dict):
        raise InvalidInputError("body must be a JSON object {name, password}")
    return body, None


@auth_router.post(
    "/login",
    response_model=LoginOut,
    openapi_extra=_LOGIN_BODY,
    responses={
        401: {"description": "wrong name or password"},
        429: {"description": "too many failed logins; see Retry-After"},
    },
)
async def login(
    request: Request, session: SessionDep, cfg: SettingsDep, limits: LimitsDep
) -> Response:
    """Start a browser session (JSON or form post). A form may name a local ``next`` page.
    After too many failed attempts for the account or from the address: 429."""
    fields, next_page = await _login_fields(request)
    try:
        creds = LoginIn.model_validate(fields)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid login: {exc.errors(include_url=False)}") from exc
    # argon2 is deliberately slow: verify in the threadpool, not on the event loop.
    user = await run_in_threadpool(
        functools.partial(
            auth.attempt_login,
            request,
            session=session,
            limits=limits,
            name=creds.name,
            password=creds.password,
        )
    )
    if user is None:
        raise UnauthorizedError("wrong name or password")
    # Only local paths: an open redirect would let other sites bounce users through Foldwise.
    if next_page and next_page.startswith("/") and not next_page.startswith("//"):
        response: Response = RedirectResponse(next_page, status_code=status.HTTP_303_SEE_OTHER)
        await run_in_threadpool(_open_session, response, session, user, cfg, None)
        return response
    csrf = auth.new_csrf_token()
    out = LoginOut(user=UserRead.model_validate(user), csrf_token=csrf)
    response = JSONResponse(out.model_dump(mode="json"))
    await run_in_threadpool(_open_session, response, session, user, cfg, csrf)
    return response


def _open_session(
    response: Response, session: Session, user: User, cfg: Settings, csrf: str | None
) -> None:
    auth.start_session(response, session=session, user=user, cfg=cfg, csrf=csrf)
    session.commit()


@auth_router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(
    request: Request, user: CurrentUser, session: SessionDep, cfg: SettingsDep, response: Response
) -> None:
    """End the browser session, on the server too (needs the CSRF token like every cookie
    post): the cookie, even if kept, no longer opens anything."""
    auth.end_session(request, response, session=session, cfg=cfg)
    session.commit()


@auth_router.get("/csrf", response_model=CsrfOut)
def get_csrf(request: Request, user: CurrentUser, cfg: SettingsDep) -> CsrfOut:
    """The CSRF token of the current browser session (401 without a session)."""
    token = auth.csrf_token(request, cfg)
    if token is None:
        raise UnauthorizedError("no browser session: CSRF tokens belong to cookie sessions")
    return CsrfOut(csrf_token=token)


@router.get("/users/me", response_model=UserRead)
def me(user: CurrentUser) -> UserRead:
    """The calling user."""
    return UserRead.model_validate(user)


@router.get("/tokens", response_model=list[TokenRead])
def list_tokens(user: CurrentUser, session: SessionDep) -> list[TokenRead]:
    """The caller's API tokens (secrets are never shown again)."""
    return [TokenRead.model_validate(t) for t in service.list_tokens(session=session, user=user)]


@router.post("/tokens", response_model=TokenCreated, status_code=status.HTTP_201_CREATED)
def create_token(
    body: TokenCreate, user: CurrentUser, session: SessionDep, limits: LimitsDep
) -> TokenCreated:
    """A new API token for the caller; the secret is in this answer only (429 when too
    many were made lately)."""
    limits.create_token(user.id)
    token, secret = service.create_token(session=session, user=user, label=body.label)
    session.commit()
    return TokenCreated(**TokenRead.model_validate(token).model_dump(), token=secret)


@router.delete("/tokens/{token_id}", response_model=TokenRead)
def revoke_token(token_id: RowId, user: CurrentUser, session: SessionDep) -> TokenRead:
    """Revoke one of the caller's tokens."""
    token = service.revoke_token(session=session, user=user, token_id=token_id)
    session.commit()
    return TokenRead.model_validate(token)
