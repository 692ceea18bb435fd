"""The OpenAPI document, with the error answers every operation can give.

Any operation may answer an error of its own (401 without credentials, 403 without the CSRF
token, 404 for an id that is not the caller's, 413 for a body over the limit, 422 for bad
input, 429 when rate-limited, ...), always as JSON ``{"detail": ...}``. Rather than repeat
these on every route, each operation gets a ``default`` response with that shape, and its
422 accepts both FastAPI's validation list and the service's one-line message. The fuzzer
(tests/service/test_fuzz.py) holds every answer to this document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}},
            ]
        }
    },
}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def _with_errors(spec: dict[str, Any]) -> dict[str, Any]:
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    schemas.setdefault(
        "ValidationError",
        {"type": "object", "properties": {"loc": {}, "msg": {"type": "string"}}},
    )
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in spec.get("paths", {}).values():
        for method in _METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            responses.setdefault("default", {"description": "an error", "content": error})
            if "422" in responses:
                responses["422"]["content"] = error
            for code, answer in responses.items():  # e.g. a 404 documented without a body
                if code.startswith(("4", "5")) and "content" not in answer:
                    answer["content"] = error
    return spec


def install(app: FastAPI) -> None:
    """Serve ``app``'s OpenAPI document with the error answers added (computed once)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = _with_errors(spec)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
