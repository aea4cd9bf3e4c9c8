"""/v1/nodes: enrol, list, show, update (JSON patch), delete, and maintenance mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.legacy_paths import had_json_suffix
from tether.api.baremetal.params import field
from tether.api.deps import cloud, json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import Node
from tether.domain.baremetal_states import CLEANFAIL, DEPLOYFAIL, ERROR, INSPECTFAIL, PROVISION_STATES
from tether.domain.errors import baremetal as be
from tether.domain.listing import Contains, Present
from tether.services.baremetal import BaremetalService
from tether.services.context import RequestContext

router = paths.router("baremetal")

# Names ironic's NodesController keeps for itself (its sub-controllers and custom actions).
RESERVED_NAMES = ("maintenance", "management", "states", "vendor_passthru", "detail", "validate")
# ironic's provision states that Tether's nodes never reach: a valid filter that matches nothing.
IRONIC_ONLY_STATES = ("verifying", "deploy hold", "deleted", "clean hold", "rebuild", "inspect wait", "adopting",
                      "adopt failed", "rescue", "rescue failed", "rescue wait", "rescuing", "unrescue failed",
                      "unrescuing", "servicing", "service wait", "service failed", "service hold")
# ironic's states.UPDATE_ALLOWED_STATES, as far as Tether has them.
UPDATE_ALLOWED_STATES = (DEPLOYFAIL, CLEANFAIL, INSPECTFAIL, ERROR)

_STRING, _BOOLISH, _OBJECT = field("string", "null"), field("string", "boolean", "null"), field("object", "null")
_INTERFACES = ("bios_interface", "boot_interface", "console_interface", "deploy_interface", "firmware_interface",
               "inspect_interface", "management_interface", "network_interface", "power_interface",
               "raid_interface", "rescue_interface", "storage_interface", "vendor_interface")
# ironic's node_schema() (POST /v1/nodes).
NODE_PROPERTIES = {
    **dict.fromkeys(_INTERFACES, _STRING), "automated_clean": _BOOLISH, "boot_mode": _STRING,
    "chassis_uuid": _STRING, "conductor_group": _STRING, "console_enabled": _BOOLISH,
    "description": field("string", "null", max_length=4096), "disable_power_off": _BOOLISH,
    "driver": field("string"), "driver_info": _OBJECT, "extra": _OBJECT, "instance_info": _OBJECT,
    "instance_name": field("string", "null", min_length=1, max_length=255), "instance_uuid": _STRING,
    "lessee": _STRING, "maintenance": _BOOLISH, "name": _STRING, "network_data": _OBJECT, "owner": _STRING,
    "parent_node": field("string", "null", max_length=36), "properties": _OBJECT,
    "resource_class": field("string", "null", max_length=80), "retired": _BOOLISH, "retired_reason": _STRING,
    "secure_boot": _BOOLISH, "shard": _STRING, "uuid": _STRING,
}
NODE_SCHEMA = params.body_schema(NODE_PROPERTIES, ("driver",))
_BOOLEANS = ("automated_clean", "console_enabled", "disable_power_off", "maintenance", "retired", "secure_boot")
_UUIDS = ("chassis_uuid", "instance_uuid", "uuid")
# What Tether's nodes have; every other field may only be given its empty value.
_SUPPORTED = ("driver", "name", "uuid", "resource_class", "properties", "driver_info", "extra", "chassis_uuid",
              *_INTERFACES, "description", "owner", "lessee", "retired", "retired_reason", "instance_info", "shard")
# Those the service takes as a node's optional fields.
_OPTIONAL = (*_INTERFACES, "description", "owner", "lessee", "retired", "retired_reason", "instance_info", "shard")
# ironic's faults.VALID_FAULTS.
VALID_FAULTS = ("power failure", "clean failure", "rescue abort failure", "service failure")
_EMPTY_AT_CREATE: dict[str, Any] = {
    **dict.fromkeys(name for name in NODE_PROPERTIES if name not in _SUPPORTED),
    "conductor_group": "", "console_enabled": False, "disable_power_off": False, "maintenance": False,
    "retired": False, "instance_info": {}, "network_data": {},
}


def service(request: Request) -> BaremetalService:
    return cloud(request).baremetal


def conductor(request: Request) -> str:
    """The conductor every node is mapped to: this process's bare-metal service."""
    return service(request).host


def body_of(request: Request, node: Node, version: Microversion, fields: list[str] | None = None) -> dict[str, Any]:
    return views.node_body(node, version, views.public_url(request), conductor(request), fields)


async def find_node(request: Request, ctx: RequestContext, ident: str, version: Microversion) -> Node:
    """The node a path names; one whose name really ends in the ``.json`` that ``legacy_paths`` dropped is
    still found by its whole name (ironic's get_rpc_node_with_suffix)."""
    try:
        return await service(request).get_node(ctx, params.node_ident(ident, version))
    except be.NodeNotFound:
        if not had_json_suffix(request.scope):
            raise
    return await service(request).get_node(ctx, params.node_ident(f"{ident}.json", version))


def check_name(name: Any) -> None:
    if name in RESERVED_NAMES:
        raise be.Invalid(reason=f'The word "{name}" is reserved and can not be used as a node name. '
                                f'Reserved words are: {", ".join(RESERVED_NAMES)}.')


def refuse_newer_fields(body: dict[str, Any], version: Microversion) -> None:
    """ironic's reject_fields_in_newer_versions: a field the microversion lacks must be left empty (else 406)."""
    for name in views.newer_fields(views.NODE_FIELD_MINORS, version):
        empty = "" if name == "conductor_group" else None  # ironic hashes conductor groups, "" being the default
        if body.get(name, empty) != empty:
            raise errors.NotAcceptable()


# -- listing ---------------------------------------------------------------------------------


def _equals(name: str) -> Callable[[Any], Callable[[dict[str, Any]], bool]]:
    return lambda wanted: lambda values: values[name] == wanted


def _provision_state(value: str) -> str:
    if value not in PROVISION_STATES.states and value not in IRONIC_ONLY_STATES:
        raise be.InvalidParameterValue(err=f'Provision state "{value}" is not valid')
    return value


def _fault(value: str) -> str:
    if value not in VALID_FAULTS:
        raise be.Invalid(reason=f'Unrecognized fault "{value}" is specified, allowed faults are {VALID_FAULTS}')
    return value


# query argument -> (minor version that allows it, parse the value, predicate over a node's values)
_FILTERS: dict[str, tuple[int, Callable[[str, str], Any], Callable[[Any], Callable[[dict[str, Any]], bool]]]] = {
    "chassis_uuid": (1, params.uuid, _equals("chassis_uuid")),
    "instance_uuid": (1, params.uuid, _equals("instance_uuid")),
    "associated": (1, params.boolean, lambda wanted: lambda v: (v["instance_uuid"] is not None) == wanted),
    "maintenance": (1, params.boolean, _equals("maintenance")),
    "provision_state": (9, lambda _, value: _provision_state(value), _equals("provision_state")),
    "driver": (16, lambda _, value: value, _equals("driver")),
    "resource_class": (21, lambda _, value: value, _equals("resource_class")),
    "fault": (42, lambda _, value: _fault(value), _equals("fault")),
    "conductor_group": (46, lambda _, value: value.lower(), _equals("conductor_group")),
    "conductor": (49, lambda _, value: value, _equals("conductor")),
    "owner": (50, lambda _, value: value, _equals("owner")),
    "description_contains": (51, lambda _, value: value,
                             lambda wanted: lambda v: wanted in (v["description"] or "")),
    "retired": (61, params.boolean, _equals("retired")),
    "lessee": (65, lambda _, value: value, _equals("lessee")),
    "project": (65, lambda _, value: value, lambda wanted: lambda v: wanted in (v["owner"], v["lessee"])),
    "shard": (82, lambda _, value: params.string_list(value), lambda wanted: lambda v: v["shard"] in wanted),
    "sharded": (82, params.boolean, lambda wanted: lambda v: (v["shard"] is not None) == wanted),
    "include_children": (83, params.boolean, lambda wanted: lambda v: True),  # Tether's nodes have no children
    "parent_node": (83, lambda _, value: value, _equals("parent_node")),
}


# The filters Tether's nodes answer from their own columns, as ``domain.listing`` filters.
_COLUMN_FILTERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "chassis_uuid": lambda wanted: {"chassis_uuid": [wanted]},
    "instance_uuid": lambda wanted: {"instance_uuid": [wanted]},
    "associated": lambda wanted: {"instance_uuid": Present(wanted)},
    "maintenance": lambda wanted: {"maintenance": [wanted]},
    "provision_state": lambda wanted: {"provision_state": [wanted]},
    "driver": lambda wanted: {"driver": [wanted]},
    "resource_class": lambda wanted: {"resource_class": [wanted]},
    "owner": lambda wanted: {"owner": [wanted]},
    "lessee": lambda wanted: {"lessee": [wanted]},
    "retired": lambda wanted: {"retired": [wanted]},
    "description_contains": lambda wanted: {"description": Contains(wanted)},
    "shard": lambda wanted: {"shard": wanted},
    "sharded": lambda wanted: {"shard": Present(wanted)},
}
# Filters that hold when any one of their columns does: a project's nodes are those it owns or leases.
_EITHER_FILTERS: dict[str, Callable[[Any], tuple[dict[str, Any], ...]]] = {
    "project": lambda wanted: ({"owner": [wanted]}, {"lessee": [wanted]}),
}


async def node_collection(request: Request, ctx: RequestContext, version: Microversion, *, detail: bool,
                          resource: str, chassis_uuid: str | None = None) -> dict[str, Any]:
    """GET /nodes, /nodes/detail and /chassis/{uuid}/nodes."""
    allowed = [*_FILTERS, *params.PAGING] + ([] if detail else ["fields", "detail"])
    args = params.query(request, allowed)
    views.check_node_fields(params.string_list(args.get("fields")), version)
    fields = None if detail else params.fields_and_detail(args, version, views.NODE_SHORT_FIELDS)
    page = params.Page.from_query(args)
    if views.NODE_FIELD_MINORS.get(page.sort_key, 0) > params.minor(version):
        raise errors.NotAcceptable()
    page.check_sort_key(views.node_values(views.SAMPLE_NODE, ""), views.NODE_UNSORTABLE)
    host = conductor(request)
    constants = views.node_values(views.SAMPLE_NODE, host)
    filters: list[dict[str, Any]] = [] if chassis_uuid is None else [{"chassis_uuid": [chassis_uuid]}]
    keeps = True
    either: list[tuple[dict[str, Any], ...]] = []
    for name, (needed, parse, predicate) in _FILTERS.items():
        if name in args:
            params.require(version, needed)
            wanted = parse(name, args[name])
            if name in _COLUMN_FILTERS:
                filters.append(_COLUMN_FILTERS[name](wanted))
            elif name in _EITHER_FILTERS:
                either.append(_EITHER_FILTERS[name](wanted))
            else:  # what Tether's nodes all have alike: the filter keeps every node or none
                keeps = keeps and predicate(wanted)(constants)
    # one condition per column in the filters; a second on the same column (a chassis's nodes filtered by
    # chassis_uuid, instance_uuid with associated) must hold as well
    first: dict[str, Any] = {}
    also: list[tuple[dict[str, Any], ...]] = []
    for condition in filters:
        for column, wanted in condition.items():
            if column in first:
                also.append(({column: wanted},))
            else:
                first[column] = wanted
    query = page.listing(Node, first, (*also, *either))
    if keeps:
        nodes = await service(request).page_nodes(ctx, query)
    elif page.marker is not None:
        raise be.NodeNotFound(node=page.marker)  # no node is listed, the marker among them
    else:
        nodes = []
    bodies = [body_of(request, node, version, fields) for node in nodes]
    # ironic gives no next link when looking a node up by its instance (instance_uuid is unique).
    return views.collection("nodes", bodies, nodes[-1].uuid if nodes else None,
                            None if "instance_uuid" in args else page, views.public_url(request), resource, args)


@router.get("/shards")
async def list_shards(request: Request, ctx: params.admin("baremetal:shards:get"),
                      version: params.Version) -> dict[str, Any]:
    if params.minor(version) < 82:
        raise be.NotFound("The API version does not allow shards")
    params.query(request, ())
    # ironic names the nodes without a shard "None", as str() of the database's NULL
    return {"shards": [{"name": str(shard), "count": count} for shard, count in await service(request).shards(ctx)]}


LIST_DOC = params.query_doc(*_FILTERS, *params.PAGING, "fields", "detail")
DETAIL_DOC = params.query_doc(*_FILTERS, *params.PAGING)


@router.get("/nodes", openapi_extra=LIST_DOC)
@router.get("/nodes/", include_in_schema=False)
async def list_nodes(request: Request, ctx: params.admin("baremetal:node:list"),
                     version: params.Version) -> dict[str, Any]:
    return await node_collection(request, ctx, version, detail=False, resource="nodes")


@router.get("/nodes/detail", openapi_extra=DETAIL_DOC)
@router.get("/nodes/detail/", include_in_schema=False)
async def list_nodes_detail(request: Request, ctx: params.admin("baremetal:node:list"),
                            version: params.Version) -> dict[str, Any]:
    return await node_collection(request, ctx, version, detail=True, resource="nodes/detail")


# -- one node --------------------------------------------------------------------------------


@router.post("/nodes", status_code=201, openapi_extra=params.body_doc(NODE_SCHEMA))
@router.post("/nodes/", status_code=201, include_in_schema=False)
async def create_node(request: Request, ctx: params.admin("baremetal:node:create"),
                      version: params.Version) -> JSONResponse:
    body = params.check_schema("node", await json_object(request), NODE_SCHEMA)
    for name in _BOOLEANS:
        if name in body:
            body[name] = params.boolean(name, body[name])
    for name in _UUIDS:
        if body.get(name) is not None:
            body[name] = params.uuid(name, body[name])
    refuse_newer_fields(body, version)
    check_name(body.get("name"))
    params.refuse_unsupported("node", body, _EMPTY_AT_CREATE)
    try:
        node = await service(request).create_node(
            ctx, name=body.get("name"), driver=body["driver"], resource_class=body.get("resource_class"),
            properties=body.get("properties"), driver_info=body.get("driver_info"), extra=body.get("extra"),
            chassis_uuid=body.get("chassis_uuid"), uuid=body.get("uuid"),
            fields={name: body[name] for name in _OPTIONAL if body.get(name) is not None},
            available=params.minor(version) < 11,  # ironic's initial_node_provision_state
        )
    except be.ChassisNotFound as error:
        raise errors.ReferenceNotFound(message=error.message) from None
    url = views.public_url(request)
    return JSONResponse(body_of(request, node, version), status_code=201,
                        headers={"Location": views.link("self", url, "nodes", node.uuid)["href"]})


@router.get("/nodes/{ident}", openapi_extra=params.query_doc("fields"))
async def show_node(ident: str, request: Request, ctx: params.admin("baremetal:node:get"),
                    version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("fields",))
    fields = params.string_list(args.get("fields"))
    node = await find_node(request, ctx, ident, version)
    if fields is not None:
        params.require(version, 8)
    views.check_node_fields(fields, version)
    return body_of(request, node, version, fields)


@router.patch("/nodes/{ident}", openapi_extra={**params.PATCH_DOC, **params.query_doc("reset_interfaces")})
async def update_node(ident: str, request: Request,
                      ctx: params.admin("baremetal:node:update"),
                      version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("reset_interfaces",))
    reset_interfaces = params.boolean("reset_interfaces", args.get("reset_interfaces"))
    if reset_interfaces is not None:
        params.require(version, 45)
    patch = await json_body(request)
    roots = params.patch_roots(patch)
    setting = [(root, value) for op, root, value in roots if op in ("add", "replace")]
    newer = views.newer_fields(views.NODE_FIELD_MINORS, version)
    if any(root in newer and value for root, value in setting):
        raise errors.NotAcceptable()  # ironic's reject_patch_in_newer_versions
    if reset_interfaces and not any(root == "driver" for root, _ in setting):
        raise be.Invalid(reason="The reset_interfaces parameter can only be used when changing the node's driver.")
    for root, value in setting:
        if root == "name":
            check_name(value)
    node = await find_node(request, ctx, ident, version)
    removing_instance = patch == [{"op": "remove", "path": "/instance_uuid"}]
    if not (node.maintenance and removing_instance) and node.target_provision_state \
            and node.provision_state not in UPDATE_ALLOWED_STATES:
        raise errors.UpdateWhileTransitioning(node=ident)
    try:
        updated = await service(request).update_node(ctx, node.uuid, patch, reset_interfaces=bool(reset_interfaces))
    except be.ChassisNotFound as error:
        raise errors.ReferenceNotFound(message=error.message) from None
    return body_of(request, updated, version)


@router.delete("/nodes/{ident}", status_code=204)
async def delete_node(ident: str, request: Request,
                      ctx: params.admin("baremetal:node:delete"),
                      version: params.Version) -> Response:
    params.query(request, ())
    node = await find_node(request, ctx, ident, version)
    await service(request).delete_node(ctx, node.uuid)
    return Response(status_code=204)


# -- maintenance -----------------------------------------------------------------------------


@router.put("/nodes/{ident}/maintenance", status_code=202, openapi_extra={
    **params.query_doc("reason"),
    **openapi.extra(openapi.json_body(openapi.obj({"reason": openapi.STRING}), required=False))})
async def set_maintenance(ident: str, request: Request,
                          ctx: params.admin("baremetal:node:set_maintenance"),
                          version: params.Version) -> Response:
    args = params.query(request, ("reason",))
    reason = args.get("reason")
    if await request.body():
        body = await json_object(request)
        unexpected = sorted(set(body) - {"reason"})
        if unexpected:
            raise be.InvalidParameterValue(err=f"Unexpected arguments: {', '.join(unexpected)}")
        reason = body.get("reason", reason)
    if reason is not None and not isinstance(reason, str):
        raise be.InvalidParameterValue(err=f"Expected string for reason: {reason}")
    await service(request).set_maintenance(ctx, params.node_ident(ident, version), True, reason)
    return Response(status_code=202)


@router.delete("/nodes/{ident}/maintenance", status_code=202)
async def clear_maintenance(ident: str, request: Request,
                            ctx: params.admin("baremetal:node:clear_maintenance"),
                            version: params.Version) -> Response:
    params.query(request, ())
    await service(request).set_maintenance(ctx, params.node_ident(ident, version), False)
    return Response(status_code=202)
