"""What the public OpenStack APIs show, mapped onto the domain's entities, so the invariants judge it.

Every reading here is one the upstream APIs give any admin; where they give less than Tether's own
store, the gap is closed in the direction that concludes nothing:

- who created a port is not public (nova's ``preserve_on_delete`` lives in its info cache), so every
  port reads as the user's: an orphan is released, never deleted;
- an instance's info cache is read from its ``addresses`` (MAC and fixed IPs per network); while it
  builds nova hides them, and a port without a fixed IP never shows there, so those ports of the
  instance count as listed;
- a server whose ``OS-EXT-SRV-ATTR:hypervisor_hostname`` is a UUID runs on ironic (the ironic
  driver names each compute node after its bare-metal node); nova's deadlines are not public, so
  only the contradictions between nova and ironic make a BUILD stuck, and ironic's own states their
  deadlines;
- heat keeps the ports it makes for a server in its own database, so stack -> port ownership is not
  read, and an IP allocation is read as part of its port.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tether.domain import compute_states as vm
from tether.domain.baremetal import Node, NodePort, Portgroup
from tether.domain.compute import GuestInterface, Instance, VifEntry
from tether.domain.ids import is_uuid_like
from tether.domain.network import IpAllocation, Port

Raw = dict[str, Any]


def epoch(stamp: str | None) -> float:
    """An API timestamp (ISO 8601, with or without a zone; naive means UTC, as OpenStack writes it)."""
    if not stamp:
        return 0.0
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def instance_of(server: Raw) -> Instance:
    node = server.get("OS-EXT-SRV-ATTR:hypervisor_hostname")
    return Instance(
        uuid=server["id"], name=server.get("name") or "", project_id=server.get("tenant_id") or "",
        user_id=server.get("user_id") or "", flavor_id="", image_id=None,
        vm_state=server.get("OS-EXT-STS:vm_state") or vm.BUILDING,
        task_state=server.get("OS-EXT-STS:task_state"),
        host=server.get("OS-EXT-SRV-ATTR:host"), node=node,
        is_baremetal=bool(node) and is_uuid_like(node),
        created_at=epoch(server.get("created")), updated_at=epoch(server.get("updated")),
    )


def port_of(port: Raw) -> Port:
    return Port(
        id=port["id"], name=port.get("name") or "", network_id=port["network_id"],
        project_id=port.get("project_id") or port.get("tenant_id") or "", mac_address=port["mac_address"],
        status=port.get("status") or "DOWN", device_id=port.get("device_id") or "",
        device_owner=port.get("device_owner") or "", binding_host_id=port.get("binding:host_id") or "",
        fixed_ips=[{"subnet_id": ip["subnet_id"], "ip_address": ip["ip_address"]}
                   for ip in port.get("fixed_ips") or []],
        created_at=epoch(port.get("created_at")), updated_at=epoch(port.get("updated_at")),
    )


def allocations_of(ports: list[Port]) -> list[IpAllocation]:
    return [IpAllocation(subnet_id=ip["subnet_id"], ip_address=ip["ip_address"], network_id=port.network_id,
                         port_id=port.id) for port in ports for ip in port.fixed_ips]


def cache_of(server: Raw, instance: Instance, ports_of_instance: list[Port]) -> list[VifEntry]:
    """The instance's info cache as far as ``addresses`` shows it; unknown rows count as listed."""
    shown = {address.get("OS-EXT-IPS-MAC:mac_addr", "").lower()
             for addresses in (server.get("addresses") or {}).values() for address in addresses}
    hidden = instance.vm_state == vm.BUILDING
    return [VifEntry(instance_uuid=instance.uuid, port_id=port.id, network_id=port.network_id,
                     address=port.mac_address, position=position, fixed_ips=port.fixed_ips)
            for position, port in enumerate(ports_of_instance)
            if hidden or not port.fixed_ips or port.mac_address.lower() in shown]


def node_of(node: Raw) -> Node:
    return Node(
        uuid=node["uuid"], name=node.get("name"), provision_state=node.get("provision_state") or "",
        target_provision_state=node.get("target_provision_state"), maintenance=bool(node.get("maintenance")),
        instance_uuid=node.get("instance_uuid"), reservation=node.get("reservation"),
        provision_updated_at=epoch(node.get("provision_updated_at")),
        created_at=epoch(node.get("created_at")), updated_at=epoch(node.get("updated_at")),
    )


def nic_of(nic: Raw) -> NodePort:
    return NodePort(uuid=nic["uuid"], address=nic["address"], node_uuid=nic["node_uuid"],
                    portgroup_uuid=nic.get("portgroup_uuid"), internal_info=dict(nic.get("internal_info") or {}),
                    created_at=epoch(nic.get("created_at")), updated_at=epoch(nic.get("updated_at")))


def portgroup_of(group: Raw) -> Portgroup:
    return Portgroup(uuid=group["uuid"], node_uuid=group["node_uuid"], name=group.get("name"),
                     address=group.get("address"), internal_info=dict(group.get("internal_info") or {}),
                     created_at=epoch(group.get("created_at")), updated_at=epoch(group.get("updated_at")))


def guest_interfaces_of(instance: Instance, diagnostics: Raw, ports: list[Port]) -> list[GuestInterface]:
    """nova's diagnostics (2.48) name each guest NIC by MAC only: its port is the one with that MAC.

    A NIC whose MAC no port of the cloud has (seed 004: its port was deleted) keeps an empty port id,
    which no port has: the invariant then says its port no longer exists.
    """
    by_mac = {port.mac_address.lower(): port for port in ports}
    out = []
    for nic in diagnostics.get("nic_details") or []:
        mac = (nic.get("mac_address") or "").lower()
        port = by_mac.get(mac)
        port_id = port.id if port is not None else ""
        out.append(GuestInterface(host=instance.host or "", instance_uuid=instance.uuid,
                                  device=f"tap{port_id[:11]}" if port_id else "(unnamed)", mac=mac,
                                  port_id=port_id))
    return out
