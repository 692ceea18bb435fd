"""The FastAPI application: built on a runtime from the composition root (composition.py)."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from foldwise.service import openapi
from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings, settings
from foldwise.service.critiques.filing_routes import router as filing_router
from foldwise.service.critiques.routes import router as critiques_router
from foldwise.service.documents.folder_routes import router as folder_documents_router
from foldwise.service.documents.routes import router as documents_router
from foldwise.service.errors import ServiceError
from foldwise.service.exports.routes import router as exports_router
from foldwise.service.folders.routes import router as folders_router
from foldwise.service.imports.routes import router as imports_router
from foldwise.service.json_input import StrictJson
from foldwise.service.limits import BodySizeLimit
from foldwise.service.rate_limits import Limits, RateLimiter, shared_limiter
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.routes import questions_router
from foldwise.service.recluster.routes import router as recluster_router
from foldwise.service.recluster.tree import proposals
from foldwise.service.search.routes import router as search_router
from foldwise.service.security_headers import SecurityHeaders
from foldwise.service.ui import mount_ui
from foldwise.service.users.routes import auth_router
from foldwise.service.users.routes import router as users_router


class Health(BaseModel):
    """Liveness of the API and reachability of its database."""

    status: str
    database: str


async def _service_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    return JSONResponse({"detail": exc.message}, status_code=exc.status_code, headers=exc.headers)


async def _integrity_error(_request: Request, _exc: Exception) -> JSONResponse:
    # Reached only when a concurrent request stored the same thing first (the service checks
    # before writing); the transaction was rolled back, so retrying is safe.
    return JSONResponse(
        {"detail": "conflicts with a concurrent change; nothing was stored, retry"},
        status_code=409,
    )


def create_app(
    cfg: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    rate_limiter: RateLimiter | None = None,
) -> FastAPI:
    """Build the app on ``runtime``, or on a runtime built here, once, for ``cfg`` (default:
    the global settings; ``composition.app_runtime``). A runtime built here is closed when the
    app shuts down; one passed in belongs to the caller (``foldwise serve`` shares it with its
    embedded worker, tests with theirs). ``rate_limiter`` holds the rate limits' buckets
    (default: in this process's memory; ``foldwise serve`` passes the data directory's)."""
    rt = runtime or app_runtime(cfg or settings)
    cfg = rt.settings

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if runtime is None:
            rt.close()

    app = FastAPI(
        title="Foldwise",
        version="0.1.0",
        summary="Keeps your documents in a folder hierarchy that learns from you.",
        lifespan=lifespan,
    )
    app.state.runtime = rt
    app.state.settings = cfg
    app.state.engine = rt.engine
    app.state.session_factory = rt.sessions
    app.state.limits = Limits(cfg, rate_limiter)
    # What critiques of proposals act on: the recluster's tree, above the critiques.
    app.state.find_proposal = proposals.open_proposal
    app.add_middleware(StrictJson)  # inside BodySizeLimit, which bounds what it reads
    app.add_middleware(BodySizeLimit, max_bytes=cfg.max_archive_bytes + cfg.max_batch_bytes)
    app.add_middleware(SecurityHeaders)  # outermost: also on the 413s and 422s above
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(IntegrityError, _integrity_error)
    for router in (
        auth_router,
        users_router,
        documents_router,
        folder_documents_router,  # before folders_router: /tree before /{folder_id}
        folders_router,
        imports_router,
        exports_router,
        search_router,
        recluster_router,
        critiques_router,
        questions_router,
        filing_router,
    ):
        app.include_router(router)
    mount_ui(app)
    openapi.install(app)

    @app.get(
        "/healthz",
        tags=["health"],
        response_model=Health,
        responses={503: {"model": Health, "description": "database unreachable"}},
    )
    def healthz(request: Request) -> JSONResponse:
        """Liveness and database reachability (for container health checks)."""
        try:
            with request.app.state.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except OperationalError:
            return JSONResponse({"status": "error", "database": "unreachable"}, status_code=503)
        return JSONResponse({"status": "ok", "database": "ok"})

    return app


def freeze_startup_heap() -> None:
    """Put every object made so far out of the garbage collector's reach (``gc.freeze``).

    A serving process holds ~230,000 objects after start-up (the modules, the app, the
    runtime), which live as long as it does; every full collection scanned them all again:
    0.14 s each, about twice per 1,000 uploads under load. Only for serving processes: a
    frozen object is never collected, which a test suite building many apps would leak.
    """
    gc.collect()
    gc.freeze()


def exit_with_parent(poll_seconds: float = 1.0) -> None:
    """Stop this process (SIGTERM: uvicorn finishes its requests) once its parent is gone.

    uvicorn's workers outlive a supervisor killed with SIGKILL: they kept serving on the
    port, without the embedded worker that runs reclusters, and a restart then shared the
    port with them. A thread that sees the parent change ends them within ``poll_seconds``.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def serving_app(runtime: Runtime | None = None) -> FastAPI:
    """The app of a ``foldwise serve`` process: rate limits shared through the data
    directory, start-up heap frozen (on ``runtime``, or one built from the settings)."""
    cfg = runtime.settings if runtime is not None else settings
    app = create_app(cfg, runtime=runtime, rate_limiter=shared_limiter(cfg))
    freeze_startup_heap()
    return app


def served_app() -> FastAPI:
    """The app of one process of ``foldwise serve --processes N`` (its uvicorn factory)."""
    exit_with_parent()
    return serving_app()
