"""The OpenAPI document as the API really answers: typed parameters, the one error shape.

Report and estimate parameters come from the request definition (`tpscalc.report.request`),
attached to each route as `openapi_extra`; this module adds the error responses every /api/
route can give (400 bad input, 404 unknown name, 414 and 431 over a size limit, 503 busy) in
the `{"error": {...}}` shape, and drops FastAPI's generic 422 entry, which this API never sends.
"""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["error"], "additionalProperties": False,
    "properties": {"error": {
        "type": "object", "required": ["code", "message"], "additionalProperties": False,
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}},
}
ERRORS = {"400": "Bad input (the message names the field)",
          "404": "Unknown model, card or path",
          "414": "The address is longer than the server accepts",
          "431": "The request headers are larger than the server accepts",
          "503": "Busy or too slow; retry after the Retry-After seconds"}


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI 3 document of `app` with the API's real error responses."""
    doc = get_openapi(title=app.title, version=app.version, description=app.description,
                      routes=app.routes)
    doc.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for schema_name in ("HTTPValidationError", "ValidationError"):
        doc["components"]["schemas"].pop(schema_name, None)
    for path, operations in doc.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            if path.startswith("/api/"):
                for status, description in ERRORS.items():
                    responses[status] = _error_response(description)
    return doc


def install(app: FastAPI) -> None:
    """Serve `document(app)` at /openapi.json (built once, on first request)."""
    cache: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not cache:
            cache.update(document(app))
        return cache

    app.openapi = openapi  # type: ignore[method-assign]
