"""The ASGI application: every service's router behind one port, a path prefix each."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from tether import __version__
from tether.api import baremetal, compute, identity, image, network, openapi, roots
from tether.api.envelopes import error_body, service_of
from tether.api.middleware import BodyTooLarge, TetherMiddleware
from tether.domain.errors import TetherError

if TYPE_CHECKING:
    from tether.services.cloud import Cloud

log = logging.getLogger(__name__)

ROUTERS: list[Any] = [roots.router, identity.router, compute.router, network.router, image.router, baremetal.router]


def _error(request: Request, status: int, message: str, kind: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    service = service_of(request.url.path)
    return JSONResponse(error_body(service, status, message, kind), status_code=status, headers=headers)


def create_app(cloud: Cloud, base_url: str) -> Any:
    app = FastAPI(title="Tether", version=__version__, docs_url=None, redoc_url=None,
                  description="OpenStack-compatible compute, network, image, bare-metal and identity APIs.")
    app.state.cloud = cloud
    app.state.base_url = base_url.rstrip("/")
    for router in ROUTERS:
        app.include_router(router)
    openapi.install(app)

    @app.exception_handler(TetherError)
    async def service_error(request: Request, error: TetherError) -> JSONResponse:
        headers = {"WWW-Authenticate": f'Keystone uri="{app.state.base_url}/identity"'} \
            if error.status == 401 else None
        return _error(request, error.status, error.message, error.kind, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}"
                             for e in error.errors())
        return _error(request, 400, f"Invalid input for operation: {problems}.", "HTTPBadRequest")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        message = "The resource could not be found." if error.status_code == 404 else str(error.detail)
        return _error(request, error.status_code, message)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, error: BodyTooLarge) -> JSONResponse:
        return _error(request, 413, "Request is too large.")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error serving %s %s", request.method, request.url.path)
        return _error(request, 500, "An unexpected error prevented the server from fulfilling your request.")

    return TetherMiddleware(app)


def fastapi_of(asgi: Any) -> FastAPI:
    """The FastAPI application inside the middleware (for its OpenAPI document)."""
    return asgi.app
