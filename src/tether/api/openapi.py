"""The document at /openapi.json: what each route takes, described the way the real services define it.

FastAPI describes the bodies and query strings that routes declare as
pydantic models; each model's schema is written out in place (as the
routes' other schemas are) and FastAPI's 422 answer is left out, since a
refused body is a 400 in the service's own envelope. Routes that still read
their JSON bodies and query strings themselves, so that each service's own
parser answers bad input in that service's words and envelope, declare what
they read with the helpers here (``openapi_extra=openapi.extra(...)``) so
that clients and fuzzers such as schemathesis know what to send.
``document`` adds what every route shares: the ``X-Auth-Token`` security
scheme on the routes that need a token, and the microversion header compute
and bare metal negotiate.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import WithJsonSchema

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


def described(schema: Schema) -> WithJsonSchema:
    """Annotates a field that the service reads as text in its own words with the schema of what it takes."""
    return WithJsonSchema(copy.deepcopy(schema))


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
    doc = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                      description=app.description, routes=app.routes)
    doc.setdefault("components", {})["securitySchemes"] = {TOKEN_SCHEME: {
        "type": "apiKey", "in": "header", "name": "X-Auth-Token",
        "description": "A token from POST /identity/v3/auth/tokens (its X-Subject-Token header)."}}
    secured = {(context.path_format, method.lower()) for context in iter_route_contexts(app.routes)
               if isinstance(context.original_route, APIRoute) and _needs_token(context.original_route.dependant)
               for method in context.methods or ()}
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            # a model's refusal is a 400 in the service's own envelope, never FastAPI's 422
            operation.get("responses", {}).pop("422", None)
    doc["paths"] = _inlined(doc.get("paths", {}), doc["components"].pop("schemas", {}))
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            if (path, method) in secured:
                operation["security"] = [{TOKEN_SCHEME: []}]
            for prefix, version_header in _MICROVERSION_HEADERS.items():
                if path.startswith(prefix):
                    operation.setdefault("parameters", []).append(copy.deepcopy(version_header))
    return doc


def _inlined(node: Any, models: Schema) -> Any:
    """``node`` with each reference to a model replaced by the model's schema, as the routes' other
    schemas are written (models do not refer to themselves)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_MODELS):
            return _inlined(models[ref.removeprefix(_MODELS)], models)
        return {key: _inlined(value, models) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, models) for item in node]
    return node


_MODELS = "#/components/schemas/"


def install(app: FastAPI) -> None:
    """Serve ``document`` at /openapi.json (built once, on first request)."""

    def openapi() -> Schema:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
