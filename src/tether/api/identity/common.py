"""What every keystone route shares: keystone's default policies, body validation, links and lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema
from fastapi import Request

from tether.api import openapi
from tether.api.deps import json_body
from tether.domain.errors import identity as ie
from tether.services.context import RequestContext


def base_url(request: Request) -> str:
    return request.app.state.base_url


def v3(request: Request) -> str:
    return f"{base_url(request)}/identity/v3"


# -- keystone's default policies (keystone/common/policies/base.py) ---------------------------------
# "admin_required" is role:admin on any scope; a system reader may read everything; the rest of the
# callers may read what is theirs (their user, their projects, their groups).


def is_reader(ctx: RequestContext) -> bool:
    """ADMIN_OR_SYSTEM_READER: an admin anywhere, or a reader on the system."""
    return ctx.is_admin or (ctx.system and "reader" in ctx.roles)


def is_domain_reader(ctx: RequestContext, domain_id: str | None) -> bool:
    """... OR_DOMAIN_READER: a reader on the domain (a domain-scoped token) reads what is in it."""
    return ctx.domain_id is not None and ctx.domain_id == domain_id and "reader" in ctx.roles


def require_admin(ctx: RequestContext, action: str) -> None:
    if not ctx.is_admin:
        raise ie.Forbidden(action=f"identity:{action}")


def require_reader(ctx: RequestContext, action: str, *, domain_id: str | None = None, own: bool = False) -> None:
    """Admins, system readers, readers of ``domain_id``, and (with ``own``) the caller on their own things."""
    if own or is_reader(ctx) or is_domain_reader(ctx, domain_id):
        return
    raise ie.Forbidden(action=f"identity:{action}")


# -- bodies -------------------------------------------------------------------------------------------

STRING = {"type": "string"}
NULLABLE_STRING = {"type": ["string", "null"]}
# what the description columns hold
DESCRIPTION = {"type": ["string", "null"], "maxLength": 255}
BOOLEAN = {"type": "boolean"}
ID = {"type": "string", "minLength": 1, "maxLength": 64}
NULLABLE_ID = {"type": ["string", "null"], "minLength": 1, "maxLength": 64}
# keystone's project/domain/group names: 1-64 characters, not all blanks
SHORT_NAME = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": r"[\S]+"}
NAME = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"[\S]+"}
TAGS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[^,/]*$"},
        "maxItems": 80, "uniqueItems": True}


def schema(properties: dict[str, Any], required: Iterable[str] = (), *, open_: bool = True) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": open_}


def validated(value: Any, body_schema: dict[str, Any]) -> dict[str, Any]:
    """``value`` checked against ``body_schema``; a 400 in keystone's words when it does not fit."""
    validator = jsonschema.Draft4Validator(body_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        path = ".".join(str(part) for part in error.path)
        where = f"Invalid input for field '{path}': " if path else "Invalid input: "
        raise ie.ValidationError(reason=where + error.message)
    return value


async def resource_body(request: Request, key: str, body_schema: dict[str, Any]) -> dict[str, Any]:
    """The ``{key: {...}}`` body, validated; keystone's 400 for any other shape."""
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get(key), dict):
        raise ie.ValidationError(reason=f"Invalid input for field '{key}': expected an object.")
    return validated(body[key], body_schema)


# -- answers ------------------------------------------------------------------------------------------


def links(request: Request, collection: str, id: str) -> dict[str, str]:
    return {"self": f"{v3(request)}/{collection}/{id}"}


def listing(request: Request, key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: items, "links": {"self": str(request.url), "previous": None, "next": None}}


def flag(request: Request, name: str) -> bool | None:
    """A boolean query filter as keystone reads it: absent is None, "0"/"false" false, anything else true."""
    value = request.query_params.get(name)
    if value is None:
        return None
    return value.lower() not in ("0", "false", "no", "off")


def body_doc(key: str, body_schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI ``openapi_extra`` of a route whose body is ``{key: body_schema}``."""
    return openapi.extra(openapi.json_body(openapi.obj({key: body_schema}, [key], closed=False)))


# keystone's PUTs that take no body (a grant, a membership, an inference rule): any body is ignored
NO_BODY = openapi.extra(openapi.json_body(openapi.obj({}, closed=False), required=False))
