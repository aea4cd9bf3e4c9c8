"""Server, flavor and interface bodies, field by field as nova's views build them, by microversion.

Every field is produced honestly: where Tether has no such thing (volumes,
security groups, locks, tags, reservation ids, user data) the body says so
with nova's own empty value or null, never an invented one.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from datetime import UTC, datetime
from typing import Any

from tether.api.versions import Microversion
from tether.domain import compute_states as vm
from tether.domain.compute import Flavor, Instance, VifEntry
from tether.domain.network import Port
from tether.services.compute.queries import ServerRecord
from tether.services.context import RequestContext

DEFAULT_AVAILABILITY_ZONE = "nova"
_FAULT_STATUSES = ("ERROR", "DELETED")
_PROGRESS_STATUSES = ("ACTIVE", "BUILD", "REBUILD", "RESIZE", "VERIFY_RESIZE", "MIGRATING")


# -- times and links ----------------------------------------------------------------


def isotime(moment: float | None) -> str | None:
    """nova's utils.isotime: seconds, then Z."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def naive_time(moment: float | None) -> str | None:
    """A naive datetime as oslo's jsonutils writes it (launched_at, instance actions)."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")


def href(base: str, collection: str, ident: str) -> str:
    return f"{base}/compute/v2.1/{collection}/{ident}"


def bookmark(base: str, collection: str, ident: str) -> str:
    return f"{base}/compute/{collection}/{ident}"


def links(base: str, collection: str, ident: str) -> list[dict[str, str]]:
    return [{"rel": "self", "href": href(base, collection, ident)},
            {"rel": "bookmark", "href": bookmark(base, collection, ident)}]


def host_id(host: str | None, project_id: str) -> str:
    """nova's generate_hostid: an obfuscated host, the same for one project, "" without a host."""
    if not host:
        return ""
    return hashlib.sha224((project_id + host).encode()).hexdigest()


def guest_hostname(instance: Instance) -> str:
    """The hostname the user set (2.90), else the one nova derives from the display name
    (utils.sanitize_hostname)."""
    if instance.hostname:
        return instance.hostname
    name = instance.name.encode("latin-1", "ignore").decode("latin-1")[:63]
    name = re.sub(r"[ _.]", "-", name)
    name = re.sub(r"[^\w.-]+", "", name).lower().strip(".-")
    return name or f"Server-{instance.uuid}"


# -- servers ------------------------------------------------------------------------


def server_basic(base: str, instance: Instance) -> dict[str, Any]:
    return {"id": instance.uuid, "name": instance.name, "links": links(base, "servers", instance.uuid)}


def server_created(base: str, instance: Instance, admin_pass: str,
                   security_groups: list[dict[str, str]]) -> dict[str, Any]:
    return {"server": {"id": instance.uuid, "links": links(base, "servers", instance.uuid),
                       "OS-DCF:diskConfig": disk_config(instance), "security_groups": security_groups,
                       "adminPass": admin_pass}}


def disk_config(instance: Instance) -> str:
    return "AUTO" if instance.disk_config == "AUTO" else "MANUAL"


def availability_zone(instance: Instance) -> str:
    """nova's: the zone of the host it runs on; before that, the zone it asked for, if any."""
    if instance.host:
        return instance.availability_zone or DEFAULT_AVAILABILITY_ZONE
    return instance.pinned_availability_zone or ""


def server_status(instance: Instance) -> str:
    return "DELETED" if instance.deleted else instance.status


def shows_host_status(ctx: RequestContext, version: Microversion) -> bool:
    return ctx.is_admin and version.at_least("2.16")


def record_reads(ctx: RequestContext, version: Microversion) -> dict[str, bool]:
    """What ``server_detail`` of one server (show, update, rebuild) shows beyond the instance, for
    ``server_record`` to read; a list shows no server groups, and its records hold none."""
    return {"with_hosts": shows_host_status(ctx, version), "with_groups": version.at_least("2.71")}


def server_detail(base: str, record: ServerRecord, version: Microversion, ctx: RequestContext) -> dict[str, Any]:
    """One server as GET /servers/{id} or GET /servers/detail shows it (the first with its server groups,
    which its record holds when ``record_reads`` asked for them)."""
    instance = record.instance
    status = server_status(instance)
    admin = ctx.is_admin
    body: dict[str, Any] = {
        "accessIPv4": instance.access_ip_v4 or "",
        "accessIPv6": instance.access_ip_v6 or "",
        "addresses": addresses(record),
        "created": isotime(instance.created_at),
        "flavor": _flavor_of(base, record, version),
        "hostId": host_id(instance.host, instance.project_id),
        "id": instance.uuid,
        "image": _image_of(base, instance),
        "links": links(base, "servers", instance.uuid),
        "metadata": dict(instance.metadata or {}),
        "name": instance.name,
        "status": status,
        "tenant_id": instance.project_id,
        "user_id": instance.user_id,
        "updated": isotime(instance.updated_at),
        "OS-DCF:diskConfig": disk_config(instance),
    }
    if status in _FAULT_STATUSES and record.fault is not None:
        fault = record.fault
        body["fault"] = {"code": fault.code, "created": isotime(fault.created_at), "message": fault.message}
        if fault.details and (admin or fault.code != 500):
            body["fault"]["details"] = fault.details
    if status in _PROGRESS_STATUSES:
        body["progress"] = 0
    body["OS-EXT-AZ:availability_zone"] = availability_zone(instance)
    body["config_drive"] = instance.config_drive or ""
    body["key_name"] = instance.key_name
    body["OS-SRV-USG:launched_at"] = naive_time(instance.launched_at)
    body["OS-SRV-USG:terminated_at"] = naive_time(instance.deleted_at) if instance.deleted else None
    if admin:  # os_compute_api:os-extended-server-attributes
        body["OS-EXT-SRV-ATTR:host"] = instance.host
        body["OS-EXT-SRV-ATTR:instance_name"] = f"instance-{instance.uuid}"
        body["OS-EXT-SRV-ATTR:hypervisor_hostname"] = instance.node
        if version.at_least("2.3"):
            body.update({
                "OS-EXT-SRV-ATTR:hostname": guest_hostname(instance),
                "OS-EXT-SRV-ATTR:kernel_id": "",
                "OS-EXT-SRV-ATTR:launch_index": instance.launch_index,
                "OS-EXT-SRV-ATTR:ramdisk_id": "",
                # Tether's guests have no kernel or ramdisk images and no root device name.
                "OS-EXT-SRV-ATTR:reservation_id": instance.reservation_id,
                "OS-EXT-SRV-ATTR:root_device_name": None,
                "OS-EXT-SRV-ATTR:user_data": instance.user_data,
            })
    body["OS-EXT-STS:task_state"] = instance.task_state
    body["OS-EXT-STS:vm_state"] = instance.vm_state
    body["OS-EXT-STS:power_state"] = instance.power_state
    body["os-extended-volumes:volumes_attached"] = []  # Tether has no block storage
    if record.security_groups:
        body["security_groups"] = [{"name": name} for name in record.security_groups]
    if version.at_least("2.9"):
        body["locked"] = instance.locked
    if shows_host_status(ctx, version):
        body["host_status"] = host_status(record)
    if version.at_least("2.19"):
        body["description"] = instance.description
    if version.at_least("2.26"):
        body["tags"] = list(instance.tags or [])
    if version.at_least("2.63"):
        body["trusted_image_certificates"] = None
    if record.server_groups is not None:
        body["server_groups"] = list(record.server_groups)
    if version.at_least("2.73"):
        body["locked_reason"] = instance.locked_reason
    if version.at_least("2.90") and not admin:
        body["OS-EXT-SRV-ATTR:hostname"] = guest_hostname(instance)
    if version.at_least("2.96"):
        body["pinned_availability_zone"] = instance.pinned_availability_zone
    return body


def addresses(record: ServerRecord) -> dict[str, list[dict[str, Any]]]:
    """The info cache grouped by network name, as nova's ips view; hidden while building."""
    if record.instance.vm_state == vm.BUILDING:
        return {}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for entry in record.vifs:
        label = record.network_names.get(entry.network_id, entry.network_id)
        ips = grouped.setdefault(label, [])
        for fixed in entry.fixed_ips:
            address = fixed["ip_address"]
            ips.append({"version": ipaddress.ip_address(address).version, "addr": address,
                        "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": entry.address})
    return grouped


def host_status(record: ServerRecord) -> str:
    instance = record.instance
    if not instance.host:
        return ""
    if instance.is_baremetal:
        return "UP"  # the bare-metal compute service runs in this process
    hypervisor = record.hypervisor
    if hypervisor is None:
        return "UNKNOWN"
    if hypervisor.state != "up":
        return "DOWN"
    return "MAINTENANCE" if hypervisor.status == "disabled" else "UP"


def _flavor_of(base: str, record: ServerRecord, version: Microversion) -> dict[str, Any]:
    flavor = record.flavor
    if not version.at_least("2.47"):
        flavor_id = record.instance.flavor_id
        return {"id": flavor_id, "links": [{"rel": "bookmark", "href": bookmark(base, "flavors", flavor_id)}]}
    if flavor is None:
        return {}  # nova, too, shows {} for a flavor gone from the database
    return {"vcpus": flavor.vcpus, "ram": flavor.ram, "disk": flavor.disk, "ephemeral": flavor.ephemeral,
            "swap": flavor.swap, "original_name": flavor.name, "extra_specs": dict(flavor.extra_specs)}


def _image_of(base: str, instance: Instance) -> Any:
    if not instance.image_id:
        return ""
    return {"id": instance.image_id,
            "links": [{"rel": "bookmark", "href": bookmark(base, "images", instance.image_id)}]}


# -- flavors ------------------------------------------------------------------------


def flavor_basic(base: str, flavor: Flavor, version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {"id": flavor.id, "name": flavor.name, "links": links(base, "flavors", flavor.id)}
    if version.at_least("2.55"):
        body["description"] = flavor.description
    return body


def flavor_detail(base: str, flavor: Flavor, version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": flavor.id,
        "name": flavor.name,
        "ram": flavor.ram,
        "disk": flavor.disk,
        "swap": flavor.swap if version.at_least("2.75") else (flavor.swap or ""),
        "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral,
        "OS-FLV-DISABLED:disabled": False,
        "vcpus": flavor.vcpus,
        "os-flavor-access:is_public": flavor.is_public,
        "rxtx_factor": flavor.rxtx_factor or 1.0,
        "links": links(base, "flavors", flavor.id),
    }
    if version.at_least("2.55"):
        body["description"] = flavor.description
    if version.at_least("2.61"):
        body["extra_specs"] = dict(flavor.extra_specs)
    return body


# -- interfaces -------------------------------------------------------------------------


def interface_attachment(port: Port, entry: VifEntry | None, version: Microversion) -> dict[str, Any]:
    """A port attached to a server, as the network service has it now (nova's show_port)."""
    body: dict[str, Any] = {
        "net_id": port.network_id,
        "port_id": port.id,
        "mac_addr": port.mac_address,
        "port_state": port.status,
        "fixed_ips": [{"subnet_id": ip["subnet_id"], "ip_address": ip["ip_address"]} for ip in port.fixed_ips],
    }
    if version.at_least("2.70"):
        body["tag"] = entry.tag if entry is not None else None
    return body
