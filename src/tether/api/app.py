"""The ASGI application: every service behind one port, a path prefix each.

Each service is a FastAPI application of its own, holding its routes flat,
and the middleware hands a request to the one its first path segment names:
FastAPI matches routes one by one, and a request should be compared with its
own service's routes only. An application of every route serves the OpenAPI
document.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from tether import __version__
from tether.api import baremetal, compute, identity, image, network, openapi, orchestration, roots
from tether.api.envelopes import error_body, service_of
from tether.api.middleware import BodyTooLarge, TetherMiddleware
from tether.domain.errors import TetherError

if TYPE_CHECKING:
    from tether.cloud import Cloud

log = logging.getLogger(__name__)

# service -> its routers, its version documents first
SERVICES: dict[str, tuple[APIRouter, ...]] = {
    "identity": identity.ROUTERS,
    "compute": (roots.compute, *compute.ROUTERS),
    "network": (roots.network, *network.ROUTERS),
    "image": (roots.image, *image.ROUTERS),
    "baremetal": (roots.baremetal, *baremetal.ROUTERS),
    "orchestration": (roots.orchestration, *orchestration.ROUTERS),
}

# service -> how it words a body or query string that a route's model refused
REFUSALS: dict[str, Callable[[RequestValidationError], TetherError]] = {
    "compute": compute.bodies.refusal,
}


def _error(request: Request, status: int, message: str, kind: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    service = service_of(request.scope["path"])  # not request.url: it parses the whole URL
    return JSONResponse(error_body(service, status, message, kind), status_code=status, headers=headers)


def create_app(cloud: Cloud, base_url: str) -> Any:
    """The whole API, as one ASGI application."""
    services: dict[str, Any] = {name: _Collections(cloud, base_url, _routes(name)) for name in SERVICES}
    services["baremetal"] = baremetal.LegacyPaths(services["baremetal"])
    return TetherMiddleware(services, _Documents(cloud, base_url), emulating=cloud.unusual())


def _routes(*names: str) -> list[APIRoute]:
    routes = []
    for name in names:
        for router in SERVICES[name]:
            for route in router.routes:
                # Taken as they are (their paths are whole, see ``paths``): ``include_router``
                # would have FastAPI match the router's routes twice a request, to choose it and in it.
                if not isinstance(route, APIRoute):
                    raise TypeError(f"{route!r}: a service's routers hold plain API routes only")
                routes.append(route)
    return routes


def _service(cloud: Cloud, base_url: str, routes: list[APIRoute], openapi_url: str | None) -> FastAPI:
    app = _application(cloud, base_url, openapi_url)
    app.router.routes.extend(routes)
    return app


# The path segment that names a collection: /compute/v2.1/<servers>/..., /network/v2.0/<ports>/...
_COLLECTION = 3
_ANY = "{"  # a route whose path has a parameter at or before that segment may match any collection


def _collection_of_route(path: str) -> str | None:
    segments = path.split("/")[:_COLLECTION + 1]
    if any("{" in segment for segment in segments):
        return _ANY
    return segments[_COLLECTION] or None if len(segments) > _COLLECTION else None


def _collection_of_request(path: str) -> str | None:
    segments = path.split("/", _COLLECTION + 1)
    return segments[_COLLECTION] or None if len(segments) > _COLLECTION else None


class _Collections:
    """A service's routes, a FastAPI application for each collection they serve.

    FastAPI compares a request with its application's routes one by one: a
    request is compared with the routes that can match its collection only
    (theirs, in their order, and any whose path is a parameter there), as
    many fewer as the service has collections. Each application is made on
    its collection's first request; a collection no route names shares one.
    """

    def __init__(self, cloud: Cloud, base_url: str, routes: list[APIRoute]) -> None:
        self.cloud, self.base_url, self.routes = cloud, base_url, routes
        self.named = {collection for route in routes if (collection := _collection_of_route(route.path)) != _ANY}
        self.apps: dict[str | None, FastAPI] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        collection = _collection_of_request(scope.get("path", ""))
        if collection not in self.named:
            collection = _ANY
        app = self.apps.get(collection)
        if app is None:
            chosen = [route for route in self.routes if _collection_of_route(route.path) in (collection, _ANY)]
            app = self.apps[collection] = _service(self.cloud, self.base_url, chosen, openapi_url=None)
            gc.freeze()  # it lives as long as the process: out of the collector's way, as start-up's is
        await app(scope, receive, send)


class _Documents:
    """Any path outside the services: /openapi.json, or a 404.

    The application that holds every route, for the document, is built on
    the first request here rather than at start-up, which it would slow.
    """

    def __init__(self, cloud: Cloud, base_url: str) -> None:
        self.cloud, self.base_url = cloud, base_url
        self.app: FastAPI | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.app is None:
            self.app = _service(self.cloud, self.base_url, _routes(*SERVICES), openapi_url="/openapi.json")
            openapi.install(self.app)
        await self.app(scope, receive, send)


def _application(cloud: Cloud, base_url: str, openapi_url: str | None) -> FastAPI:
    # FastAPI's own OpenTelemetry hooks look up providers and the environment on every request
    # (~30 us of a 170 us GET); nothing here exports traces, so they are off.
    app = FastAPI(title="Tether", version=__version__, docs_url=None, redoc_url=None, openapi_url=openapi_url,
                  description="OpenStack-compatible compute, network, image, bare-metal and identity APIs.",
                  telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False})
    app.state.cloud = cloud
    app.state.base_url = base_url.rstrip("/")
    @app.exception_handler(TetherError)
    async def service_error(request: Request, error: TetherError) -> JSONResponse:
        headers = {"WWW-Authenticate": f'Keystone uri="{app.state.base_url}/identity"'} \
            if error.status == 401 else None
        return _error(request, error.status, error.message, error.kind, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        refusal = REFUSALS.get(service_of(request.scope["path"]))
        if refusal is not None:
            return await service_error(request, refusal(error))
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

    return app
