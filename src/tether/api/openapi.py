"""The document at /openapi.json: what each route takes, described the way the real services define it.

Handlers read their JSON bodies and query strings themselves, so that each
service's own parser answers bad input in that service's words and
envelope. FastAPI cannot see those reads; the helpers here let a route
declare them (``openapi_extra=openapi.extra(...)``) so that clients and
fuzzers such as schemathesis know what to send. ``document`` adds what
every route shares: the ``X-Auth-Token`` security scheme on the routes that
need a token, and the microversion header compute and bare metal negotiate.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel

from tether.api import paths, versions

TOKEN_SCHEME = "keystone_token"
JSON = "application/json"

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
BOOLEAN_TEXT: Schema = {"type": "string", "enum": ["true", "false", "True", "False", "1", "0", "yes", "no"]}
LIMIT: Schema = {"type": "integer", "minimum": 0}
SORT_DIR: Schema = {"type": "string", "enum": ["asc", "desc"]}
DATE_TIME: Schema = {"type": "string", "format": "date-time"}
UUID: Schema = {"type": "string", "format": "uuid"}

# RFC 6902 as glance and ironic read it: add, remove and replace of one path.
JSON_PATCH: Schema = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"op": {"type": "string", "enum": ["add", "remove", "replace"]},
                       "path": {"type": "string", "pattern": "^/"},
                       "value": {}},
        "required": ["op", "path"],
    },
}


def json_body(schema: Schema, *media_types: str, required: bool = True) -> Schema:
    """A ``requestBody`` with ``schema`` under each media type (``application/json`` by default)."""
    return {"required": required,
            "content": {media_type: {"schema": copy.deepcopy(schema)} for media_type in media_types or (JSON,)}}


def query(params: Mapping[str, Schema]) -> list[Schema]:
    """Optional query parameters, by name."""
    return [{"name": name, "in": "query", "required": False, "schema": copy.deepcopy(schema)}
            for name, schema in params.items()]


def header(name: str, schema: Schema, *, required: bool = False) -> Schema:
    return {"name": name, "in": "header", "required": required, "schema": copy.deepcopy(schema)}


def extra(body: Schema | None = None, params: Iterable[Schema] = ()) -> Schema:
    """The ``openapi_extra`` of a route: its JSON body (a full ``requestBody``) and its extra parameters."""
    result: Schema = {}
    if body is not None:
        result["requestBody"] = body
    listed = list(params)
    if listed:
        result["parameters"] = listed
    return result


def obj(properties: Mapping[str, Schema], required: Iterable[str] = (), *, closed: bool = True) -> Schema:
    """A JSON object; ``closed`` when the service refuses unknown keys (``additionalProperties: false``)."""
    schema: Schema = {"type": "object", "properties": dict(properties)}
    names = list(required)
    if names:
        schema["required"] = names
    if closed:
        schema["additionalProperties"] = False
    return schema


def model_schema(model: type[BaseModel]) -> Schema:
    """A pydantic model's JSON schema by its wire names, with its ``$defs`` inlined (OpenAPI has no ``$defs``)."""
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return inline(definitions[ref.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)  # type: ignore[no-any-return]


# Where ``model_body`` leaves a route's model for ``document`` to describe.
_MODEL_BODY = "x-tether-model-body"


def model_body(model: type[BaseModel]) -> Schema:
    """The ``openapi_extra`` of a route whose JSON body ``model`` validates.

    The model's schema is worked out by ``document``, when /openapi.json is
    first asked for, rather than here, when the route is made at start-up.
    """
    return {_MODEL_BODY: model}


def _describe_model_bodies(routes: Iterable[Any]) -> None:
    for route in routes:
        if isinstance(route, APIRoute) and route.openapi_extra and _MODEL_BODY in route.openapi_extra:
            model = route.openapi_extra.pop(_MODEL_BODY)
            route.openapi_extra.update(extra(json_body(model_schema(model))))


# -- the whole document ---------------------------------------------------------------------


def _needs_token(dependant: Dependant) -> bool:
    from tether.api.deps import caller

    return any(dep.call is caller or _needs_token(dep) for dep in dependant.dependencies)


def _microversions(major: int, low: tuple[int, int], high: tuple[int, int]) -> list[str]:
    return [f"{major}.{minor}" for minor in range(low[1], high[1] + 1)] + ["latest"]


# The header each microversioned service reads first, and the versions it honours.
_MICROVERSION_HEADERS = {
    f"{paths.PREFIXES['compute']}/": header("X-OpenStack-Nova-API-Version",
                             {"type": "string", "enum": _microversions(2, versions.COMPUTE_MIN, versions.COMPUTE_MAX)}),
    f"{paths.PREFIXES['baremetal']}/": header("X-OpenStack-Ironic-API-Version",
                             {"type": "string",
                              "enum": _microversions(1, versions.BAREMETAL_MIN, versions.BAREMETAL_MAX)}),
}


def document(app: FastAPI) -> Schema:
    """FastAPI's document, plus the token scheme and the microversion headers every route shares."""
    _describe_model_bodies(app.routes)
    doc = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                      description=app.description, routes=app.routes)
    doc.setdefault("components", {})["securitySchemes"] = {TOKEN_SCHEME: {
        "type": "apiKey", "in": "header", "name": "X-Auth-Token",
        "description": "A token from POST /identity/v3/auth/tokens (its X-Subject-Token header)."}}
    secured = {(context.path_format, method.lower()) for context in iter_route_contexts(app.routes)
               if isinstance(context.original_route, APIRoute) and _needs_token(context.original_route.dependant)
               for method in context.methods or ()}
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            if (path, method) in secured:
                operation["security"] = [{TOKEN_SCHEME: []}]
            for prefix, version_header in _MICROVERSION_HEADERS.items():
                if path.startswith(prefix):
                    operation.setdefault("parameters", []).append(copy.deepcopy(version_header))
    return doc


def install(app: FastAPI) -> None:
    """Serve ``document`` at /openapi.json (built once, on first request)."""

    def openapi() -> Schema:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
