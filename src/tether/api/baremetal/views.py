"""Ironic's resource bodies, field by field as each microversion shows them, with their links.

Every field ironic has is present when the negotiated microversion has it.
Where Tether has no such thing the value is ironic's own "nothing" for that
field (null, an empty dict, False for a flag that is never set), never an
invented one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import Request

from tether.api.baremetal import errors, params
from tether.api.versions import Microversion
from tether.domain.baremetal import Allocation, Chassis, Node, NodePort, Portgroup
from tether.domain.baremetal_drivers import INTERFACE_FIELDS
from tether.domain.baremetal_states import AVAILABLE
from tether.domain.errors import baremetal as be

_V31_INTERFACES = ("boot_interface", "console_interface", "deploy_interface", "inspect_interface",
                   "management_interface", "power_interface", "raid_interface", "vendor_interface")

# ironic's api_utils.VERSIONED_FIELDS: the minor version that added each node field.
NODE_FIELD_MINORS: dict[str, int] = {
    "driver_internal_info": 3, "name": 5, "inspection_finished_at": 6, "inspection_started_at": 6,
    "clean_step": 7, "raid_config": 12, "target_raid_config": 12, "network_interface": 20,
    "resource_class": 21, **dict.fromkeys(_V31_INTERFACES, 31), "storage_interface": 33, "traits": 37,
    "rescue_interface": 38, "bios_interface": 40, "fault": 42, "deploy_step": 44, "conductor_group": 46,
    "automated_clean": 47, "protected": 48, "protected_reason": 48, "conductor": 49, "owner": 50,
    "description": 51, "allocation_uuid": 52, "retired": 61, "retired_reason": 61, "lessee": 65,
    "network_data": 66, "boot_mode": 75, "secure_boot": 75, "shard": 82, "parent_node": 83,
    "firmware_interface": 86, "service_step": 87, "disable_power_off": 95, "instance_name": 104,
    "health": 109,
}
NODE_SHORT_FIELDS = ["instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"]
# Fields a list cannot be sorted by (ironic's NodesController.invalid_sort_key_list).
NODE_UNSORTABLE = ("properties", "driver_info", "extra", "instance_info", "driver_internal_info", "clean_step",
                   "deploy_step", "raid_config", "target_raid_config", "traits", "network_data", "service_step")

PORT_FIELD_MINORS: dict[str, int] = {
    "internal_info": 18, "pxe_enabled": 19, "local_link_connection": 19, "portgroup_uuid": 24,
    "physical_network": 34, "is_smartnic": 53, "name": 88, "description": 97, "vendor": 100, "category": 101,
    "available_for_dynamic_portgroup": 111,
}
PORT_SHORT_FIELDS = ["uuid", "address"]
PORT_UNSORTABLE = ("extra", "internal_info", "local_link_connection")

PORTGROUP_FIELD_MINORS: dict[str, int] = {
    "mode": 26, "properties": 26, "physical_network": 102, "category": 103, "dynamic_portgroup": 111,
}
PORTGROUP_SHORT_FIELDS = ["uuid", "address", "name"]
PORTGROUP_UNSORTABLE = ("extra", "internal_info", "properties")

CHASSIS_SHORT_FIELDS = ["uuid", "description"]
CHASSIS_UNSORTABLE = ("extra",)


def iso(moment: float | None) -> str | None:
    return datetime.fromtimestamp(moment, UTC).isoformat() if moment else None


def public_url(request: Request) -> str:
    """What ironic calls the public URL: the catalog's baremetal endpoint, without /v1."""
    return f"{request.app.state.base_url}/baremetal"


def link(rel: str, url: str, resource: str, args: str, *, bookmark: bool = False) -> dict[str, str]:
    """ironic's link.make_link: ``self`` under /v1, ``bookmark`` without it."""
    base = f"{url}/{resource}" if bookmark else f"{url}/v1/{resource}"
    return {"href": f"{base}{args}" if args.startswith("?") else f"{base}/{args}", "rel": rel}


def links(url: str, resource: str, args: str) -> list[dict[str, str]]:
    return [link("self", url, resource, args), link("bookmark", url, resource, args, bookmark=True)]


def newer_fields(minors: dict[str, int], version: Microversion) -> set[str]:
    """The fields a microversion does not have yet."""
    return {name for name, needed in minors.items() if params.minor(version) < needed}


def _keep(body: dict[str, Any], fields: list[str] | None, hidden: set[str]) -> dict[str, Any]:
    """ironic's hide_fields_in_newer_versions, then sanitize_dict (``links`` always stays)."""
    for name in hidden:
        body.pop(name, None)
    if fields is not None:
        for name in set(body) - set(fields) - {"links"}:
            del body[name]
    return body


# -- nodes -----------------------------------------------------------------------------


def node_values(node: Node, conductor: str) -> dict[str, Any]:
    """Every node field ironic has, at the newest microversion."""
    return {
        "uuid": node.uuid, "name": node.name, "created_at": iso(node.created_at),
        "updated_at": iso(node.updated_at), "instance_uuid": node.instance_uuid,
        "instance_info": node.instance_info, "power_state": node.power_state,
        "target_power_state": node.target_power_state, "provision_state": node.provision_state,
        "target_provision_state": node.target_provision_state,
        "provision_updated_at": iso(node.provision_updated_at), "maintenance": node.maintenance,
        "maintenance_reason": node.maintenance_reason, "last_error": node.last_error,
        "reservation": node.reservation, "driver": node.driver, "driver_info": node.driver_info,
        "driver_internal_info": {}, "extra": node.extra, "properties": node.properties,
        "console_enabled": node.console_enabled, "chassis_uuid": node.chassis_uuid, "inspection_started_at": None,
        "inspection_finished_at": None, "clean_step": {}, "deploy_step": {}, "service_step": {},
        "raid_config": {}, "target_raid_config": node.target_raid_config,
        **{name: getattr(node, name) for name in INTERFACE_FIELDS}, "resource_class": node.resource_class,
        "traits": list(node.traits), "fault": None, "conductor_group": "", "automated_clean": None,
        "protected": node.protected, "protected_reason": node.protected_reason, "conductor": conductor,
        "owner": node.owner, "lessee": node.lessee, "description": node.description,
        "allocation_uuid": node.allocation_uuid, "retired": node.retired, "retired_reason": node.retired_reason,
        "network_data": {},
        "boot_mode": None, "secure_boot": None, "shard": node.shard, "parent_node": None,
        "disable_power_off": False, "instance_name": None, "health": None,
    }


def check_node_fields(fields: Iterable[str] | None, version: Microversion) -> None:
    """ironic: a field newer than the microversion is 406, one that does not exist 400."""
    if fields is None:
        return
    if set(fields) & newer_fields(NODE_FIELD_MINORS, version):
        raise errors.NotAcceptable()
    for name in fields:
        if name not in NODE_FIELD_MINORS and name not in node_values(SAMPLE_NODE, ""):
            raise be.Invalid(reason=f"Field {name} is not a valid field.")


SAMPLE_NODE = Node(uuid="", name=None)


def node_body(node: Node, version: Microversion, url: str, conductor: str,
              fields: list[str] | None = None) -> dict[str, Any]:
    body = node_values(node, conductor)
    if params.minor(version) < 2 and body["provision_state"] == AVAILABLE:
        body["provision_state"] = None  # ironic's NOSTATE before 1.2
    body["links"] = links(url, "nodes", node.uuid)
    if fields is None:
        body["ports"] = links(url, "nodes", f"{node.uuid}/ports")
        if params.minor(version) >= 14:
            body["states"] = links(url, "nodes", f"{node.uuid}/states")
        if params.minor(version) >= 24:
            body["portgroups"] = links(url, "nodes", f"{node.uuid}/portgroups")
    return _keep(body, fields, newer_fields(NODE_FIELD_MINORS, version))


def node_states(node: Node, version: Microversion) -> dict[str, Any]:
    """GET /nodes/{node}/states (ironic's node_states_convert)."""
    states: dict[str, Any] = {
        "console_enabled": node.console_enabled, "last_error": node.last_error, "power_state": node.power_state,
        "provision_state": node.provision_state, "target_power_state": node.target_power_state,
        "target_provision_state": node.target_provision_state,
        "provision_updated_at": iso(node.provision_updated_at),
    }
    if params.minor(version) < 2 and states["provision_state"] == AVAILABLE:
        states["provision_state"] = None
    if params.minor(version) >= 12:
        states.update(raid_config={}, target_raid_config=node.target_raid_config)
    if params.minor(version) >= 75:
        states.update(boot_mode=None, secure_boot=None)
    return states


# -- ports -----------------------------------------------------------------------------


def port_values(port: NodePort) -> dict[str, Any]:
    return {
        "uuid": port.uuid, "address": port.address, "node_uuid": port.node_uuid,
        "portgroup_uuid": port.portgroup_uuid, "physical_network": port.physical_network,
        "pxe_enabled": port.pxe_enabled, "local_link_connection": port.local_link_connection,
        "internal_info": port.internal_info, "extra": port.extra, "is_smartnic": False, "name": None,
        "description": None, "vendor": None, "category": None, "available_for_dynamic_portgroup": False,
        "created_at": iso(port.created_at), "updated_at": iso(port.updated_at),
    }


def check_port_fields(fields: Iterable[str] | None, version: Microversion) -> None:
    """ironic's _check_allowed_port_fields (406), then check_for_invalid_fields (400)."""
    if fields is None:
        return
    if set(fields) & newer_fields(PORT_FIELD_MINORS, version):
        raise errors.NotAcceptable()
    invalid = [name for name in fields if name not in port_values(SAMPLE_PORT) and name != "links"]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


SAMPLE_PORT = NodePort(uuid="", address="", node_uuid="")


def port_body(port: NodePort, version: Microversion, url: str, fields: list[str] | None = None) -> dict[str, Any]:
    body = port_values(port)
    body["links"] = links(url, "ports", port.uuid)
    return _keep(body, fields, newer_fields(PORT_FIELD_MINORS, version))


# -- portgroups ------------------------------------------------------------------------


def portgroup_values(portgroup: Portgroup) -> dict[str, Any]:
    return {
        "uuid": portgroup.uuid, "address": portgroup.address, "name": portgroup.name,
        "node_uuid": portgroup.node_uuid, "standalone_ports_supported": portgroup.standalone_ports_supported,
        "internal_info": portgroup.internal_info, "extra": portgroup.extra, "mode": portgroup.mode,
        "properties": portgroup.properties, "physical_network": portgroup.physical_network,
        "category": portgroup.category, "dynamic_portgroup": False,
        "created_at": iso(portgroup.created_at), "updated_at": iso(portgroup.updated_at),
    }


def check_portgroup_fields(fields: Iterable[str] | None, version: Microversion) -> None:
    if fields is None:
        return
    if set(fields) & newer_fields(PORTGROUP_FIELD_MINORS, version):
        raise errors.NotAcceptable()
    invalid = [name for name in fields
               if name not in portgroup_values(SAMPLE_PORTGROUP) and name not in ("links", "ports")]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


SAMPLE_PORTGROUP = Portgroup(uuid="", node_uuid="")


def portgroup_body(portgroup: Portgroup, version: Microversion, url: str,
                   fields: list[str] | None = None) -> dict[str, Any]:
    body = portgroup_values(portgroup)
    body["links"] = links(url, "portgroups", portgroup.uuid)
    body["ports"] = links(url, "portgroups", f"{portgroup.uuid}/ports")
    return _keep(body, fields, newer_fields(PORTGROUP_FIELD_MINORS, version))


# -- chassis ---------------------------------------------------------------------------


def chassis_values(chassis: Chassis) -> dict[str, Any]:
    return {"uuid": chassis.uuid, "description": chassis.description, "extra": chassis.extra,
            "created_at": iso(chassis.created_at), "updated_at": iso(chassis.updated_at)}


def check_chassis_fields(fields: Iterable[str] | None) -> None:
    if fields is None:
        return
    known = {*chassis_values(Chassis(uuid="")), "links", "nodes"}
    invalid = [name for name in fields if name not in known]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


def chassis_body(chassis: Chassis, url: str, fields: list[str] | None = None) -> dict[str, Any]:
    body = chassis_values(chassis)
    body["links"] = links(url, "chassis", chassis.uuid)
    body["nodes"] = links(url, "chassis", f"{chassis.uuid}/nodes")
    return _keep(body, fields, set())


# -- allocations -----------------------------------------------------------------------

ALLOCATION_SHORT_FIELDS = None  # ironic lists allocations with every field
ALLOCATION_UNSORTABLE = ("extra", "candidate_nodes", "traits")


def allocation_values(allocation: Allocation) -> dict[str, Any]:
    return {"uuid": allocation.uuid, "name": allocation.name, "node_uuid": allocation.node_uuid,
            "state": allocation.state, "last_error": allocation.last_error,
            "resource_class": allocation.resource_class, "traits": list(allocation.traits),
            "candidate_nodes": list(allocation.candidate_nodes), "extra": allocation.extra,
            "owner": allocation.owner, "created_at": iso(allocation.created_at),
            "updated_at": iso(allocation.updated_at)}


def check_allocation_fields(fields: Iterable[str] | None, version: Microversion) -> None:
    if fields is None:
        return
    if "owner" in fields and params.minor(version) < 60:
        raise errors.NotAcceptable()
    invalid = [name for name in fields if name not in allocation_values(SAMPLE_ALLOCATION) and name != "links"]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


SAMPLE_ALLOCATION = Allocation(uuid="")


def allocation_body(allocation: Allocation, version: Microversion, url: str,
                    fields: list[str] | None = None) -> dict[str, Any]:
    body = allocation_values(allocation)
    body["links"] = links(url, "allocations", allocation.uuid)
    return _keep(body, fields, set() if params.minor(version) >= 60 else {"owner"})


# -- collections -----------------------------------------------------------------------


def collection(name: str, items: list[dict[str, Any]], last: str | None, page: params.Page | None, url: str,
               resource: str, args: dict[str, str]) -> dict[str, Any]:
    """``{name: items}``, with a ``next`` link (after ``last``, a uuid) when the page is full.

    ironic's next link keeps only a few of the request's arguments (sort,
    associated, maintenance, detail, fields), so a client following it loses
    its filters; this one keeps every argument but the page's own.
    """
    body: dict[str, Any] = {name: items}
    if page is not None and last is not None and len(items) == page.limit:
        kept = {key: value for key, value in args.items() if key not in ("limit", "marker")}
        query = urlencode({**kept, "limit": page.limit, "marker": last}, safe=",:")
        body["next"] = link("next", url, resource, f"?{query}")["href"]
    return body
