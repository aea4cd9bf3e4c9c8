"""What a request carries, checked the way ironic's API checks it, before anything is written.

Query strings go through ironic's ``args`` validators (unknown arguments are
refused, as ironic refuses them); bodies through the JSON schemas ironic
declares for each resource, written here as tables, with jsonschema's words
inside ironic's "Schema error for ..." message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request

from tether.api import openapi
from tether.api.baremetal import errors
from tether.api.deps import caller, microversion
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.services.baremetal import validation
from tether.services.context import RequestContext

# oslo's strutils.bool_from_string(strict=True)
_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")

T = TypeVar("T")

# ironic's [api]max_limit
MAX_LIMIT = 1000


def minor(version: Microversion) -> int:
    return version.minor


# -- single values (ironic's common/args.py) ---------------------------------------


def boolean(name: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
        return value.strip().lower() in _TRUE
    acceptable = ", ".join(f"'{word}'" for word in sorted((*_TRUE, *_FALSE)))
    raise be.InvalidParameterValue(
        err=f"Invalid {name}: Unrecognized value '{value}', acceptable values are: {acceptable}"
    )


def uuid(name: str, value: Any) -> str:
    if not is_uuid_like(value):
        raise be.InvalidParameterValue(err=f"Expected UUID for {name}: {value}")
    return str(value).lower()


def integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise be.InvalidParameterValue(err=f"Expected an integer for {name}: {value}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise be.InvalidParameterValue(err=f"Expected an integer for {name}: {value}") from None


def string_list(value: str | None) -> list[str] | None:
    """A comma-separated list: unique, lower-cased, in order (ironic's args.string_list)."""
    if value is None:
        return None
    items: list[str] = []
    for item in value.split(","):
        item = item.strip().lower()
        if item and item not in items:
            items.append(item)
    return items


def uuid_or_name(what: str, value: str) -> str:
    if is_uuid_like(value) or validation.is_logical_name(value):
        return value
    raise errors.InvalidUuidOrName(what=what, value=value)


def node_ident(value: str, version: Microversion) -> str:
    """A node's uuid or name as it appears in a path; names exist from 1.5."""
    uuid_or_name("node", value)
    if not is_uuid_like(value) and minor(version) < 5:
        raise be.NodeNotFound(node=value)
    return value


def require(version: Microversion, needed: int) -> None:
    if minor(version) < needed:
        raise errors.NotAcceptable()


# -- query strings -------------------------------------------------------------------


def query(request: Request, allowed: Iterable[str]) -> dict[str, str]:
    """The query arguments; any ironic's method does not take is refused, as ironic refuses it."""
    params = request.query_params
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise be.InvalidParameterValue(err=f"Unexpected arguments: {', '.join(unknown)}")
    return {name: params[name] for name in params}


PAGING = ("limit", "marker", "sort_key", "sort_dir")


@dataclass(frozen=True)
class Page:
    limit: int
    marker: str | None
    sort_key: str
    sort_dir: str

    @classmethod
    def from_query(cls, args: Mapping[str, str]) -> Page:
        limit = MAX_LIMIT
        if args.get("limit") is not None:
            limit = integer("limit", args["limit"])
            if limit <= 0:
                raise be.Invalid(reason="Limit must be positive")
            limit = min(limit, MAX_LIMIT)
        marker = uuid("marker", args["marker"]) if args.get("marker") is not None else None
        sort_dir = args.get("sort_dir", "asc")
        if sort_dir not in ("asc", "desc"):
            raise be.Invalid(reason=f"Invalid sort direction: {sort_dir}. Acceptable values are 'asc' or 'desc'")
        return cls(limit, marker, args.get("sort_key", "id"), sort_dir)

    def check_sort_key(self, sortable: Iterable[str], unsortable: Iterable[str]) -> None:
        if self.sort_key in unsortable or (self.sort_key != "id" and self.sort_key not in sortable):
            raise be.InvalidParameterValue(
                err=f"The sort_key value {self.sort_key} is an invalid field for sorting"
            )

    def apply(self, items: list[T], values: Callable[[T], Mapping[str, Any]],
              not_found: Callable[[str], Exception]) -> list[T]:
        """Sort ``items`` (in creation order, ironic's ``id``), then take the page after the marker."""
        if self.sort_key != "id":
            # None sorts first, as SQL's NULLs do in ascending order on SQLite and MySQL.
            def key(item: T) -> tuple[bool, Any]:
                value = values(item)[self.sort_key]
                return (value is not None, value)

            items = sorted(items, key=key)
        if self.sort_dir == "desc":
            items = list(reversed(items))
        start = 0
        if self.marker is not None:
            positions = [index for index, item in enumerate(items) if values(item)["uuid"] == self.marker]
            if not positions:
                raise not_found(self.marker)
            start = positions[0] + 1
        return items[start:start + self.limit]


def fields_and_detail(args: Mapping[str, str], version: Microversion, default: list[str]) -> list[str] | None:
    """ironic's get_request_return_fields: ``fields=`` (1.8) or ``detail=`` (1.43); None means every field."""
    fields = string_list(args.get("fields"))
    if fields is not None:
        require(version, 8)
    detail = boolean("detail", args["detail"]) if "detail" in args else None
    if detail is not None and minor(version) < 43:
        raise be.InvalidParameterValue(err=f"Invalid query parameter ?detail={args['detail']} received.")
    if fields is not None and detail:
        raise be.InvalidParameterValue(err="Can not specify ?detail=True and fields in the same request.")
    if fields is None and not detail:
        return default
    return fields


# -- bodies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    types: tuple[str, ...]
    max_length: int | None = None
    min_length: int | None = None


def field(*types: str, max_length: int | None = None, min_length: int | None = None) -> Field:
    return Field(types, max_length, min_length)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "unknown"


def _fits(value: Any, types: tuple[str, ...]) -> bool:
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def check_body(
    what: str, body: Any, properties: Mapping[str, Field], required: Iterable[str] = ()
) -> dict[str, Any]:
    """``body`` against an ironic schema with ``additionalProperties: false``."""

    def fail(message: str) -> None:
        raise be.InvalidParameterValue(err=f"Schema error for {what}: {message}")

    if not isinstance(body, dict):
        fail(f"{body!r} is not of type 'object'")
    for name in required:
        if name not in body:
            fail(f"'{name}' is a required property")
    unknown = [name for name in body if name not in properties]
    if unknown:
        verb = "was" if len(unknown) == 1 else "were"
        fail(f"Additional properties are not allowed ({', '.join(repr(n) for n in unknown)} {verb} unexpected)")
    for name, value in body.items():
        spec = properties[name]
        if not _fits(value, spec.types):
            fail(f"{value!r} is not of type {', '.join(repr(t) for t in spec.types)}")
        if isinstance(value, str) and spec.max_length is not None and len(value) > spec.max_length:
            fail(f"{value!r} is too long")
        if isinstance(value, str) and spec.min_length is not None and len(value) < spec.min_length:
            fail(f"{value!r} is too short")
    return body


def body_schema(properties: Mapping[str, Field], required: Iterable[str] = ()) -> openapi.Schema:
    """One of the tables above as the JSON schema it stands for, for the OpenAPI document."""
    def one(spec: Field) -> openapi.Schema:
        schema: openapi.Schema = {"type": list(spec.types)}
        if spec.max_length is not None:
            schema["maxLength"] = spec.max_length
        if spec.min_length is not None:
            schema["minLength"] = spec.min_length
        return schema

    return openapi.obj({name: one(spec) for name, spec in properties.items()}, required)


def body_doc(properties: Mapping[str, Field], required: Iterable[str] = ()) -> openapi.Schema:
    """The ``openapi_extra`` of a create route whose body ``check_body`` reads."""
    return openapi.extra(openapi.json_body(body_schema(properties, required)))


# The ``openapi_extra`` of a PATCH route (a JSON patch the service applies).
PATCH_DOC = openapi.extra(openapi.json_body(openapi.JSON_PATCH))


def query_doc(*names: str) -> openapi.Schema:
    """The ``openapi_extra`` of a route whose ``query`` allows ``names``, with the types ironic gives them."""
    typed = {"limit": openapi.LIMIT, "sort_dir": openapi.SORT_DIR, "detail": {"type": "boolean"},
             "marker": openapi.UUID}
    return openapi.extra(params=openapi.query({name: typed.get(name, openapi.STRING) for name in names}))


def refuse_unsupported(what: str, body: Mapping[str, Any], empty: Mapping[str, Any]) -> None:
    """Fields ironic accepts and Tether has no such thing for: their empty value passes, anything else is refused."""
    for name, nothing in empty.items():
        if name in body and body[name] not in (None, nothing):
            raise errors.Unsupported(what=f"the {what} field '{name}'")


def patch_roots(patch: Any) -> list[tuple[str, str, Any]]:
    """(op, root field, value) for each well-formed operation of a JSON patch; the service checks the rest."""
    roots = []
    if isinstance(patch, list):
        for op in patch:
            if isinstance(op, dict) and isinstance(op.get("path"), str) and op["path"].startswith("/"):
                roots.append((str(op.get("op")), op["path"].split("/")[1], op.get("value")))
    return roots


# -- who asks ----------------------------------------------------------------------------


def admin(policy: str) -> Any:
    """The caller, who must be an admin (ironic's policy ``policy``), as a parameter annotation.

    ``ctx: params.admin("baremetal:node:get")``. The service checks the same;
    checking first here makes a non-admin's bad request a 403 rather than a
    400, as ironic's policy check comes first.
    """
    async def check(ctx: RequestContext = Depends(caller)) -> RequestContext:
        if not ctx.is_admin:
            raise be.HTTPForbidden(resource=policy)
        return ctx

    return Annotated[RequestContext, Depends(check)]


Version = Annotated[Microversion, Depends(microversion)]
