"""Pages of the browser UI and the small endpoints only the UI uses.

The page itself is one template; its script talks to the JSON API with the session cookie
and the CSRF header. Login is a plain form so that a wrong password is shown in the page,
not as the API's JSON answer.
"""

from __future__ import annotations

import hashlib
import inspect
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Form, Query, Request, status
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from foldwise.service.config import Settings, SettingsDep
from foldwise.service.db import SessionDep
from foldwise.service.documents import service as documents
from foldwise.service.documents import similar
from foldwise.service.documents.schemas import SimilarDocument
from foldwise.service.errors import RateLimitedError, ServiceError
from foldwise.service.inputs import RowId
from foldwise.service.rate_limits import LimitsDep
from foldwise.service.resources import shipped
from foldwise.service.security_headers import content_security_policy
from foldwise.service.ui import provenance, quality
from foldwise.service.users import auth
from foldwise.service.users.auth import CurrentUser
from foldwise.service.users.models import User

FRONTEND_DIR = shipped("frontend")
TEMPLATES = Jinja2Templates(directory=FRONTEND_DIR / "templates")
STATIC_DIR = FRONTEND_DIR / "static"

# Answers that show a person's documents are never stored by the browser: after Log out,
# Back must not bring them back from a cache (docs/ui.md, "Hygiene").
NO_STORE = {"Cache-Control": "no-store"}


def _no_store(response: Response) -> None:
    response.headers.update(NO_STORE)


router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/ui/api", tags=["ui"])


def _asset_version() -> str:
    # Changes whenever a static file changes, so browsers never run a stale script.
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            digest.update(f"{path.name}:{path.stat().st_mtime_ns}".encode())
    return digest.hexdigest()[:10]


def _local(next_page: str | None) -> str:
    # Only local paths: an open redirect would bounce users through Foldwise to other sites.
    if next_page and next_page.startswith("/") and not next_page.startswith("//"):
        return next_page
    return "/"


def _session_user(request: Request, session: SessionDep, cfg: SettingsDep) -> User | None:
    data = auth.read_session(request, cfg)
    return None if data is None else auth.session_user(session, data)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, session: SessionDep, cfg: SettingsDep) -> Response:
    """The file manager, or the login page without a session."""
    user = _session_user(request, session, cfg)
    if user is None:
        return RedirectResponse("/login", status_code=status.HTTP_303_SEE_OTHER)
    version = _asset_version()
    nonce = secrets.token_urlsafe(16)
    context: dict[str, Any] = {
        "user": user,
        "csrf_cookie": cfg.csrf_cookie,
        "asset_version": version,
        "script_nonce": nonce,
        "import_map": {
            f"/static/js/{path.name}": f"/static/js/{path.name}?v={version}"
            for path in sorted((STATIC_DIR / "js").glob("*.js"))
        },
    }
    response = TEMPLATES.TemplateResponse(request, "app.html", context)
    _no_store(response)
    # The import map is the page's one inline script: allowed by its nonce only.
    response.headers["Content-Security-Policy"] = content_security_policy(nonce)
    return response


@router.get("/login", response_class=HTMLResponse)
def login_page(
    request: Request, cfg: SettingsDep, next: str | None = None, expired: bool = False
) -> Response:
    """The login form."""
    return _login_form(
        request,
        cfg,
        next_page=next,
        error="Your session has expired. Please log in again." if expired else None,
    )


def _login_form(
    request: Request,
    cfg: Settings,
    *,
    next_page: str | None,
    error: str | None = None,
    name: str = "",
    status_code: int = status.HTTP_200_OK,
) -> Response:
    """The login page with a fresh login CSRF token in its form and cookie."""
    token = auth.new_csrf_token()
    context = {
        "next": _local(next_page),
        "error": error,
        "name": name,
        "asset_version": _asset_version(),
        "csrf_field": auth.CSRF_FIELD,
        "csrf_token": token,
    }
    response = TEMPLATES.TemplateResponse(request, "login.html", context, status_code=status_code)
    auth.set_login_csrf(response, token, cfg=cfg)
    return response


@router.post("/login", response_class=HTMLResponse)
def login_submit(
    request: Request,
    session: SessionDep,
    cfg: SettingsDep,
    limits: LimitsDep,
    name: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Check the form's origin, the rate of failures and the password; on success start the
    session and go to ``next``."""
    try:
        auth.check_login_origin(request, csrf_token, is_form=True)
    except ServiceError as exc:
        return _login_form(
            request,
            cfg,
            next_page=next,
            error="The login form had expired. Please log in again.",
            name=name,
            status_code=exc.status_code,
        )
    try:
        user = auth.attempt_login(
            request, session=session, limits=limits, name=name, password=password
        )
    except RateLimitedError as exc:
        page = _login_form(
            request,
            cfg,
            next_page=next,
            error=f"Too many failed attempts. Try again in {exc.retry_after_seconds} seconds.",
            name=name,
            status_code=exc.status_code,
        )
        page.headers.update(exc.headers)
        return page
    if user is None:
        return _login_form(
            request,
            cfg,
            next_page=next,
            error="Wrong name or password.",
            name=name,
            status_code=status.HTTP_401_UNAUTHORIZED,
        )
    response = RedirectResponse(_local(next), status_code=status.HTTP_303_SEE_OTHER)
    auth.start_session(response, session=session, user=user, cfg=cfg)
    session.commit()
    return response


@api_router.get("/documents/{document_id}/similar", response_model=list[SimilarDocument])
def similar_documents(
    document_id: RowId,
    user: CurrentUser,
    session: SessionDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=20)] = 5,
) -> list[SimilarDocument]:
    """The caller's documents whose text is nearest to this one (tf-idf cosine)."""
    _no_store(response)
    documents.get_document(session=session, user=user, document_id=document_id)
    return similar.similar_documents(
        session=session, user=user, document_id=document_id, limit=limit
    )


@api_router.get("/documents/{document_id}/filing", response_model=provenance.Filing)
def document_filing(
    document_id: RowId, user: CurrentUser, session: SessionDep, response: Response
) -> provenance.Filing:
    """Who put the document in its folder: the person, an accepted proposal or an import."""
    document = documents.get_document(session=session, user=user, document_id=document_id)
    _no_store(response)
    return provenance.filing_of(session=session, user=user, document=document)


@api_router.get("/quality", response_class=HTMLResponse)
def quality_panel(request: Request, user: CurrentUser, session: SessionDep) -> Response:
    """The quality panel as an HTML fragment: measures and a server-drawn SVG."""
    report = quality.quality_report(session=session, user=user)
    page = TEMPLATES.TemplateResponse(request, "_quality.html", {"report": report})
    _no_store(page)
    return page


def _is_navigation(request: Request) -> bool:
    # A browser opening a link asks for HTML; the page's own fetch() calls ask for JSON.
    return request.method == "GET" and "text/html" in request.headers.get("accept", "")


def _error_page(request: Request, status_code: int, message: str) -> Response:
    context = {"status": status_code, "message": message, "asset_version": _asset_version()}
    return TEMPLATES.TemplateResponse(request, "error.html", context, status_code=status_code)


def _invalid_address(exc: RequestValidationError) -> str:
    """A sentence for a link with a bad part (``/api/documents/abc/file``)."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error.get("loc", ())[1:]) or "the address"
        parts.append(f"{where}: {str(error.get('msg', 'not valid')).lower()}")
    return "This link is not valid (" + "; ".join(parts) + ")"


async def _delegate(handler: Any, request: Request, exc: Exception) -> Response:
    result = (handler or http_exception_handler)(request, exc)  # type: ignore[arg-type]
    if inspect.isawaitable(result):
        result = await result
    assert isinstance(result, Response)
    return result


def _pages_for_errors(app: FastAPI) -> None:
    """Errors met by a browser navigating (a stale link, a missing file) become a page; API
    clients keep the JSON answers of the handlers already installed."""
    json_handlers = {
        cls: app.exception_handlers.get(cls)
        for cls in (StarletteHTTPException, ServiceError, RequestValidationError)
    }

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if _is_navigation(request):
            if exc.status_code == status.HTTP_401_UNAUTHORIZED:
                return RedirectResponse("/login?expired=1", status_code=status.HTTP_303_SEE_OTHER)
            return _error_page(request, exc.status_code, str(exc.detail))
        return await _delegate(json_handlers[StarletteHTTPException], request, exc)

    async def service_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ServiceError)
        if _is_navigation(request):
            if exc.status_code == status.HTTP_401_UNAUTHORIZED:
                return RedirectResponse("/login?expired=1", status_code=status.HTTP_303_SEE_OTHER)
            return _error_page(request, exc.status_code, exc.message)
        if json_handlers[ServiceError] is None:
            return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
        return await _delegate(json_handlers[ServiceError], request, exc)

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        if _is_navigation(request):
            return _error_page(request, status.HTTP_422_UNPROCESSABLE_ENTITY, _invalid_address(exc))
        handler = json_handlers[RequestValidationError] or request_validation_exception_handler
        return await _delegate(handler, request, exc)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(ServiceError, service_error)
    app.add_exception_handler(RequestValidationError, validation_error)


def mount_ui(app: FastAPI) -> None:
    """Add the pages, the UI endpoints and ``/static`` to ``app``."""
    app.include_router(router)
    app.include_router(api_router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    _pages_for_errors(app)
