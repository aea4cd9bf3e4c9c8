"""What a request carries, checked the way ironic's API checks it, before anything is written.

Query strings go through ironic's ``args`` validators (unknown arguments are
refused, as ironic refuses them); bodies through the JSON schemas ironic
declares for each resource, validated with jsonschema as ironic validates
them, its words inside ironic's "Schema error for ..." message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request

from tether.api import openapi, paging
from tether.api.baremetal import errors
from tether.api.deps import caller, microversion
from tether.api.versions import Microversion
from tether.booleans import ACCEPTABLE, bool_from_string
from tether.domain import listing
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.services.baremetal import validation
from tether.services.context import RequestContext

T = TypeVar("T")

# ironic's [api]max_limit
MAX_LIMIT = 1000


def minor(version: Microversion) -> int:
    return version.minor


# -- single values (ironic's common/args.py) ---------------------------------------


def boolean(name: str, value: Any) -> bool | None:
    """ironic's args.boolean: oslo's bool_from_string, strict, of text; None stays None."""
    if value is None or isinstance(value, bool):
        return value
    try:
        if not isinstance(value, str):
            raise ValueError(f"Unrecognized value '{value}', acceptable values are: {ACCEPTABLE}")
        return bool_from_string(value, strict=True)
    except ValueError as error:
        raise be.InvalidParameterValue(err=f"Invalid {name}: {error}") from None


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

    def listing(self, stored: type, filters: listing.Filters | None = None,
                alternatives: tuple[tuple[listing.Filters, ...], ...] = ()) -> paging.ListQuery:
        """The page as the store runs it on the table of ``stored`` (an entity class: ``Repository.page``):
        the sort key if the entity stores it (the other fields are one value for every row, which keeps the
        order), then creation order (ironic's ``id``), every key in the page's direction; the marker, the
        limit and ``filters``."""
        ascending = self.sort_dir == "asc"
        order = (paging.SortKey("created_at", ascending), paging.SortKey("uuid", ascending))
        if self.sort_key != "id" and self.sort_key in {field.name for field in dataclasses.fields(stored)}:
            order = (paging.SortKey(self.sort_key, ascending), *order)
        return paging.ListQuery(filters=filters or {}, sort=order, marker=self.marker, limit=self.limit,
                                alternatives=alternatives)

    def apply(self, items: list[T], values: Callable[[T], Mapping[str, Any]],
              not_found: Callable[[str], Exception]) -> list[T]:
        """Sort ``items`` (listed in creation order, ironic's ``id``), then take the page after the marker."""
        ascending = self.sort_dir == "asc"
        # Ties keep creation order, reversed with the rest in descending order.
        order = (paging.SortKey(paging.STORED, ascending),)
        if self.sort_key != "id":
            order = (paging.SortKey(self.sort_key, ascending), *order)
        marker = None
        if self.marker is not None:
            marker = paging.find(items, self.marker, lambda item: values(item)["uuid"])
            if marker is None:
                raise not_found(self.marker)
        return paging.page(items, paging.ListQuery(sort=order, marker=self.marker, limit=self.limit),
                           lambda item, name: values(item)[name], marker=marker)


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


def field(*types: str, max_length: int | None = None, min_length: int | None = None) -> openapi.Schema:
    """The JSON schema of one property of an ironic schema."""
    schema: openapi.Schema = {"type": list(types)}
    if max_length is not None:
        schema["maxLength"] = max_length
    if min_length is not None:
        schema["minLength"] = min_length
    return schema


def body_schema(properties: Mapping[str, openapi.Schema], required: Iterable[str] = ()) -> openapi.Schema:
    """An ironic schema for a create body: these properties and no others (``additionalProperties: false``)."""
    return openapi.obj(properties, required)


_validators: dict[int, Any] = {}


def check_schema(what: str, value: Any, schema: openapi.Schema) -> Any:
    """``value`` against ``schema``, refused as ironic's args.schema refuses it: jsonschema's words."""
    validator = _validators.get(id(schema))
    if validator is None:
        # jsonschema is loaded by the first body that needs it, not by every start of the server.
        from jsonschema import Draft202012Validator

        validator = _validators[id(schema)] = Draft202012Validator(schema)
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(value))
    if error is None:
        return value
    message = f"Schema error for {what}: {error.message}"
    cause = None
    while error.context:
        error = best_match(error.context)
        cause = error.message
    if cause is not None:
        message += f". Possible root cause: {cause}"
    raise be.InvalidParameterValue(err=message)


def body_doc(schema: openapi.Schema) -> openapi.Schema:
    """The ``openapi_extra`` of a create route whose body ``check_schema`` reads against ``schema``."""
    return openapi.extra(openapi.json_body(schema))


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
