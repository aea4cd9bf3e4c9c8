"""A route that FastAPI declares and documents but that runs its endpoint directly.

Tether's endpoints take only path parameters (text), the request, and
dependencies that themselves take only the request or other such
dependencies (``caller``, the admin check, the microversion); every body and
query string is parsed by hand into the service's own error envelope. For
routes like that, FastAPI's request handler (a dependency solver that looks
for query, header, cookie and body parameters there are none of, two exit
stacks, a response model) was ~40% of the server's work on an authenticated
GET. ``DirectRoute`` keeps FastAPI's declaration, matching and OpenAPI
document, and runs the endpoint itself. A route of any other shape is refused
when it is declared, so a new kind of parameter cannot be silently ignored.

Exceptions go on up to the application's exception handlers, as from
FastAPI's own handler.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.encoders import jsonable_encoder
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

Scope = dict[str, Any]


class DirectRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        self.app = _direct_app(self)


def _refuse(route: APIRoute, why: str) -> TypeError:
    return TypeError(f"{route.path} ({route.endpoint.__name__}): {why}; DirectRoute runs only "
                     "path parameters, the request and request-only dependencies")


def _check(route: APIRoute, dependant: Dependant, top: bool) -> None:
    if dependant.query_params or dependant.header_params or dependant.cookie_params or dependant.body_params:
        raise _refuse(route, "it declares query, header, cookie or body parameters")
    if not top and dependant.path_params:
        raise _refuse(route, "a dependency takes a path parameter")
    if dependant.response_param_name or dependant.background_tasks_param_name or dependant.security_scopes_param_name \
            or dependant.websocket_param_name or dependant.http_connection_param_name:
        raise _refuse(route, "it asks for more than the request")
    if dependant.call is None or not inspect.iscoroutinefunction(dependant.call):
        raise _refuse(route, "it is not a coroutine function")
    for sub in dependant.dependencies:
        if inspect.isasyncgenfunction(sub.call) or inspect.isgeneratorfunction(sub.call):
            raise _refuse(route, "a dependency yields")
        _check(route, sub, top=False)


async def _solve(dependant: Dependant, request: Request, solved: dict[Any, Any]) -> dict[str, Any]:
    """The keyword arguments of ``dependant``'s call, each dependency called once a request."""
    arguments: dict[str, Any] = {}
    if dependant.request_param_name:
        arguments[dependant.request_param_name] = request
    for sub in dependant.dependencies:
        if sub.call not in solved:
            solved[sub.call] = await sub.call(**await _solve(sub, request, solved))  # type: ignore[misc]
        arguments[sub.name] = solved[sub.call]  # type: ignore[index]
    return arguments


def _direct_app(route: APIRoute) -> Callable[[Scope, Any, Any], Awaitable[None]]:
    dependant = route.dependant
    _check(route, dependant, top=True)
    for param in dependant.path_params:
        if param.field_info.annotation is not str:
            raise _refuse(route, f"the path parameter {param.name} is not text")
    path_names = [(param.name, param.alias) for param in dependant.path_params]
    endpoint = route.endpoint
    status = route.status_code or 200

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        request = Request(scope, receive, send)
        arguments = await _solve(dependant, request, {})
        path_params = scope["path_params"]
        for name, alias in path_names:
            arguments[name] = path_params[alias]
        result = await endpoint(**arguments)
        if not isinstance(result, Response):
            try:
                result = JSONResponse(result, status_code=status)
            except TypeError:  # not plain JSON (a date, a set...): encoded as FastAPI would
                result = JSONResponse(jsonable_encoder(result), status_code=status)
        await result(scope, receive, send)

    return app
