"""/v1/portgroups (from 1.23): bonds of a node's NICs, also listed under /nodes/{node}/portgroups."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import errors, params, ports, views
from tether.api.baremetal.nodes import service
from tether.api.baremetal.params import field
from tether.api.baremetal.ports import port_collection
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import Portgroup
from tether.domain.errors import baremetal as be
from tether.domain.ids import normalize_mac
from tether.services.baremetal import validation
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's PORTGROUP_SCHEMA (POST /v1/portgroups).
PORTGROUP_PROPERTIES = {
    "address": field("string", "null"), "category": field("string", "null", max_length=80),
    "extra": field("object", "null"), "mode": field("string", "null"), "name": field("string", "null"),
    "node_uuid": field("string"), "physical_network": field("string", "null", max_length=64),
    "properties": field("object", "null"), "standalone_ports_supported": field("string", "boolean", "null"),
    "uuid": field("string", "null"),
}
PORTGROUP_SCHEMA = params.body_schema(PORTGROUP_PROPERTIES, ("node_uuid",))
_EMPTY_AT_CREATE = {"uuid": None, "physical_network": None, "category": None}


def _available(version: Microversion, needed: int = 23) -> None:
    if params.minor(version) < needed:
        raise be.NotFound("The API is not supported for this version")


def body_of(request: Request, portgroup: Portgroup, version: Microversion,
            fields: list[str] | None = None) -> dict[str, Any]:
    return views.portgroup_body(portgroup, version, views.public_url(request), fields)


async def portgroup_collection(request: Request, ctx: RequestContext, version: Microversion, *, detail: bool,
                               resource: str, node: str | None = None) -> dict[str, Any]:
    _available(version)
    args = params.query(request, [*_LIST_ARGS, *([] if detail else ["fields", "detail"])])
    views.check_portgroup_fields(params.string_list(args.get("fields")), version)
    fields = None if detail else params.fields_and_detail(args, version, views.PORTGROUP_SHORT_FIELDS)
    page = params.Page.from_query(args)
    if views.PORTGROUP_FIELD_MINORS.get(page.sort_key, 0) > params.minor(version):
        raise errors.NotAcceptable()
    page.check_sort_key(views.portgroup_values(views.SAMPLE_PORTGROUP), views.PORTGROUP_UNSORTABLE)
    if "shard" in args:
        params.require(version, 106)
    if "conductor_groups" in args:
        params.require(version, 99)
    node = node or args.get("node")
    if node is not None:
        params.node_ident(node, version)
    address = args.get("address")
    if address is not None and normalize_mac(address) is None:
        raise be.InvalidParameterValue(err=f"Expected valid MAC address for address: {address}")
    # ironic reads one filter: the node, else the address.
    if node:
        portgroups = await service(request).list_portgroups(ctx, node=node)
    else:
        portgroups = await service(request).list_portgroups(ctx, address=address)
    if params.string_list(args.get("conductor_groups")):
        portgroups = []  # Tether's nodes all sit in the default ("") conductor group
    values = {pg.uuid: views.portgroup_values(pg) for pg in portgroups}
    portgroups = page.apply(portgroups, lambda pg: values[pg.uuid],
                            lambda marker: be.PortgroupNotFound(portgroup=marker))
    bodies = [body_of(request, pg, version, fields) for pg in portgroups]
    return views.collection("portgroups", bodies, portgroups[-1].uuid if portgroups else None, page,
                            views.public_url(request), resource, args)


_LIST_ARGS = ("node", "address", "shard", "conductor_groups", *params.PAGING)
_LIST_DOC = params.query_doc(*_LIST_ARGS, "fields", "detail")
_DETAIL_DOC = params.query_doc(*_LIST_ARGS)


@router.get("/portgroups", openapi_extra=_LIST_DOC)
@router.get("/portgroups/", include_in_schema=False)
async def list_portgroups(request: Request, ctx: params.admin("baremetal:portgroup:list"),
                          version: params.Version) -> dict[str, Any]:
    return await portgroup_collection(request, ctx, version, detail=False, resource="portgroups")


@router.get("/portgroups/detail", openapi_extra=_DETAIL_DOC)
async def list_portgroups_detail(request: Request, ctx: params.admin("baremetal:portgroup:list"),
                                 version: params.Version) -> dict[str, Any]:
    return await portgroup_collection(request, ctx, version, detail=True, resource="portgroups/detail")


@router.get("/nodes/{ident}/portgroups", openapi_extra=_LIST_DOC)
async def list_node_portgroups(ident: str, request: Request, ctx: params.admin("baremetal:portgroup:list"),
                               version: params.Version) -> dict[str, Any]:
    _available(version, 24)
    return await portgroup_collection(request, ctx, version, detail=False, resource=f"nodes/{ident}/portgroups",
                                      node=params.node_ident(ident, version))


@router.get("/nodes/{ident}/portgroups/detail", openapi_extra=_DETAIL_DOC)
async def list_node_portgroups_detail(ident: str, request: Request,
                                      ctx: params.admin("baremetal:portgroup:list"),
                                      version: params.Version) -> dict[str, Any]:
    _available(version, 24)
    node = params.node_ident(ident, version)
    return await portgroup_collection(request, ctx, version, detail=True, resource=f"nodes/{node}/portgroups/detail",
                                      node=node)


@router.post("/portgroups", status_code=201, openapi_extra=params.body_doc(PORTGROUP_SCHEMA))
@router.post("/portgroups/", status_code=201, include_in_schema=False)
async def create_portgroup(request: Request, ctx: params.admin("baremetal:portgroup:create"),
                           version: params.Version) -> JSONResponse:
    _available(version)
    body = params.check_schema("portgroup", await json_object(request), PORTGROUP_SCHEMA)
    if body.get("address") is not None and normalize_mac(body["address"]) is None:
        raise be.InvalidParameterValue(err=f"Expected valid MAC address for address: {body['address']}")
    params.uuid("node_uuid", body["node_uuid"])
    if body.get("uuid") is not None:
        params.uuid("uuid", body["uuid"])
    standalone = params.boolean("standalone_ports_supported", body.get("standalone_ports_supported"))
    if (body.get("mode") or body.get("properties")) and params.minor(version) < 26:
        raise errors.NotAcceptable()
    if body.get("name") and not validation.is_logical_name(body["name"]):
        raise be.Invalid(reason=f"Cannot create portgroup with invalid name '{body['name']}'")
    params.refuse_unsupported("portgroup", body, _EMPTY_AT_CREATE)
    try:
        portgroup = await service(request).create_portgroup(
            ctx, node_uuid=body["node_uuid"], address=body.get("address"), name=body.get("name"),
            mode=body.get("mode"), standalone_ports_supported=True if standalone is None else standalone,
            extra=body.get("extra"), properties=body.get("properties"),
        )
    except be.NodeNotFound as error:
        raise errors.ReferenceNotFound(message=error.message) from None
    location = views.link("self", views.public_url(request), "portgroups", portgroup.uuid)["href"]
    return JSONResponse(body_of(request, portgroup, version), status_code=201, headers={"Location": location})


@router.get("/portgroups/{ident}", openapi_extra=params.query_doc("fields"))
async def show_portgroup(ident: str, request: Request, ctx: params.admin("baremetal:portgroup:get"),
                         version: params.Version) -> dict[str, Any]:
    _available(version)
    args = params.query(request, ("fields",))
    portgroup = await service(request).get_portgroup(ctx, params.uuid_or_name("portgroup", ident))
    fields = params.string_list(args.get("fields"))
    views.check_portgroup_fields(fields, version)
    return body_of(request, portgroup, version, fields)


@router.get("/portgroups/{ident}/ports", openapi_extra=ports.LIST_DOC)
async def list_portgroup_ports(ident: str, request: Request, ctx: params.admin("baremetal:port:list"),
                               version: params.Version) -> dict[str, Any]:
    _available(version, 24)
    return await port_collection(request, ctx, version, detail=False, resource=f"portgroups/{ident}/ports",
                                 portgroup=params.uuid_or_name("portgroup", ident))


@router.get("/portgroups/{ident}/ports/detail", openapi_extra=ports.DETAIL_DOC)
async def list_portgroup_ports_detail(ident: str, request: Request, ctx: params.admin("baremetal:port:list"),
                                      version: params.Version) -> dict[str, Any]:
    _available(version, 24)
    return await port_collection(request, ctx, version, detail=True, resource=f"portgroups/{ident}/ports/detail",
                                 portgroup=params.uuid_or_name("portgroup", ident))


@router.patch("/portgroups/{ident}", openapi_extra=params.PATCH_DOC)
async def update_portgroup(ident: str, request: Request, ctx: params.admin("baremetal:portgroup:update"),
                           version: params.Version) -> dict[str, Any]:
    _available(version)
    params.query(request, ())
    patch = await json_body(request)
    touched = {root for _, root, _ in params.patch_roots(patch)}
    if touched & {"mode", "properties"} and params.minor(version) < 26:
        raise errors.NotAcceptable()
    if touched & {"physical_network", "category"}:
        raise errors.NotAcceptable()  # 1.102 and 1.103, past Tether's newest microversion
    for op, root, value in params.patch_roots(patch):
        if root == "name" and op in ("add", "replace") and value is not None \
                and not validation.is_logical_name(value):
            raise be.Invalid(reason=f"Portgroup name {value} is not a valid logical name")
    try:
        portgroup = await service(request).update_portgroup(ctx, params.uuid_or_name("portgroup", ident), patch)
    except be.NodeNotFound as error:
        raise errors.ReferenceNotFound(message=error.message) from None
    return body_of(request, portgroup, version)


@router.delete("/portgroups/{ident}", status_code=204)
async def delete_portgroup(ident: str, request: Request, ctx: params.admin("baremetal:portgroup:delete"),
                           version: params.Version) -> Response:
    _available(version)
    params.query(request, ())
    await service(request).delete_portgroup(ctx, params.uuid_or_name("portgroup", ident))
    return Response(status_code=204)
