"""The FastAPI application: routes, static files, security headers, one error shape."""
from __future__ import annotations

from importlib import resources

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from tpscalc import __version__
from tpscalc.web import api, errors, pages

# No inline script or style anywhere: the CSP can forbid both (OWASP secure headers project,
# https://owasp.org/www-project-secure-headers/).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def create_app() -> FastAPI:
    """A new application serving the site, the JSON API and /openapi.json."""
    app = FastAPI(
        title="tpscalc",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        description="Which graphics card runs which open-weight language model, and how fast.",
    )
    static_dir = str(resources.files("tpscalc.web").joinpath("static"))
    app.mount("/static", StaticFiles(directory=static_dir), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.add_exception_handler(errors.WebError, errors.web_error_handler)
    app.add_exception_handler(StarletteHTTPException, errors.http_error_handler)
    app.add_exception_handler(RequestValidationError, errors.validation_error_handler)
    app.add_exception_handler(Exception, errors.unexpected_error_handler)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response: Response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    return HeadAsGet(app)  # type: ignore[return-value]


class HeadAsGet:
    """ASGI wrapper: answer HEAD like GET without the body (link checkers and uptime probes send HEAD).

    FastAPI routes declared with GET do not answer HEAD (405); RFC 9110 §9.3.2 expects the same
    headers as GET. Attribute access falls through to the wrapped FastAPI app.
    """

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def __getattr__(self, name: str) -> object:
        return getattr(self.app, name)

    async def __call__(self, scope, receive, send):  # type: ignore[no-untyped-def]
        if scope.get("type") != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message):  # type: ignore[no-untyped-def]
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
