"""A route that FastAPI declares, matches and documents, and whose parameters it solves itself.

Tether's endpoints take text path parameters, the request, dependencies
that themselves take only the request or other such dependencies
(``caller``, the admin check, the microversion), a query string declared as
a pydantic model (``query: Annotated[Model, Query()]``) and a JSON body
declared as a pydantic model (``body: Model``). FastAPI reads those
declarations for the OpenAPI document; ``DirectRoute`` solves them itself,
in that order, and calls the endpoint: FastAPI's own request handler also
looks for header, cookie, form and file parameters, streams, background
tasks and response models these routes never have. A route of any other
shape is refused when it is declared, so a new kind of parameter cannot be
silently ignored.

A body or query string the model refuses is a ``RequestValidationError``
with FastAPI's own error shapes (``json_invalid`` for a body that is no
JSON, ``missing`` for an empty one, pydantic's errors under ``body`` or
``query``); the application's handler for it answers in the service's own
words and envelope. Bodies are parsed by ``jsonbody``, which refuses what
could not be stored. Other exceptions go on up to the application's
exception handlers, as from FastAPI's own handler.

The handler solves the route's own declaration: dependencies that an
``include_router(dependencies=...)`` would add are not seen, so Tether's
services take their routes as they are (see ``app``) rather than include
routers.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tether.api import jsonbody


class DirectRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        return _handler(self)


def _refuse(route: APIRoute, why: str) -> TypeError:
    return TypeError(f"{route.path} ({route.endpoint.__name__}): {why}; DirectRoute runs only path parameters, "
                     "the request, request-only dependencies and query strings and bodies declared as models")


def _model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _check(route: APIRoute, dependant: Dependant, top: bool) -> None:
    if dependant.header_params or dependant.cookie_params:
        raise _refuse(route, "it declares header or cookie parameters")
    if any(_model(param.field_info.annotation) is None for param in dependant.query_params):
        raise _refuse(route, "it declares query parameters that are not one model")
    if len(dependant.body_params) > 1 or any(_model(param.field_info.annotation) is None
                                             for param in dependant.body_params):
        raise _refuse(route, "its body is not one model")
    if not top and (dependant.path_params or dependant.query_params or dependant.body_params):
        raise _refuse(route, "a dependency takes a path, query or body parameter")
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


def _refused(error: ValidationError, where: str) -> RequestValidationError:
    return RequestValidationError([{**problem, "loc": (where, *problem["loc"])}
                                   for problem in error.errors(include_url=False)])


def _query_reader(model: type[BaseModel]) -> Callable[[Request], BaseModel]:
    """The model from a query string: each field by its name, the last value of a repeated one (as webob's
    MultiDict reads it) unless the field is a list."""
    many = {info.alias or name: typing.get_origin(info.annotation) is list
            or any(typing.get_origin(arg) is list for arg in typing.get_args(info.annotation))
            for name, info in model.model_fields.items()}

    def read(request: Request) -> BaseModel:
        values: dict[str, Any] = {}
        for name, value in request.query_params.multi_items():
            listed = many.get(name)
            if listed:
                values.setdefault(name, []).append(value)
            elif listed is not None:
                values[name] = value
        try:
            return model.model_validate(values)
        except ValidationError as error:
            raise _refused(error, "query") from None

    return read


async def _body(request: Request, model: type[BaseModel]) -> BaseModel:
    raw = await request.body()
    if not raw:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        data = jsonbody.loads(raw)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise RequestValidationError([{"type": "json_invalid", "loc": ("body", 0), "msg": "JSON decode error",
                                       "input": {}, "ctx": {"error": str(error)}}]) from None
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise _refused(error, "body") from None


def _handler(route: APIRoute) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    dependant = route.dependant
    _check(route, dependant, top=True)
    for param in dependant.path_params:
        if param.field_info.annotation is not str:
            raise _refuse(route, f"the path parameter {param.name} is not text")
    path_names = [(param.name, param.alias) for param in dependant.path_params]
    queries = [(param.name, _query_reader(_model(param.field_info.annotation)))  # type: ignore[arg-type]
               for param in dependant.query_params]
    body = [(param.name, _model(param.field_info.annotation)) for param in dependant.body_params]
    endpoint = route.endpoint
    status = route.status_code or 200

    async def handler(request: Request) -> Response:
        arguments = await _solve(dependant, request, {})
        path_params = request.scope["path_params"]
        for name, alias in path_names:
            arguments[name] = path_params[alias]
        for name, read in queries:
            arguments[name] = read(request)
        for name, model in body:
            arguments[name] = await _body(request, model)  # type: ignore[arg-type]
        result = await endpoint(**arguments)
        if isinstance(result, Response):
            return result
        try:
            return JSONResponse(result, status_code=status)
        except TypeError:  # not plain JSON (a date, a set...): encoded as FastAPI would
            return JSONResponse(jsonable_encoder(result), status_code=status)

    return handler
