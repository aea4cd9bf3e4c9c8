"""/v1/ports: a node's NICs (ironic ports), also listed under /nodes/{node}/ports."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import service
from tether.api.baremetal.params import field
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import NodePort
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, normalize_mac
from tether.services.context import RequestContext

router = paths.router("baremetal")

_STRING, _BOOLISH = field("string", "null"), field("string", "boolean", "null")
# ironic's PORT_SCHEMA (POST /v1/ports).
PORT_PROPERTIES = {
    "address": field("string"), "extra": field("object", "null"), "is_smartnic": _BOOLISH,
    "local_link_connection": field("null", "object"), "node_ident": field("string"), "node_uuid": field("string"),
    "physical_network": field("string", "null", max_length=64), "portgroup_uuid": _STRING, "pxe_enabled": _BOOLISH,
    "uuid": _STRING, "name": _STRING, "description": field("string", "null", max_length=255),
    "vendor": field("string", "null", max_length=32), "category": field("string", "null", max_length=80),
    "available_for_dynamic_portgroup": field("boolean"),
}
PORT_SCHEMA = params.body_schema(PORT_PROPERTIES, ("address",))
_EMPTY_AT_CREATE = {"is_smartnic": False, "name": None, "description": None, "vendor": None,
                    "category": None, "available_for_dynamic_portgroup": False}
# ironic's LOCAL_LINK_BASE_SCHEMA: what a switch-side link may say, and the minor version of the newer keys.
_LINK_KEYS = {"port_id": 19, "switch_id": 19, "hostname": 53, "switch_info": 19, "network_type": 64,
              "vtep-logical-switch": 90, "vtep-physical-switch": 90}
_DATAPATH_ID = 16  # hex digits of an OpenFlow datapath id


def _local_link_connection(value: dict[str, Any] | None, version: Microversion) -> dict[str, Any] | None:
    """ironic's LOCAL_LINK_VALIDATOR: one of its link shapes, switch_id a MAC or a datapath id (normalised)."""
    if not value:
        return value

    def fail(reason: str) -> None:
        raise be.InvalidParameterValue(err=f"Schema error for local_link_connection: {reason}")

    unknown = [key for key in value if key not in _LINK_KEYS]
    if unknown:
        fail(f"Additional properties are not allowed ({', '.join(map(repr, unknown))} unexpected)")
    if any(params.minor(version) < _LINK_KEYS[key] for key in value):
        raise errors.NotAcceptable()
    for item in value.values():
        if not isinstance(item, str):
            fail(f"{item!r} is not of type 'string'")
    if value.get("network_type") not in (None, "managed", "unmanaged"):
        fail(f"{value['network_type']!r} is not one of ['managed', 'unmanaged']")
    shapes = ({"port_id", "switch_id"}, {"port_id", "hostname"}, {"port_id", "vtep-logical-switch",
                                                                   "vtep-physical-switch"})
    if not any(shape <= set(value) for shape in shapes) and value.get("network_type") != "unmanaged":
        fail(f"{value!r} is not valid under any of the given schemas")
    if "switch_id" in value:
        switch_id = value["switch_id"]
        mac = normalize_mac(switch_id)
        digits = switch_id.replace(":", "")
        if mac is not None:
            value = {**value, "switch_id": mac}
        elif not (len(digits) == _DATAPATH_ID and all(c in "0123456789abcdefABCDEF" for c in digits)):
            raise be.InvalidParameterValue(
                err=f"Expected a MAC address or OpenFlow datapath ID but received {switch_id}.")
    return value


def _check_fields_in(names: set[str], version: Microversion) -> None:
    """ironic's _check_allowed_port_fields over what a body or patch touches."""
    if names & views.newer_fields(views.PORT_FIELD_MINORS, version):
        raise errors.NotAcceptable()


def body_of(request: Request, port: NodePort, version: Microversion, fields: list[str] | None = None) -> dict[str, Any]:
    return views.port_body(port, version, views.public_url(request), fields)


# -- listing ---------------------------------------------------------------------------------

_LIST_ARGS = ("node", "node_uuid", "address", "portgroup", "shard", "description_contains", "conductor_groups",
              *params.PAGING)


async def port_collection(request: Request, ctx: RequestContext, version: Microversion, *, detail: bool,
                          resource: str, node: str | None = None, portgroup: str | None = None) -> dict[str, Any]:
    """GET /ports, /ports/detail, /nodes/{node}/ports[/detail] and /portgroups/{pg}/ports[/detail]."""
    args = params.query(request, [*_LIST_ARGS, *([] if detail else ["fields", "detail"])])
    views.check_port_fields(params.string_list(args.get("fields")), version)
    fields = None if detail else params.fields_and_detail(args, version, views.PORT_SHORT_FIELDS)
    page = params.Page.from_query(args)
    _check_fields_in({page.sort_key}, version)
    page.check_sort_key(views.port_values(views.SAMPLE_PORT), views.PORT_UNSORTABLE)
    if node is None and args.get("node_uuid") is not None:
        node = params.uuid("node_uuid", args["node_uuid"])
    if node is None:
        node = args.get("node")
    portgroup = portgroup or args.get("portgroup")
    if node is not None and not is_uuid_like(node):
        if params.minor(version) < 5:
            raise errors.NotAcceptable()
        params.uuid_or_name("node", node)
    if args.get("portgroup") is not None:
        params.require(version, 24)
        params.uuid_or_name("portgroup", args["portgroup"])
    shard = params.string_list(args.get("shard"))
    if shard is not None:
        params.require(version, 82)
    groups = params.string_list(args.get("conductor_groups"))
    if groups is not None:
        params.require(version, 99)
        if node or portgroup or args.get("address"):
            raise be.Invalid(reason="Filtering by conductor_groups cannot be combined with node_ident, "
                                    "portgroup_ident, or node address filters.")
    if sum(1 for given in (node, portgroup, shard) if given) > 1:
        raise errors.OperationNotPermitted()
    address = args.get("address")
    if address is not None and normalize_mac(address) is None:
        raise be.InvalidParameterValue(err=f"Expected valid MAC address for address: {address}")
    query = page.listing(NodePort)
    # ironic reads one filter, in this order: portgroup, node, address.
    if portgroup:
        ports = await service(request).list_ports(ctx, portgroup=portgroup, query=query)
    elif node:
        ports = await service(request).list_ports(ctx, node=node, query=query)
    elif address:
        ports = await service(request).list_ports(ctx, address=address, query=query)
    elif shard:
        ports = await service(request).list_ports(ctx, shards=shard, query=query)
    else:
        ports = await service(request).list_ports(ctx, query=query)
    # Tether's nodes sit in the default ("") conductor group, nor do its ports have descriptions:
    # those filters keep no port, the marker's neither
    if groups or args.get("description_contains"):
        if page.marker is not None:
            raise be.PortNotFound(port=page.marker)
        ports = []
    bodies = [body_of(request, port, version, fields) for port in ports]
    return views.collection("ports", bodies, ports[-1].uuid if ports else None, page, views.public_url(request),
                            resource, args)


LIST_DOC = params.query_doc(*_LIST_ARGS, "fields", "detail")
DETAIL_DOC = params.query_doc(*_LIST_ARGS)


@router.get("/ports", openapi_extra=LIST_DOC)
@router.get("/ports/", include_in_schema=False)
async def list_ports(request: Request, ctx: params.admin("baremetal:port:list"),
                     version: params.Version) -> dict[str, Any]:
    return await port_collection(request, ctx, version, detail=False, resource="ports")


@router.get("/ports/detail", openapi_extra=DETAIL_DOC)
@router.get("/ports/detail/", include_in_schema=False)
async def list_ports_detail(request: Request, ctx: params.admin("baremetal:port:list"),
                            version: params.Version) -> dict[str, Any]:
    return await port_collection(request, ctx, version, detail=True, resource="ports/detail")


@router.get("/nodes/{ident}/ports", openapi_extra=LIST_DOC)
@router.get("/nodes/{ident}/ports/", include_in_schema=False)
async def list_node_ports(ident: str, request: Request, ctx: params.admin("baremetal:port:list"),
                          version: params.Version) -> dict[str, Any]:
    node = params.node_ident(ident, version)
    return await port_collection(request, ctx, version, detail=False, resource=f"nodes/{node}/ports", node=node)


@router.get("/nodes/{ident}/ports/detail", openapi_extra=DETAIL_DOC)
async def list_node_ports_detail(ident: str, request: Request, ctx: params.admin("baremetal:port:list"),
                                 version: params.Version) -> dict[str, Any]:
    node = params.node_ident(ident, version)
    return await port_collection(request, ctx, version, detail=True, resource=f"nodes/{node}/ports/detail",
                                 node=node)


# -- one port --------------------------------------------------------------------------------


@router.post("/ports", status_code=201, openapi_extra=params.body_doc(PORT_SCHEMA))
@router.post("/ports/", status_code=201, include_in_schema=False)
async def create_port(request: Request, ctx: params.admin("baremetal:port:create"),
                      version: params.Version) -> JSONResponse:
    body = params.check_schema("port", await json_object(request), PORT_SCHEMA)
    if "node_uuid" not in body and "node_ident" not in body:
        raise be.InvalidParameterValue(err="Schema error for port: 'node_uuid' is a required property")
    if "node_uuid" in body and "node_ident" in body:
        raise be.InvalidParameterValue(err="Schema error for port: only one of node_uuid and node_ident is allowed")
    if "node_ident" in body:
        params.require(version, 94)
    if normalize_mac(body["address"]) is None:
        raise be.InvalidParameterValue(err=f"Expected valid MAC address for address: {body['address']}")
    for name in ("pxe_enabled", "is_smartnic"):
        if name in body:
            body[name] = params.boolean(name, body[name])
    if body.get("portgroup_uuid") is not None:
        params.uuid("portgroup_uuid", body["portgroup_uuid"])
    if body.get("uuid") is not None:
        params.uuid("uuid", body["uuid"])
    _check_fields_in(set(body), version)
    links = _local_link_connection(body.get("local_link_connection"), version)
    # ironic takes node_uuid as a uuid only; the CLI passes --node through as given, so a name is taken too.
    node = body.get("node_ident") or body["node_uuid"]
    params.refuse_unsupported("port", body, _EMPTY_AT_CREATE)
    if body.get("physical_network") == "":
        raise be.Invalid(reason="A non-empty value is required when setting physical_network")
    pxe_enabled = True if body.get("pxe_enabled") is None else body["pxe_enabled"]
    try:
        if body.get("portgroup_uuid") is not None and body.get("pxe_enabled"):
            portgroup = await service(request).get_portgroup(ctx, body["portgroup_uuid"])
            if not portgroup.standalone_ports_supported:
                raise errors.StandalonePortsNotSupported(portgroup=portgroup.uuid)
        port = await service(request).create_port(
            ctx, address=body["address"], node_uuid=node, physical_network=body.get("physical_network"),
            pxe_enabled=pxe_enabled, local_link_connection=links, portgroup_uuid=body.get("portgroup_uuid"),
            uuid=body.get("uuid"),
            extra=body.get("extra"),
        )
    except (be.NodeNotFound, be.PortgroupNotFound) as error:
        # ironic: what a body names and does not exist is a bad request, not a missing resource.
        raise errors.ReferenceNotFound(message=error.message) from None
    return JSONResponse(body_of(request, port, version), status_code=201,
                        headers={"Location": views.link("self", views.public_url(request), "ports", port.uuid)["href"]})


@router.get("/ports/{ident}", openapi_extra=params.query_doc("fields"))
async def show_port(ident: str, request: Request, ctx: params.admin("baremetal:port:get"),
                    version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("fields",))
    port = await service(request).get_port(ctx, params.uuid_or_name("port", ident))
    fields = params.string_list(args.get("fields"))
    if fields is not None:
        params.require(version, 8)
    views.check_port_fields(fields, version)
    return body_of(request, port, version, fields)


@router.patch("/ports/{ident}", openapi_extra=params.PATCH_DOC)
async def update_port(ident: str, request: Request, ctx: params.admin("baremetal:port:update"),
                      version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    patch = await json_body(request)
    touched = {root for _, root, _ in params.patch_roots(patch)}
    _check_fields_in(touched & {"pxe_enabled", "local_link_connection", "portgroup_uuid", "physical_network",
                                "is_smartnic"}, version)
    params.uuid_or_name("port", ident)
    try:
        port = await service(request).update_port(ctx, ident, patch)
    except be.PortgroupNotFound as error:
        raise errors.ReferenceNotFound(message=error.message) from None
    return body_of(request, port, version)


@router.delete("/ports/{ident}", status_code=204)
async def delete_port(ident: str, request: Request, ctx: params.admin("baremetal:port:delete"),
                      version: params.Version) -> Response:
    params.query(request, ())
    await service(request).delete_port(ctx, params.uuid("port_uuid", ident))
    return Response(status_code=204)
