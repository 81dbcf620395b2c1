"""One error type for the site and the API, and the handlers that render it (HTML page or JSON)."""
from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from tpscalc.i18n import DEFAULT_LANGUAGE, LANGUAGES

MAX_ECHO_CHARS = 200  # the most of a user's input an error message repeats


class WebError(Exception):
    """Bad input or a missing page: HTTP status, a stable code, and a message for people."""

    def __init__(
        self, status: int, code: str, message: str, suggestions: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.suggestions = suggestions


def error_body(code: str, message: str) -> dict[str, Any]:
    """The one JSON error shape of the API."""
    return {"error": {"code": code, "message": message}}


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def _lang_of(request: Request) -> str:
    first = request.url.path.strip("/").split("/", 1)[0]
    return first if first in LANGUAGES else DEFAULT_LANGUAGE


def _excerpt(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """`text` cut to `limit` characters: an error never echoes a huge input back."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_error(request: Request, exc: WebError) -> Response:
    """The error as JSON under /api/, else as a friendly HTML page in the page's language."""
    exc = WebError(exc.status, exc.code, _excerpt(exc.message),
                   tuple(_excerpt(s, 80) for s in exc.suggestions[:8]))
    if _wants_json(request):
        return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status)
    from tpscalc.web.render import render_page  # late: templates load only when needed

    lang = _lang_of(request)
    path = request.url.path
    if len(path) > MAX_ECHO_CHARS:  # the language links repeat the path: keep them short
        path = f"/{lang}/models"
    html = render_page(lang, "error.html", path, error=exc, status=exc.status)
    return HTMLResponse(html, status_code=exc.status)


async def web_error_handler(request: Request, exc: Exception) -> Response:
    """Handler for WebError."""
    assert isinstance(exc, WebError)
    return render_error(request, exc)


async def http_error_handler(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 in our shape."""
    assert isinstance(exc, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = "page not found" if exc.status_code == 404 else str(exc.detail)
    response = render_error(request, WebError(exc.status_code, code, message))
    response.headers.update(exc.headers or {})  # 405 names the methods it allows (Allow)
    return response


async def validation_error_handler(request: Request, exc: Exception) -> Response:
    """FastAPI's request validation errors in our shape (422)."""
    assert isinstance(exc, RequestValidationError)
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("query", "path"))
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return render_error(
        request, WebError(422, "invalid_request", "; ".join(parts) or "invalid request")
    )


async def unexpected_error_handler(request: Request, exc: Exception) -> Response:
    """Anything else: a 500 in our shape (never a traceback to the user)."""
    return render_error(
        request, WebError(500, "internal_error", "something went wrong on our side")
    )
