"""/v1/allocations (from 1.52) and /v1/nodes/{node}/allocation: a node asked for by class and traits."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.legacy_paths import had_json_suffix
from tether.api.baremetal.nodes import find_node, service
from tether.api.baremetal.params import field
from tether.api.baremetal.traits import TRAIT_SCHEMA, check_trait
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import Allocation
from tether.domain.errors import baremetal as be
from tether.services.baremetal import validation
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's ALLOCATION_SCHEMA.
ALLOCATION_SCHEMA = params.body_schema({
    "candidate_nodes": {"type": ["array", "null"], "items": {"type": "string"}},
    "extra": field("object", "null"), "name": field("string", "null"), "node": field("string", "null"),
    "owner": field("string", "null"), "resource_class": field("string", "null", max_length=80),
    "traits": {"type": ["array", "null"], "items": TRAIT_SCHEMA}, "uuid": field("string", "null"),
})
_FILTERS = ("node", "resource_class", "state", "owner")
_STATES = ("allocating", "active", "error")


def _allowed(version: Microversion, *, method: str = "GET") -> None:
    if params.minor(version) < 52:
        if method == "GET":
            raise be.NotFound("The resource could not be found.")
        raise errors.MethodNotAllowed()  # ironic: "The API version does not allow allocations" as a 405


def body_of(request: Request, allocation: Allocation, version: Microversion,
            fields: list[str] | None = None) -> dict[str, Any]:
    return views.allocation_body(allocation, version, views.public_url(request), fields)


async def _find(request: Request, ctx: RequestContext, ident: str, version: Microversion) -> Allocation:
    """An allocation by uuid or name (with the ``.json`` that ``legacy_paths`` dropped, if it is not found)."""
    params.uuid_or_name("allocation", ident)
    try:
        return await service(request).get_allocation(ctx, ident)
    except be.AllocationNotFound:
        if not had_json_suffix(request.scope):
            raise
    return await service(request).get_allocation(ctx, f"{ident}.json")


@router.get("/allocations", openapi_extra=params.query_doc(*_FILTERS, *params.PAGING, "fields"))
@router.get("/allocations/", include_in_schema=False)
async def list_allocations(request: Request, ctx: params.admin("baremetal:allocation:list"),
                           version: params.Version) -> dict[str, Any]:
    _allowed(version)
    args = params.query(request, (*_FILTERS, *params.PAGING, "fields"))
    fields = params.string_list(args.get("fields"))
    views.check_allocation_fields(fields, version)
    if "owner" in args:
        params.require(version, 60)
    page = params.Page.from_query(args)
    page.check_sort_key(views.allocation_values(views.SAMPLE_ALLOCATION), views.ALLOCATION_UNSORTABLE)
    if args.get("state") is not None and args["state"] not in _STATES:
        raise be.InvalidParameterValue(err=f"Invalid state {args['state']}; expected one of {', '.join(_STATES)}")
    node_uuid = None
    if args.get("node") is not None:
        try:
            node_uuid = (await find_node(request, ctx, args["node"], version)).uuid
        except be.NodeNotFound as error:
            raise errors.ReferenceNotFound(message=error.message) from None  # ironic: 400
    wanted = {"node_uuid": node_uuid, "resource_class": args.get("resource_class"), "state": args.get("state"),
              "owner": args.get("owner")}
    everything = await service(request).list_allocations(ctx)
    values = {allocation.uuid: views.allocation_values(allocation) for allocation in everything}
    chosen = [a for a in everything
              if all(value is None or values[a.uuid][name] == value for name, value in wanted.items())]
    chosen = page.apply(chosen, lambda a: values[a.uuid], lambda marker: be.AllocationNotFound(allocation=marker))
    bodies = [body_of(request, allocation, version, fields) for allocation in chosen]
    return views.collection("allocations", bodies, chosen[-1].uuid if chosen else None, page,
                            views.public_url(request), "allocations", args)


@router.get("/allocations/{ident}", openapi_extra=params.query_doc("fields"))
async def show_allocation(ident: str, request: Request, ctx: params.admin("baremetal:allocation:get"),
                          version: params.Version) -> dict[str, Any]:
    _allowed(version)
    args = params.query(request, ("fields",))
    fields = params.string_list(args.get("fields"))
    views.check_allocation_fields(fields, version)
    return body_of(request, await _find(request, ctx, ident, version), version, fields)


@router.post("/allocations", status_code=201, openapi_extra=params.body_doc(ALLOCATION_SCHEMA))
@router.post("/allocations/", status_code=201, include_in_schema=False)
async def create_allocation(request: Request, ctx: params.admin("baremetal:allocation:create"),
                            version: params.Version) -> JSONResponse:
    _allowed(version, method="POST")
    params.query(request, ())
    body = params.check_schema("allocation", await json_object(request), ALLOCATION_SCHEMA)
    if body.get("uuid") is not None:
        body["uuid"] = params.uuid("uuid", body["uuid"])
    if body.get("owner") is not None:
        params.require(version, 60)
    if body.get("name") and not validation.is_logical_name(body["name"]):
        raise be.Invalid(reason=f"Cannot create allocation with invalid name '{body['name']}'")
    if body.get("node") is not None:
        if params.minor(version) < 58:
            raise be.Invalid(reason="Cannot set node when creating an allocation in this API version")
        params.uuid_or_name("node", body["node"])
    elif not body.get("resource_class"):
        raise be.Invalid(reason="The resource_class field is mandatory when not backfilling")
    for trait in body.get("traits") or []:
        check_trait("allocation", trait)
    for ident in body.get("candidate_nodes") or []:
        params.uuid_or_name("candidate_nodes", ident)
    allocation = await service(request).create_allocation(
        ctx, resource_class=body.get("resource_class"), name=body.get("name"), uuid=body.get("uuid"),
        traits=body.get("traits"), candidate_nodes=body.get("candidate_nodes"), extra=body.get("extra"),
        owner=body.get("owner"), node=body.get("node"))
    url = views.public_url(request)
    return JSONResponse(body_of(request, allocation, version), status_code=201,
                        headers={"Location": views.link("self", url, "allocations", allocation.uuid)["href"]})


@router.patch("/allocations/{ident}", openapi_extra=params.PATCH_DOC)
async def update_allocation(ident: str, request: Request, ctx: params.admin("baremetal:allocation:update"),
                            version: params.Version) -> dict[str, Any]:
    if params.minor(version) < 57:
        raise errors.MethodNotAllowed()
    params.query(request, ())
    patch = await json_body(request)
    allocation = await _find(request, ctx, ident, version)
    changes = _patched(allocation, patch)
    updated = await service(request).update_allocation(ctx, allocation.uuid, changes)
    return body_of(request, updated, version)


def _patched(allocation: Allocation, patch: Any) -> dict[str, Any]:
    """ironic's patch_validate_allowed_fields: only /name and /extra, then the schema over the result."""
    import jsonpatch
    import jsonpointer

    if not isinstance(patch, list) or not patch or not all(isinstance(op, dict) for op in patch):
        raise be.PatchError(patch=patch, reason="a patch is a non-empty list of operations")
    for op in patch:
        path = op.get("path")
        root = path.split("/")[1] if isinstance(path, str) and path.startswith("/") else None
        if root not in ("name", "extra"):
            raise be.Invalid(reason=f"Cannot update {root or path} in an allocation. Only the following fields "
                                    "can be updated: name, extra")
    current = {"name": allocation.name, "extra": dict(allocation.extra)}
    try:
        patched = jsonpatch.apply_patch(current, patch)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError) as error:
        raise be.PatchError(patch=patch, reason=str(error)) from None
    patched.setdefault("name", None)
    patched.setdefault("extra", {})
    params.check_schema("allocation", patched, ALLOCATION_SCHEMA)
    if patched["name"] and not validation.is_logical_name(patched["name"]):
        raise be.Invalid(reason=f"Cannot update allocation with invalid name '{patched['name']}'")
    return {"name": patched["name"], "extra": patched["extra"] or {}}


@router.delete("/allocations/{ident}", status_code=204)
async def delete_allocation(ident: str, request: Request, ctx: params.admin("baremetal:allocation:delete"),
                            version: params.Version) -> Response:
    _allowed(version, method="DELETE")
    params.query(request, ())
    allocation = await _find(request, ctx, ident, version)
    await service(request).delete_allocation(ctx, allocation.uuid)
    return Response(status_code=204)


# -- a node's allocation ---------------------------------------------------------------------


async def _node_allocation(request: Request, ctx: RequestContext, ident: str, version: Microversion) -> Allocation:
    if params.minor(version) < 52:
        raise be.NotFound("The resource could not be found.")
    node = await find_node(request, ctx, ident, version)
    if node.allocation_uuid is None:
        raise be.AllocationNotFound(allocation=f"for node {node.uuid}")
    return await service(request).get_allocation(ctx, node.allocation_uuid)


@router.get("/nodes/{ident}/allocation", openapi_extra=params.query_doc("fields"))
async def show_node_allocation(ident: str, request: Request, ctx: params.admin("baremetal:allocation:get"),
                               version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("fields",))
    fields = params.string_list(args.get("fields"))
    views.check_allocation_fields(fields, version)
    return body_of(request, await _node_allocation(request, ctx, ident, version), version, fields)


@router.delete("/nodes/{ident}/allocation", status_code=204)
async def delete_node_allocation(ident: str, request: Request, ctx: params.admin("baremetal:allocation:delete"),
                                 version: params.Version) -> Response:
    params.query(request, ())
    allocation = await _node_allocation(request, ctx, ident, version)
    await service(request).delete_allocation(ctx, allocation.uuid)
    return Response(status_code=204)
