"""The design's invariants, one pure function each, over a snapshot of the whole system.

The tests, the explorer, ``tether check`` and the auditor all use these same
functions; only the way the snapshot is collected differs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.baremetal import Node, NodePort, Portgroup
from tether.domain.compute import GuestInterface, Instance, VifEntry
from tether.domain.network import (
    COMPUTE_OWNER_PREFIX,
    CREATED_BY_COMPUTE,
    CREATED_BY_ORCHESTRATION,
    CREATED_BY_USER,
    FLOATINGIP_OWNER,
    ROUTER_GATEWAY_OWNER,
    ROUTER_INTERFACE_OWNER,
    IpAllocation,
    Port,
)
from tether.domain.orchestration.stack_states import is_in_progress
from tether.domain.orchestration.stacks import Stack
from tether.domain.routers import FloatingIp, Router
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule
from tether.domain.server_groups import AFFINITY, ANTI_AFFINITY, ServerGroup, ServerGroupMember


@dataclass
class Snapshot:
    now: float
    instances: list[Instance] = field(default_factory=list)
    vifs: list[VifEntry] = field(default_factory=list)
    ports: list[Port] = field(default_factory=list)
    ip_allocations: list[IpAllocation] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    node_ports: list[NodePort] = field(default_factory=list)
    portgroups: list[Portgroup] = field(default_factory=list)
    guest_devices: list[GuestInterface] = field(default_factory=list)
    # Ports that orchestration owns, by port id: the stack resource that lists each.
    orchestration_ports: dict[str, str] = field(default_factory=dict)
    # The stacks that are not deleted.
    stacks: list[Stack] = field(default_factory=list)
    network_ids: set[str] = field(default_factory=set)
    image_ids: set[str] = field(default_factory=set)  # images not deleted
    keypair_ids: set[str] = field(default_factory=set)  # keypairs, by nova's integer id as text
    # Where the history of the users' requests is known (the scenarios and the explorer record it):
    # what they created, by id ("port", "network", "image", "keypair"), and what they asked to delete.
    user_made: dict[str, str] = field(default_factory=dict)
    deleted_on_request: set[str] = field(default_factory=set)
    server_groups: list[ServerGroup] = field(default_factory=list)
    group_members: list[ServerGroupMember] = field(default_factory=list)
    # The network's L3 and security-group rows; None where the collector did not read them.
    subnet_ids: set[str] | None = None
    routers: list[Router] | None = None
    floating_ips: list[FloatingIp] | None = None
    security_groups: list[SecurityGroup] | None = None
    security_group_rules: list[SecurityGroupRule] | None = None


@dataclass(frozen=True)
class Violation:
    invariant: str
    resources: dict[str, str]
    evidence: str

    def as_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, **self.resources, "evidence": self.evidence}


class _Index:
    def __init__(self, snap: Snapshot) -> None:
        self.instances = {i.uuid: i for i in snap.instances}
        self.ports = {p.id: p for p in snap.ports}
        self.nodes = {n.uuid: n for n in snap.nodes}
        self.cache: dict[str, set[str]] = defaultdict(set)
        for entry in snap.vifs:
            self.cache[entry.instance_uuid].add(entry.port_id)

    def compute_involved(self, node: Node | None, port: Port) -> bool:
        """Whether compute manages this node or port; standalone ironic use is not ours to judge."""
        known = node is not None and node.instance_uuid in self.instances
        return known or port.device_owner.startswith(COMPUTE_OWNER_PREFIX) or port.created_by == CREATED_BY_COMPUTE

    def live(self, uuid: str | None) -> Instance | None:
        instance = self.instances.get(uuid or "")
        if instance is None or instance.deleted or instance.vm_state == vm.DELETED:
            return None
        return instance


def node_vifs(snap: Snapshot) -> list[tuple[str, str, str]]:
    """(node uuid, vif, "port"/"portgroup" uuid) for every VIF a node lists."""
    found = [(p.node_uuid, p.vif, p.uuid) for p in snap.node_ports if p.vif]
    found += [(g.node_uuid, g.vif, g.uuid) for g in snap.portgroups if g.vif]
    return found  # type: ignore[return-value]


def released_since(node: Node | None, port: Port, recorded_at: float) -> bool:
    """Whether the VIF's port was given back after the node recorded it, and the node kept it.

    A user's port that compute gives back is unbound and names no device, so it reads like a
    standalone ironic user's VIF on a free node; but such a user's VIF is bound when it is attached,
    or at least not changed after it. A port bound to nothing, changed after the NIC recorded it as
    its VIF, on a node nobody holds, was released without the VIF being detached (seeds 000 and
    001 together: the node is blocked for the next server).
    """
    free = node is not None and node.instance_uuid is None
    return free and not port.device_id and not port.is_bound and port.updated_at > recorded_at > 0


def stale_vif(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    recorded = {nic.uuid: nic.updated_at for nic in [*snap.node_ports, *snap.portgroups]}
    out = []
    for node_uuid, vif, holder in node_vifs(snap):
        node = index.nodes.get(node_uuid)
        port = index.ports.get(vif)
        owner = index.live(node.instance_uuid if node else None)
        if port is None:
            why = "its port no longer exists"
        elif not index.compute_involved(node, port):
            if not released_since(node, port, recorded.get(holder, 0.0)):
                continue  # a standalone ironic user's own VIF (no compute instance, no compute port)
            why = "its port was unbound after the node recorded it, and the node has no instance"
        elif owner is None:
            why = "the node has no live instance"
        elif port.device_id != owner.uuid:
            why = f"the port is bound to {port.device_id or 'nothing'}, not to instance {owner.uuid}"
        else:
            continue
        out.append(Violation("stale-vif", {"node": node_uuid, "vif": vif, "nic": holder},
                             f"node {node_uuid} lists VIF {vif} but {why}"))
    return out


def orphan_port(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    out = []
    for port in snap.ports:
        if port.created_by == CREATED_BY_ORCHESTRATION:
            if port.id not in snap.orchestration_ports:
                stack, _, resource = port.created_for.partition("/")
                named = {"stack": stack, "resource": resource} if stack else {}
                out.append(Violation("orphan-port", {"port": port.id, **named},
                                     f"port {port.id} was created by stack {stack or '(unknown)'} for resource "
                                     f"{resource or '(unknown)'} and no live stack lists it"))
            continue
        if not (port.device_owner.startswith(COMPUTE_OWNER_PREFIX) or port.created_by == CREATED_BY_COMPUTE):
            continue
        owner = index.live(port.device_id)
        if owner is None:
            out.append(Violation("orphan-port", {"port": port.id, "instance": port.device_id},
                                 f"port {port.id} is owned by compute but instance "
                                 f"{port.device_id or '(none)'} is gone"))
        elif port.id not in index.cache[owner.uuid]:
            out.append(Violation("orphan-port", {"port": port.id, "instance": owner.uuid},
                                 f"port {port.id} names instance {owner.uuid}, which does not list it"))
    return out


def mac_conflict(snap: Snapshot) -> list[Violation]:
    out = []
    by_network: dict[tuple[str, str], list[str]] = defaultdict(list)
    for port in snap.ports:
        by_network[(port.network_id, port.mac_address.lower())].append(port.id)
    for (network_id, mac), ids in sorted(by_network.items()):
        if len(ids) > 1:
            out.append(Violation("mac-conflict", {"network": network_id, "mac": mac, "ports": ",".join(sorted(ids))},
                                 f"ports {', '.join(sorted(ids))} share MAC {mac} on network {network_id}"))
    nic_of_mac = {nic.address.lower(): nic for nic in snap.node_ports}
    for port in snap.ports:
        nic = nic_of_mac.get(port.mac_address.lower())
        if nic is not None and nic.vif != port.id:
            out.append(Violation("mac-conflict", {"port": port.id, "mac": port.mac_address, "nic": nic.uuid},
                                 f"port {port.id} keeps MAC {port.mac_address} of NIC {nic.uuid} on node "
                                 f"{nic.node_uuid} though it is no VIF there"))
    return out


_NODE_GONE = (bms.AVAILABLE, bms.CLEANING, bms.CLEANWAIT, bms.DELETING, bms.MANAGEABLE, bms.ENROLL)


def stuck_transient(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    out = []
    for instance in snap.instances:
        if index.live(instance.uuid) is None:
            continue
        transient = instance.vm_state == vm.BUILDING or instance.task_state is not None
        if transient and instance.deadline is not None and snap.now > instance.deadline:
            out.append(Violation("stuck-transient", {"instance": instance.uuid},
                                 f"instance {instance.uuid} is {instance.status}/{instance.task_state} "
                                 f"past its deadline"))
        elif instance.vm_state == vm.BUILDING and instance.is_baremetal and instance.node:
            node = index.nodes.get(instance.node)
            if node is None or node.instance_uuid != instance.uuid or node.provision_state in _NODE_GONE:
                state = "gone" if node is None else node.provision_state
                out.append(Violation("stuck-transient", {"instance": instance.uuid, "node": instance.node},
                                     f"instance {instance.uuid} is BUILD but its node is {state}"))
    for node in snap.nodes:
        state = bms.PROVISION_STATES.states.get(node.provision_state)
        if state is None or state.stable or state.deadline is None:
            continue
        if snap.now > node.provision_updated_at + state.deadline:
            out.append(Violation("stuck-transient", {"node": node.uuid},
                                 f"node {node.uuid} is in {node.provision_state} past its deadline"))
    for stack in snap.stacks:
        if is_in_progress(stack.state) and stack.deadline is not None and snap.now > stack.deadline:
            out.append(Violation("stuck-transient", {"stack": stack.id},
                                 f"stack {stack.name} ({stack.id}) is {stack.state} past its deadline"))
    return out


def zombie_interface(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    out = []
    plugged: dict[str, set[str]] = defaultdict(set)
    for device in snap.guest_devices:
        plugged[device.instance_uuid].add(device.port_id)
        port = index.ports.get(device.port_id)
        owner = index.live(device.instance_uuid)
        if port is None:
            why = "its port no longer exists"
        elif owner is None:
            why = "its instance is gone"
        elif port.device_id != owner.uuid:
            why = f"its port is bound to {port.device_id or 'nothing'}"
        else:
            continue
        out.append(Violation("zombie-interface",
                             {"instance": device.instance_uuid, "device": device.device, "port": device.port_id},
                             f"guest interface {device.device} ({device.mac}) on {device.host} for "
                             f"{device.instance_uuid}: {why}"))
    node_plugged: dict[str, set[str]] = defaultdict(set)
    for node_uuid, vif, _ in node_vifs(snap):
        node_plugged[node_uuid].add(vif)
    for instance in snap.instances:
        if index.live(instance.uuid) is None or instance.vm_state != vm.ACTIVE or instance.task_state is not None:
            continue
        have = node_plugged[instance.node or ""] if instance.is_baremetal else plugged[instance.uuid]
        for port_id in sorted(index.cache[instance.uuid] - have):
            out.append(Violation("zombie-interface", {"instance": instance.uuid, "port": port_id},
                                 f"instance {instance.uuid} lists port {port_id}, which is not plugged"))
    return out


def association(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    out = []
    for node in snap.nodes:
        # An instance_uuid compute never issued belongs to a standalone ironic user.
        if node.instance_uuid is None or node.instance_uuid not in index.instances:
            continue
        owner = index.live(node.instance_uuid)
        if owner is None:
            out.append(Violation("association", {"node": node.uuid, "instance": node.instance_uuid},
                                 f"node {node.uuid} names instance {node.instance_uuid}, which is gone"))
        elif owner.node != node.uuid:
            out.append(Violation("association", {"node": node.uuid, "instance": owner.uuid},
                                 f"node {node.uuid} names instance {owner.uuid}, which names node {owner.node}"))
    for instance in snap.instances:
        if index.live(instance.uuid) is None or not instance.is_baremetal or not instance.node:
            continue
        node = index.nodes.get(instance.node)
        if node is None or node.instance_uuid != instance.uuid:
            out.append(Violation("association", {"instance": instance.uuid, "node": instance.node},
                                 f"instance {instance.uuid} names node {instance.node}, which does not name it"))
    return out


def ip_allocation(snap: Snapshot) -> list[Violation]:
    index = _Index(snap)
    out = []
    for allocation in snap.ip_allocations:
        port = index.ports.get(allocation.port_id)
        if port is None or port.network_id != allocation.network_id:
            out.append(Violation("ip-allocation", {"ip": allocation.ip_address, "port": allocation.port_id},
                                 f"{allocation.ip_address} is allocated to port {allocation.port_id}, "
                                 "which does not exist on that network"))
    return out


def user_resources_kept(snap: Snapshot) -> list[Violation]:
    """Nothing a user created is deleted but at a user's request; a port a user brought to a server
    comes back unbound once the server is gone, ready to be used again (rule 2, seed 001)."""
    index = _Index(snap)
    present = {"port": set(index.ports), "network": snap.network_ids, "image": snap.image_ids,
               "keypair": snap.keypair_ids}
    out = []
    for ident, kind in sorted(snap.user_made.items()):
        if kind in present and ident not in present[kind] and ident not in snap.deleted_on_request:
            out.append(Violation("user-resources-kept", {kind: ident},
                                 f"{kind} {ident} was created by a user and is gone, though no user asked "
                                 "to delete it"))
    for port in snap.ports:
        if port.created_by != CREATED_BY_USER or not port.device_owner.startswith(COMPUTE_OWNER_PREFIX):
            continue
        if index.live(port.device_id) is None:
            out.append(Violation("user-resources-kept", {"port": port.id, "instance": port.device_id},
                                 f"port {port.id}, which a user brought, is still bound to instance "
                                 f"{port.device_id or '(none)'}, which is gone: it cannot be used again"))
    return out


def server_group_policy(snap: Snapshot) -> list[Violation]:
    """The live members of a hard (anti-)affinity group are placed as its policy says: apart, at most
    ``max_server_per_host`` to a host, or together on one host (a node counts as a host of its own)."""
    index = _Index(snap)
    placed: dict[str, list[Instance]] = defaultdict(list)
    for member in snap.group_members:
        instance = index.live(member.instance_uuid)
        if instance is not None and instance.host:
            placed[member.group_id].append(instance)
    out = []
    for group in snap.server_groups:
        members = placed.get(group.id, [])
        where = [member.node if member.is_baremetal else member.host for member in members]
        crowded = []
        if group.policy == ANTI_AFFINITY:
            limit = int(group.rules.get("max_server_per_host", 1))
            crowded = sorted({host for host in where if where.count(host) > limit})  # type: ignore[misc]
        elif group.policy == AFFINITY and len(set(where)) > 1:
            crowded = sorted(set(where))  # type: ignore[arg-type]
        if crowded:
            out.append(Violation("server-group-policy", {"server_group": group.id},
                                 f"{group.policy} group {group.id} has members {sorted(m.uuid for m in members)} "
                                 f"placed on {where}"))
    return out


def floating_ip_port(snap: Snapshot) -> list[Violation]:
    """Every floating IP holds its address through an existing port, and an associated one names an existing
    port that has the fixed IP it is mapped to (rule 2: a port's delete lets its floating IPs go)."""
    if snap.floating_ips is None:
        return []
    index = _Index(snap)
    out = []
    for fip in snap.floating_ips:
        if fip.floating_port_id not in index.ports:
            out.append(Violation("floating-ip-port", {"floatingip": fip.id, "port": fip.floating_port_id},
                                 f"floating IP {fip.id} ({fip.floating_ip_address}) is held by port "
                                 f"{fip.floating_port_id}, which does not exist"))
        if fip.port_id is None:
            continue
        port = index.ports.get(fip.port_id)
        if port is None or fip.fixed_ip_address not in {ip["ip_address"] for ip in port.fixed_ips}:
            out.append(Violation("floating-ip-port", {"floatingip": fip.id, "port": fip.port_id},
                                 f"floating IP {fip.id} ({fip.floating_ip_address}) is associated with "
                                 f"{fip.fixed_ip_address} on port {fip.port_id}, which "
                                 f"{'does not exist' if port is None else 'does not have that address'}"))
    return out


def router_interface(snap: Snapshot) -> list[Violation]:
    """Every router port (interface, gateway) belongs to an existing router, and every interface is on a
    subnet that exists; a floating IP's port belongs to an existing floating IP."""
    if snap.routers is None or snap.subnet_ids is None:
        return []
    routers = {router.id for router in snap.routers}
    fips = {fip.id for fip in snap.floating_ips or []}
    out = []
    for port in snap.ports:
        if port.device_owner in (ROUTER_INTERFACE_OWNER, ROUTER_GATEWAY_OWNER) and port.device_id not in routers:
            out.append(Violation("router-interface", {"port": port.id, "router": port.device_id},
                                 f"port {port.id} ({port.device_owner}) belongs to router {port.device_id}, "
                                 "which does not exist"))
        if port.device_owner == FLOATINGIP_OWNER and snap.floating_ips is not None and port.device_id not in fips:
            out.append(Violation("router-interface", {"port": port.id, "floatingip": port.device_id},
                                 f"port {port.id} holds the address of floating IP {port.device_id}, "
                                 "which does not exist"))
        if port.device_owner == ROUTER_INTERFACE_OWNER:
            gone = [ip["subnet_id"] for ip in port.fixed_ips if ip["subnet_id"] not in snap.subnet_ids]
            if gone or not port.fixed_ips:
                out.append(Violation("router-interface", {"port": port.id, "router": port.device_id},
                                     f"router {port.device_id} has interface {port.id} on subnet "
                                     f"{', '.join(gone) or '(none)'}, which does not exist"))
    return out


def security_group_reference(snap: Snapshot) -> list[Violation]:
    """Every rule's group and remote group exist, and every group a port names exists."""
    if snap.security_groups is None or snap.security_group_rules is None:
        return []
    groups = {group.id for group in snap.security_groups}
    out = []
    for rule in snap.security_group_rules:
        for kind, group_id in (("group", rule.security_group_id), ("remote group", rule.remote_group_id)):
            if group_id is not None and group_id not in groups:
                out.append(Violation("security-group-reference", {"security_group_rule": rule.id,
                                                                  "security_group": group_id},
                                     f"security group rule {rule.id} refers to {kind} {group_id}, "
                                     "which does not exist"))
    for port in snap.ports:
        for group_id in port.security_group_ids or []:
            if group_id not in groups:
                out.append(Violation("security-group-reference", {"port": port.id, "security_group": group_id},
                                     f"port {port.id} names security group {group_id}, which does not exist"))
    return out


INVARIANTS: dict[str, Callable[[Snapshot], list[Violation]]] = {
    "stale-vif": stale_vif,
    "orphan-port": orphan_port,
    "mac-conflict": mac_conflict,
    "stuck-transient": stuck_transient,
    "zombie-interface": zombie_interface,
    "association": association,
    "ip-allocation": ip_allocation,
    "user-resources-kept": user_resources_kept,
    "server-group-policy": server_group_policy,
    "floating-ip-port": floating_ip_port,
    "router-interface": router_interface,
    "security-group-reference": security_group_reference,
}


def check_all(snap: Snapshot) -> list[Violation]:
    return [violation for check in INVARIANTS.values() for violation in check(snap)]


def transient_leftovers(snap: Snapshot) -> list[str]:
    """Anything still in a transient state, deadline or not (for 'nothing left in flight')."""
    index = _Index(snap)
    left = [f"instance {i.uuid} {i.status}/{i.task_state}" for i in snap.instances
            if index.live(i.uuid) and (i.vm_state == vm.BUILDING or i.task_state is not None)]
    # A node in maintenance is held by its operator, not left in flight: leaving maintenance
    # resumes it (``resume_conductor_jobs``), as in Ironic.
    left += [f"node {n.uuid} {n.provision_state}" for n in snap.nodes
             if n.provision_state in bms.PROVISION_STATES.states and not n.maintenance
             and bms.PROVISION_STATES.is_transient(n.provision_state)]
    left += [f"stack {stack.id} {stack.state}" for stack in snap.stacks if is_in_progress(stack.state)]
    return left
