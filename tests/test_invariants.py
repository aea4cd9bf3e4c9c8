"""Each invariant of ``domain.invariants`` on small snapshots: what it must name, and what it must let be.

The scenarios, the explorer and ``tether check`` reach these functions only
through whole runs; here each one meets the edge cases a mistake in it would
get wrong (the side of a deadline, a standalone ironic user's VIF, a MAC in
another case, a group's ``max_server_per_host``), so that a changed condition
or a dropped branch fails a test of its own (the oracle of ``bench/mutations.py``).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from typing import Any

import pytest

from tests.equal_copies import fresh
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain import invariants as inv
from tether.domain.baremetal import TENANT_VIF_KEY, Node, NodePort, Portgroup
from tether.domain.compute import GuestInterface, Instance, VifEntry
from tether.domain.invariants import Snapshot, Violation
from tether.domain.network import (
    CREATED_BY_COMPUTE,
    CREATED_BY_ORCHESTRATION,
    CREATED_BY_USER,
    FLOATINGIP_OWNER,
    ROUTER_GATEWAY_OWNER,
    ROUTER_INTERFACE_OWNER,
    IpAllocation,
    Port,
)
from tether.domain.orchestration.stacks import Stack
from tether.domain.routers import FloatingIp, Router
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule
from tether.domain.server_groups import AFFINITY, ANTI_AFFINITY, ServerGroup, ServerGroupMember

MAC = "fa:16:3e:00:00:01"


def server(uuid: str = "vm-1", **fields: Any) -> Instance:
    values: dict[str, Any] = {"name": uuid, "project_id": "p", "user_id": "u", "flavor_id": "f", "image_id": "i",
                              "vm_state": vm.ACTIVE, "host": "hv-1"}
    values.update(fields)
    return Instance(uuid=uuid, **values)


def bare_metal(uuid: str = "bm-1", node: str = "node-1", **fields: Any) -> Instance:
    return server(uuid, is_baremetal=True, node=node, host="conductor", **fields)


def port(ident: str = "port-1", device_id: str = "", mac: str = MAC, **fields: Any) -> Port:
    values: dict[str, Any] = {"device_owner": "compute:nova" if device_id else ""}
    values.update(fields)
    return Port(id=ident, name=ident, network_id=values.pop("network_id", "net"), project_id="p", mac_address=mac,
                device_id=device_id, **values)


def node(uuid: str = "node-1", instance: str | None = None, **fields: Any) -> Node:
    state = bms.ACTIVE if instance else bms.AVAILABLE
    return Node(uuid=uuid, name=uuid, instance_uuid=instance, **{"provision_state": state, **fields})


def nic(vif: str | None = None, node_uuid: str = "node-1", address: str = "52:54:00:00:00:01",
        uuid: str = "nic-1") -> NodePort:
    return NodePort(uuid=uuid, address=address, node_uuid=node_uuid,
                    internal_info={TENANT_VIF_KEY: vif} if vif else {})


def cached(instance: str, port_id: str) -> VifEntry:
    return VifEntry(instance, port_id, "net", MAC)


def device(instance: str, port_id: str) -> GuestInterface:
    return GuestInterface("hv-1", instance, "tap" + port_id[:11], MAC, port_id)



def found(violations: list[Violation]) -> list[tuple[str, dict[str, str]]]:
    return [(v.invariant, v.resources) for v in violations]


# -- stale-vif -----------------------------------------------------------------------------------


def deployed(**changes: Any) -> dict[str, Any]:
    """A bare-metal server on node-1 with its port as the NIC's VIF: nothing to say."""
    parts: dict[str, Any] = {"instances": [bare_metal()], "nodes": [node(instance="bm-1")],
                             "ports": [port(device_id="bm-1")], "node_ports": [nic("port-1")],
                             "vifs": [cached("bm-1", "port-1")]}
    parts.update(changes)
    return parts


def test_a_deployed_bare_metal_server_is_clean_under_every_invariant() -> None:
    assert inv.check_all(Snapshot(now=0.0, **deployed())) == []


def test_stale_vif_names_a_vif_whose_port_is_gone_on_a_nic_or_a_portgroup() -> None:
    group = Portgroup(uuid="pg-1", node_uuid="node-1", internal_info={TENANT_VIF_KEY: "port-2"})
    snap = Snapshot(now=0.0, **deployed(portgroups=[group], node_ports=[nic("port-1"), nic("port-9", uuid="nic-2")]))
    violations = inv.stale_vif(snap)
    assert found(violations) == [("stale-vif", {"node": "node-1", "vif": "port-9", "nic": "nic-2"}),
                                 ("stale-vif", {"node": "node-1", "vif": "port-2", "nic": "pg-1"})]
    assert violations[0].evidence == "node node-1 lists VIF port-9 but its port no longer exists"


def test_stale_vif_names_a_vif_of_a_node_without_a_live_instance() -> None:
    for gone in (server("bm-1", is_baremetal=True, node="node-1", deleted=True),
                 bare_metal(vm_state=vm.DELETED)):
        violations = inv.stale_vif(Snapshot(now=0.0, **deployed(instances=[gone])))
        assert [v.evidence for v in violations] == ["node node-1 lists VIF port-1 but the node has no live instance"]


def test_stale_vif_names_a_vif_whose_port_is_bound_elsewhere() -> None:
    violations = inv.stale_vif(Snapshot(now=0.0, **deployed(ports=[port(device_id="vm-9")])))
    assert [v.evidence for v in violations] == [
        "node node-1 lists VIF port-1 but the port is bound to vm-9, not to instance bm-1"]
    unbound = inv.stale_vif(Snapshot(now=0.0, **deployed(ports=[port(device_owner="", created_by=CREATED_BY_COMPUTE)])))
    assert "bound to nothing" in unbound[0].evidence


def test_stale_vif_leaves_a_standalone_ironic_users_vif_alone() -> None:
    # no compute instance on the node, and a port compute neither owns nor made
    snap = Snapshot(now=0.0, nodes=[node(instance="someone-elses")], ports=[port()], node_ports=[nic("port-1")])
    assert inv.stale_vif(snap) == []
    # the same VIF on a port compute made is compute's, and the node has no live instance of it
    made = replace(snap, ports=[port(created_by=CREATED_BY_COMPUTE)])
    assert len(inv.stale_vif(made)) == 1
    owned = replace(snap, ports=[port(device_owner="compute:az-1")])
    assert len(inv.stale_vif(owned)) == 1



def test_stale_vif_names_a_users_port_released_after_the_node_recorded_it() -> None:
    # Seeds 000 and 001 together: compute gave the user's port back (unbound, no device) but the node,
    # free now, kept it as its VIF, so the next server finds no free NIC. Nothing names compute any more.
    recorded = NodePort(uuid="nic-1", address="52:54:00:00:00:01", node_uuid="node-1",
                        internal_info={TENANT_VIF_KEY: "port-1"}, updated_at=100.0)
    released = port(updated_at=160.0)
    snap = Snapshot(now=200.0, nodes=[node()], ports=[released], node_ports=[recorded])
    violations = inv.stale_vif(snap)
    assert found(violations) == [("stale-vif", {"node": "node-1", "vif": "port-1", "nic": "nic-1"})]
    assert violations[0].evidence == ("node node-1 lists VIF port-1 but its port was unbound after the node "
                                      "recorded it, and the node has no instance")
    # a standalone user's VIF: attached after its port last changed, or bound, or on a node they hold
    assert inv.stale_vif(replace(snap, ports=[port(updated_at=100.0)])) == []
    assert inv.stale_vif(replace(snap, ports=[replace(released, device_id="node-1")])) == []
    assert inv.stale_vif(replace(snap, ports=[replace(released, binding_host_id="node-1")])) == []
    assert inv.stale_vif(replace(snap, nodes=[node(instance="someone-elses")])) == []
    assert inv.stale_vif(replace(snap, node_ports=[replace(recorded, updated_at=0.0)])) == []

# -- orphan-port ---------------------------------------------------------------------------------


def test_orphan_port_names_a_compute_port_whose_instance_is_gone_or_does_not_list_it() -> None:
    gone = inv.orphan_port(Snapshot(now=0.0, ports=[port(device_id="vm-1")]))
    assert found(gone) == [("orphan-port", {"port": "port-1", "instance": "vm-1"})]
    assert gone[0].evidence == "port port-1 is owned by compute but instance vm-1 is gone"
    made = inv.orphan_port(Snapshot(now=0.0, ports=[port(created_by=CREATED_BY_COMPUTE)]))
    assert made[0].evidence == "port port-1 is owned by compute but instance (none) is gone"
    deleted = inv.orphan_port(Snapshot(now=0.0, instances=[server(deleted=True)], ports=[port(device_id="vm-1")]))
    assert len(deleted) == 1
    unlisted = inv.orphan_port(Snapshot(now=0.0, instances=[server()], ports=[port(device_id="vm-1")]))
    assert [v.evidence for v in unlisted] == ["port port-1 names instance vm-1, which does not list it"]
    listed = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="vm-1")], vifs=[cached("vm-1", "port-1")])
    assert inv.orphan_port(listed) == []


def test_orphan_port_leaves_a_users_unbound_port_and_a_routers_port_alone() -> None:
    assert inv.orphan_port(Snapshot(now=0.0, ports=[port(), port("port-2", device_id="r-1",
                                                                 device_owner=ROUTER_INTERFACE_OWNER)])) == []


def test_orphan_port_names_a_stacks_port_no_live_stack_lists() -> None:
    made = port(created_by=CREATED_BY_ORCHESTRATION, created_for="stack-1/the_port")
    violations = inv.orphan_port(Snapshot(now=0.0, ports=[made]))
    assert found(violations) == [("orphan-port", {"port": "port-1", "stack": "stack-1", "resource": "the_port"})]
    assert violations[0].evidence == ("port port-1 was created by stack stack-1 for resource the_port and no live "
                                      "stack lists it")
    unknown = inv.orphan_port(Snapshot(now=0.0, ports=[replace(made, created_for="")]))
    assert found(unknown) == [("orphan-port", {"port": "port-1"})]
    assert "stack (unknown) for resource (unknown)" in unknown[0].evidence
    # listed by a live stack: fine, even though it is bound to a server compute does not list it in
    kept = Snapshot(now=0.0, ports=[replace(made, device_id="vm-1", device_owner="compute:nova")],
                    orchestration_ports={"port-1": "stack-1"})
    assert inv.orphan_port(kept) == []


# -- mac-conflict --------------------------------------------------------------------------------


def test_mac_conflict_names_ports_sharing_a_mac_on_one_network_whatever_its_case() -> None:
    snap = Snapshot(now=0.0, ports=[port("b"), port("a", mac=MAC.upper()), port("c", network_id="other")])
    violations = inv.mac_conflict(snap)
    assert found(violations) == [("mac-conflict", {"network": "net", "mac": MAC, "ports": "a,b"})]
    assert violations[0].evidence == f"ports a, b share MAC {MAC} on network net"
    assert inv.mac_conflict(Snapshot(now=0.0, ports=[port("a"), port("b", mac="fa:16:3e:00:00:02")])) == []


def test_mac_conflict_names_a_port_that_keeps_a_nics_mac_without_being_its_vif() -> None:
    kept = port(mac="52:54:00:00:00:01")
    violations = inv.mac_conflict(Snapshot(now=0.0, ports=[kept], node_ports=[nic()]))
    assert found(violations) == [("mac-conflict", {"port": "port-1", "mac": "52:54:00:00:00:01", "nic": "nic-1"})]
    assert violations[0].evidence == ("port port-1 keeps MAC 52:54:00:00:00:01 of NIC nic-1 on node node-1 though "
                                      "it is no VIF there")
    upper = inv.mac_conflict(Snapshot(now=0.0, ports=[port(mac="52:54:00:00:00:01")],
                                      node_ports=[nic(address="52:54:00:00:00:01".upper())]))
    assert len(upper) == 1
    assert inv.mac_conflict(Snapshot(now=0.0, ports=[kept], node_ports=[nic("port-1")])) == []


# -- stuck-transient -----------------------------------------------------------------------------


def test_stuck_transient_names_an_instance_past_its_deadline_and_not_at_it() -> None:
    building = server(vm_state=vm.BUILDING, deadline=10.0)
    assert inv.stuck_transient(Snapshot(now=10.0, instances=[building])) == []
    late = inv.stuck_transient(Snapshot(now=10.5, instances=[building]))
    assert found(late) == [("stuck-transient", {"instance": "vm-1"})]
    assert late[0].evidence == "instance vm-1 is BUILD/None past its deadline"
    acting = server(task_state=vm.REBOOTING, deadline=10.0)
    assert len(inv.stuck_transient(Snapshot(now=11.0, instances=[acting]))) == 1
    settled = server(deadline=10.0)
    assert inv.stuck_transient(Snapshot(now=11.0, instances=[settled])) == []
    no_deadline = server(vm_state=vm.BUILDING)
    assert inv.stuck_transient(Snapshot(now=1e9, instances=[no_deadline])) == []
    gone = server(vm_state=vm.BUILDING, deadline=10.0, deleted=True)
    assert inv.stuck_transient(Snapshot(now=11.0, instances=[gone])) == []


def test_stuck_transient_names_a_bare_metal_build_whose_node_left_it() -> None:
    building = bare_metal(vm_state=vm.BUILDING)
    for nodes, state in (([], "gone"), ([node(instance="other")], bms.ACTIVE),
                         ([node(instance="bm-1", provision_state=bms.CLEANING)], bms.CLEANING),
                         ([node(instance="bm-1", provision_state=bms.AVAILABLE)], bms.AVAILABLE)):
        violations = inv.stuck_transient(Snapshot(now=0.0, instances=[building], nodes=nodes))
        assert found(violations) == [("stuck-transient", {"instance": "bm-1", "node": "node-1"})], nodes
        assert violations[0].evidence == f"instance bm-1 is BUILD but its node is {state}"
    deploying = [node(instance="bm-1", provision_state=bms.DEPLOYING, provision_updated_at=0.0)]
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[building], nodes=deploying)) == []
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[replace(building, node=None)])) == []
    vm_build = server(vm_state=vm.BUILDING, node="node-1")
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[vm_build])) == []


def test_stuck_transient_names_a_node_past_its_states_deadline() -> None:
    deadline = bms.PROVISION_STATES.states[bms.DEPLOYWAIT].deadline
    assert deadline is not None
    waiting = node(instance=None, provision_state=bms.DEPLOYWAIT, provision_updated_at=100.0)
    assert inv.stuck_transient(Snapshot(now=100.0 + deadline, nodes=[waiting])) == []
    late = inv.stuck_transient(Snapshot(now=100.5 + deadline, nodes=[waiting]))
    assert found(late) == [("stuck-transient", {"node": "node-1"})]
    assert late[0].evidence == f"node node-1 is in {bms.DEPLOYWAIT} past its deadline"
    for stable in (bms.ACTIVE, bms.AVAILABLE, "no such state"):
        assert inv.stuck_transient(Snapshot(now=1e9, nodes=[replace(waiting, provision_state=stable)])) == []


def test_stuck_transient_names_a_stack_in_progress_past_its_deadline() -> None:
    stack = Stack(id="s-1", name="web", project_id="p", user_id="u", state="CREATE_IN_PROGRESS", deadline=10.0)
    assert inv.stuck_transient(Snapshot(now=10.0, stacks=[stack])) == []
    late = inv.stuck_transient(Snapshot(now=11.0, stacks=[stack]))
    assert found(late) == [("stuck-transient", {"stack": "s-1"})]
    assert late[0].evidence == "stack web (s-1) is CREATE_IN_PROGRESS past its deadline"
    assert inv.stuck_transient(Snapshot(now=11.0, stacks=[replace(stack, state="CREATE_COMPLETE")])) == []
    assert inv.stuck_transient(Snapshot(now=11.0, stacks=[replace(stack, deadline=None)])) == []


# -- zombie-interface ----------------------------------------------------------------------------


def plugged_vm(**changes: Any) -> dict[str, Any]:
    parts: dict[str, Any] = {"instances": [server()], "ports": [port(device_id="vm-1")],
                             "vifs": [cached("vm-1", "port-1")], "guest_devices": [device("vm-1", "port-1")]}
    parts.update(changes)
    return parts


def test_zombie_interface_names_a_guest_device_without_its_port_or_instance_or_binding() -> None:
    assert inv.zombie_interface(Snapshot(now=0.0, **plugged_vm())) == []
    no_port = inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(ports=[], vifs=[])))
    assert found(no_port) == [("zombie-interface", {"instance": "vm-1", "device": "tapport-1", "port": "port-1"})]
    assert no_port[0].evidence == f"guest interface tapport-1 ({MAC}) on hv-1 for vm-1: its port no longer exists"
    gone = inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(instances=[server(deleted=True)])))
    assert gone[0].evidence.endswith(": its instance is gone")
    elsewhere = inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(ports=[port(device_id="vm-2")])))
    assert elsewhere[0].evidence.endswith(": its port is bound to vm-2")
    unbound = inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(ports=[port()])))
    assert unbound[0].evidence.endswith(": its port is bound to nothing")


def test_zombie_interface_names_a_listed_port_an_active_server_has_not_plugged() -> None:
    unplugged = inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(guest_devices=[])))
    assert found(unplugged) == [("zombie-interface", {"instance": "vm-1", "port": "port-1"})]
    assert unplugged[0].evidence == "instance vm-1 lists port port-1, which is not plugged"
    # only a server at rest must have plugged what it lists
    for busy in (server(task_state=vm.REBOOTING), server(vm_state=vm.STOPPED), server(deleted=True)):
        assert inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(instances=[busy], guest_devices=[]))) == []
    # bare metal: plugged means a VIF on its node
    assert inv.zombie_interface(Snapshot(now=0.0, **deployed())) == []
    lost = inv.zombie_interface(Snapshot(now=0.0, **deployed(node_ports=[nic()])))
    assert found(lost) == [("zombie-interface", {"instance": "bm-1", "port": "port-1"})]
    on_another = inv.zombie_interface(Snapshot(now=0.0, **deployed(node_ports=[nic("port-1", node_uuid="node-2")])))
    assert len(on_another) == 1


# -- association ---------------------------------------------------------------------------------


def test_association_names_a_node_and_an_instance_that_do_not_name_each_other() -> None:
    gone = inv.association(Snapshot(now=0.0, **deployed(instances=[bare_metal(deleted=True)])))
    assert found(gone) == [("association", {"node": "node-1", "instance": "bm-1"})]
    assert gone[0].evidence == "node node-1 names instance bm-1, which is gone"
    moved = inv.association(Snapshot(now=0.0, **deployed(instances=[bare_metal(node="node-2")],
                                                          nodes=[node(instance="bm-1"), node("node-2")])))
    assert [v.evidence for v in moved] == ["node node-1 names instance bm-1, which names node node-2",
                                           "instance bm-1 names node node-2, which does not name it"]
    lost = inv.association(Snapshot(now=0.0, **deployed(nodes=[])))
    assert found(lost) == [("association", {"instance": "bm-1", "node": "node-1"})]
    # a standalone ironic user's instance_uuid, an instance without a node, a VM: none is compute's to judge
    assert inv.association(Snapshot(now=0.0, nodes=[node(instance="not-ours")])) == []
    assert inv.association(Snapshot(now=0.0, instances=[bare_metal(node=None), server(node="node-1")])) == []
    assert inv.association(Snapshot(now=0.0, **deployed(instances=[bare_metal(deleted=True, node="node-1")],
                                                          nodes=[node()]))) == []


# -- ip-allocation -------------------------------------------------------------------------------


def test_ip_allocation_names_an_address_held_for_a_missing_port_or_one_on_another_network() -> None:
    held = IpAllocation("sub", "10.0.0.5", "net", "port-1")
    assert inv.ip_allocation(Snapshot(now=0.0, ports=[port()], ip_allocations=[held])) == []
    missing = inv.ip_allocation(Snapshot(now=0.0, ip_allocations=[held]))
    assert found(missing) == [("ip-allocation", {"ip": "10.0.0.5", "port": "port-1"})]
    assert missing[0].evidence == "10.0.0.5 is allocated to port port-1, which does not exist on that network"
    moved = inv.ip_allocation(Snapshot(now=0.0, ports=[port(network_id="other")], ip_allocations=[held]))
    assert len(moved) == 1


# -- user-resources-kept -------------------------------------------------------------------------


def test_user_resources_kept_names_what_a_user_made_that_went_without_a_request() -> None:
    made = {"port-1": "port", "net-1": "network", "img-1": "image", "7": "keypair", "x": "volume"}
    none_left = inv.user_resources_kept(Snapshot(now=0.0, user_made=made))
    assert found(none_left) == [("user-resources-kept", {"keypair": "7"}),
                                ("user-resources-kept", {"image": "img-1"}),
                                ("user-resources-kept", {"network": "net-1"}),
                                ("user-resources-kept", {"port": "port-1"})]
    assert none_left[0].evidence == "keypair 7 was created by a user and is gone, though no user asked to delete it"
    all_there = Snapshot(now=0.0, user_made=made, ports=[port()], network_ids={"net-1"}, image_ids={"img-1"},
                         keypair_ids={"7"})
    assert inv.user_resources_kept(all_there) == []
    asked = Snapshot(now=0.0, user_made=made, deleted_on_request={"port-1", "net-1", "img-1", "7"})
    assert inv.user_resources_kept(asked) == []


def test_user_resources_kept_names_a_users_port_still_bound_to_a_gone_server() -> None:
    violations = inv.user_resources_kept(Snapshot(now=0.0, ports=[port(device_id="vm-1")]))
    assert found(violations) == [("user-resources-kept", {"port": "port-1", "instance": "vm-1"})]
    assert violations[0].evidence == ("port port-1, which a user brought, is still bound to instance vm-1, which is "
                                      "gone: it cannot be used again")
    assert inv.user_resources_kept(Snapshot(now=0.0, instances=[server()], ports=[port(device_id="vm-1")])) == []
    # compute's own port is the orphan check's; a router's port is no server's
    others = [port(device_id="vm-1", created_by=CREATED_BY_COMPUTE),
              port("p2", device_id="r", device_owner=ROUTER_GATEWAY_OWNER)]
    assert inv.user_resources_kept(Snapshot(now=0.0, ports=others)) == []


# -- server-group-policy -------------------------------------------------------------------------


def grouped(policy: str, hosts: list[str], rules: dict[str, Any] | None = None, **fields: Any) -> Snapshot:
    members = [server(f"vm-{n}", host=host, **fields) for n, host in enumerate(hosts)]
    group = ServerGroup(id="g", name="g", project_id="p", user_id="u", policy=policy, rules=rules or {})
    return Snapshot(now=0.0, instances=members, server_groups=[group],
                    group_members=[ServerGroupMember("g", member.uuid) for member in members])


def test_anti_affinity_names_a_host_with_more_members_than_allowed() -> None:
    assert inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "b"])) == []
    crowded = inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "a", "b"]))
    assert found(crowded) == [("server-group-policy", {"server_group": "g"})]
    assert crowded[0].evidence == "anti-affinity group g has members ['vm-0', 'vm-1', 'vm-2'] placed on ['a', 'a', 'b']"
    assert inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "a"], {"max_server_per_host": 2})) == []
    assert len(inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "a", "a"], {"max_server_per_host": "2"}))) == 1
    # members that are gone, or not placed yet, take no room
    assert inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "a"], deleted=True)) == []
    assert inv.server_group_policy(grouped(ANTI_AFFINITY, ["", ""])) == []


def test_affinity_names_members_on_more_than_one_host_and_nodes_count_as_hosts() -> None:
    assert inv.server_group_policy(grouped(AFFINITY, ["a", "a"])) == []
    assert len(inv.server_group_policy(grouped(AFFINITY, ["a", "b"]))) == 1
    # two bare-metal members behind one conductor are on two nodes
    apart = grouped(AFFINITY, ["conductor", "conductor"])
    apart.instances = [replace(member, is_baremetal=True, node=f"node-{n}") for n, member in enumerate(apart.instances)]
    assert len(inv.server_group_policy(apart)) == 1
    together = grouped(ANTI_AFFINITY, ["conductor", "conductor"])
    together.instances = [replace(member, is_baremetal=True, node=f"node-{n}")
                          for n, member in enumerate(together.instances)]
    assert inv.server_group_policy(together) == []
    assert inv.server_group_policy(grouped("soft-affinity", ["a", "b"])) == []


# -- floating-ip-port, router-interface, security-group-reference --------------------------------


def fip(**fields: Any) -> FloatingIp:
    values: dict[str, Any] = {"id": "fip-1", "project_id": "p", "floating_network_id": "public",
                              "floating_ip_address": "172.24.4.10", "floating_port_id": "fport"}
    values.update(fields)
    return FloatingIp(**values)


def test_floating_ip_port_names_a_missing_holder_and_a_mapping_to_a_missing_address() -> None:
    holder = port("fport", device_id="fip-1", device_owner=FLOATINGIP_OWNER, mac="fa:16:3e:00:00:09")
    target = port(fixed_ips=[{"subnet_id": "sub", "ip_address": "10.0.0.5"}])
    assert inv.floating_ip_port(Snapshot(now=0.0, ports=[holder])) == []  # not collected: not judged
    assert inv.floating_ip_port(Snapshot(now=0.0, ports=[holder, target], floating_ips=[
        fip(), fip(id="fip-2", floating_port_id="fport", port_id="port-1", fixed_ip_address="10.0.0.5")])) == []
    no_holder = inv.floating_ip_port(Snapshot(now=0.0, floating_ips=[fip()]))
    assert found(no_holder) == [("floating-ip-port", {"floatingip": "fip-1", "port": "fport"})]
    assert no_holder[0].evidence == "floating IP fip-1 (172.24.4.10) is held by port fport, which does not exist"
    no_port = inv.floating_ip_port(Snapshot(now=0.0, ports=[holder], floating_ips=[
        fip(port_id="port-1", fixed_ip_address="10.0.0.5")]))
    assert [v.evidence for v in no_port] == [
        "floating IP fip-1 (172.24.4.10) is associated with 10.0.0.5 on port port-1, which does not exist"]
    other_address = inv.floating_ip_port(Snapshot(now=0.0, ports=[holder, target], floating_ips=[
        fip(port_id="port-1", fixed_ip_address="10.0.0.6")]))
    assert other_address[0].evidence.endswith("which does not have that address")


def test_router_interface_names_ports_of_missing_routers_fips_and_subnets() -> None:
    interface = port("if", device_id="r-1", device_owner=ROUTER_INTERFACE_OWNER,
                     fixed_ips=[{"subnet_id": "sub", "ip_address": "10.0.0.1"}])
    gateway = port("gw", device_id="r-1", device_owner=ROUTER_GATEWAY_OWNER, mac="fa:16:3e:00:00:02")
    holder = port("fport", device_id="fip-1", device_owner=FLOATINGIP_OWNER, mac="fa:16:3e:00:00:03")
    router = Router(id="r-1", name="r", project_id="p")
    whole = Snapshot(now=0.0, ports=[interface, gateway, holder], routers=[router], subnet_ids={"sub"},
                     floating_ips=[fip()])
    assert inv.router_interface(whole) == []
    assert inv.router_interface(replace(whole, routers=None)) == []
    assert inv.router_interface(replace(whole, subnet_ids=None)) == []
    no_router = inv.router_interface(replace(whole, routers=[]))
    assert found(no_router) == [("router-interface", {"port": "if", "router": "r-1"}),
                                ("router-interface", {"port": "gw", "router": "r-1"})]
    assert no_router[1].evidence == "port gw (network:router_gateway) belongs to router r-1, which does not exist"
    no_fip = inv.router_interface(replace(whole, floating_ips=[]))
    assert found(no_fip) == [("router-interface", {"port": "fport", "floatingip": "fip-1"})]
    assert no_fip[0].evidence == "port fport holds the address of floating IP fip-1, which does not exist"
    assert inv.router_interface(replace(whole, floating_ips=None)) == []
    no_subnet = inv.router_interface(replace(whole, subnet_ids=set()))
    assert [v.evidence for v in no_subnet] == ["router r-1 has interface if on subnet sub, which does not exist"]
    no_address = inv.router_interface(replace(whole, ports=[replace(interface, fixed_ips=[]), gateway, holder]))
    assert [v.evidence for v in no_address] == ["router r-1 has interface if on subnet (none), which does not exist"]


def test_security_group_reference_names_rules_and_ports_naming_a_missing_group() -> None:
    group = SecurityGroup(id="sg", name="default", project_id="p")
    rule = SecurityGroupRule(id="rule", security_group_id="sg", project_id="p", direction="ingress",
                             remote_group_id="sg")
    whole = Snapshot(now=0.0, ports=[port(security_group_ids=["sg"])], security_groups=[group],
                     security_group_rules=[rule])
    assert inv.security_group_reference(whole) == []
    assert inv.security_group_reference(replace(whole, security_groups=None)) == []
    assert inv.security_group_reference(replace(whole, security_group_rules=None)) == []
    gone = inv.security_group_reference(replace(whole, security_groups=[]))
    assert found(gone) == [("security-group-reference", {"security_group_rule": "rule", "security_group": "sg"}),
                           ("security-group-reference", {"security_group_rule": "rule", "security_group": "sg"}),
                           ("security-group-reference", {"port": "port-1", "security_group": "sg"})]
    assert [v.evidence for v in gone] == ["security group rule rule refers to group sg, which does not exist",
                                          "security group rule rule refers to remote group sg, which does not exist",
                                          "port port-1 names security group sg, which does not exist"]


# -- the registry and what is left in flight -----------------------------------------------------


def test_check_all_runs_every_invariant_and_the_registry_names_each_by_its_own_name() -> None:
    assert len(inv.INVARIANTS) == 12
    for name, check in inv.INVARIANTS.items():
        assert check.__name__ == name.replace("-", "_")
    everything = Snapshot(now=0.0, ports=[port("a"), port("b")], node_ports=[nic("gone")])
    assert {v.invariant for v in inv.check_all(everything)} == {"mac-conflict", "stale-vif"}


def test_transient_leftovers_lists_what_is_in_flight_but_a_node_its_operator_holds() -> None:
    snap = Snapshot(now=0.0, instances=[server("b", vm_state=vm.BUILDING), server("r", task_state=vm.REBOOTING),
                                        server("a"), server("d", vm_state=vm.BUILDING, deleted=True)],
                    nodes=[node("n1", provision_state=bms.DEPLOYING), node("n2", provision_state=bms.CLEANING,
                                                                           maintenance=True),
                           node("n3", provision_state=bms.ACTIVE), node("n4", provision_state="bogus")],
                    stacks=[Stack(id="s", name="s", project_id="p", user_id="u", state="DELETE_IN_PROGRESS"),
                            Stack(id="t", name="t", project_id="p", user_id="u", state="DELETE_COMPLETE")])
    assert inv.transient_leftovers(snap) == ["instance b BUILD/None", "instance r REBOOT/rebooting",
                                             f"node n1 {bms.DEPLOYING}", "stack s DELETE_IN_PROGRESS"]


def test_a_violation_as_a_dict_puts_its_resources_between_its_name_and_evidence() -> None:
    violation = Violation("stale-vif", {"node": "n", "vif": "v"}, "why")
    assert violation.as_dict() == {"invariant": "stale-vif", "node": "n", "vif": "v", "evidence": "why"}
    assert list(violation.as_dict()) == ["invariant", "node", "vif", "evidence"]


# -- values as a database gives them, and the loops that must go on past a case they skip --------


def test_values_read_from_a_store_compare_by_value_not_by_identity() -> None:
    made = port(created_by=fresh(CREATED_BY_ORCHESTRATION), created_for="stack-1/p")
    assert len(inv.orphan_port(Snapshot(now=0.0, ports=[made]))) == 1
    kept = port(mac="52:54:00:00:00:01")
    vif = fresh("port-1")
    assert inv.mac_conflict(Snapshot(now=0.0, ports=[kept], node_ports=[nic(vif)])) == []
    unplugged = server(vm_state=fresh(vm.ACTIVE))
    assert len(inv.zombie_interface(Snapshot(now=0.0, **plugged_vm(instances=[unplugged], guest_devices=[])))) == 1
    together = grouped(fresh(AFFINITY), ["a", "b"])
    assert len(inv.server_group_policy(together)) == 1


def test_anti_affinity_with_room_to_spare_is_no_violation() -> None:
    assert inv.server_group_policy(grouped(ANTI_AFFINITY, ["a", "b"], {"max_server_per_host": 2})) == []


def test_a_skipped_vif_or_node_does_not_end_the_search() -> None:
    standalone_first = Snapshot(now=0.0, nodes=[node(instance="someone-elses"), node("node-2")],
                                ports=[port()], node_ports=[nic("port-1"), nic("gone", "node-2", uuid="nic-2")])
    assert found(inv.stale_vif(standalone_first)) == [("stale-vif", {"node": "node-2", "vif": "gone", "nic": "nic-2"})]
    unassociated_first = Snapshot(now=0.0, instances=[bare_metal(deleted=True)],
                                  nodes=[node("node-0"), node(instance="bm-1")])
    assert found(inv.association(unassociated_first)) == [("association", {"node": "node-1", "instance": "bm-1"})]


def test_more_values_read_from_a_store_and_the_other_side_of_each_deadline() -> None:
    interface = port("if", device_id="r-1", device_owner=fresh(ROUTER_INTERFACE_OWNER), fixed_ips=[])
    assert len(inv.router_interface(Snapshot(now=0.0, ports=[interface], routers=[Router(id="r-1", name="r",
                                                                                           project_id="p")],
                                             subnet_ids=set()))) == 1
    assert inv.stale_vif(Snapshot(now=0.0, **deployed(ports=[port(device_id=fresh("bm-1"))]))) == []
    building = bare_metal(vm_state=vm.BUILDING)
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[building],
                                        nodes=[node(instance=fresh("bm-1"), provision_state=bms.DEPLOYING)])) == []
    stack = Stack(id="s-1", name="web", project_id="p", user_id="u", state="CREATE_IN_PROGRESS", deadline=10.0)
    assert inv.stuck_transient(Snapshot(now=9.0, stacks=[stack])) == []
    # an address held on a network whose id sorts before the port's is as wrong as one after it
    held = IpAllocation("sub", "10.0.0.5", "aaa", "port-1")
    assert len(inv.ip_allocation(Snapshot(now=0.0, ports=[port()], ip_allocations=[held]))) == 1


def test_skipped_ports_and_servers_do_not_end_their_loops() -> None:
    stack_port = port("a", created_by=CREATED_BY_ORCHESTRATION, created_for="s/p", mac="fa:16:3e:00:00:0a")
    users = port("b", mac="fa:16:3e:00:00:0b")
    orphan = port("c", device_id="vm-gone", mac="fa:16:3e:00:00:0c")
    found_ports = [v.resources["port"] for v in inv.orphan_port(
        Snapshot(now=0.0, ports=[users, stack_port, orphan], orchestration_ports={"a": "s"}))]
    assert found_ports == ["c"]
    resting_last = Snapshot(now=0.0, instances=[server("vm-0", vm_state=vm.STOPPED), server()],
                            ports=[port(device_id="vm-1")], vifs=[cached("vm-0", "x"), cached("vm-1", "port-1")])
    assert found(inv.zombie_interface(resting_last)) == [("zombie-interface", {"instance": "vm-1", "port": "port-1"})]


def test_a_node_naming_a_server_of_another_node_whichever_sorts_first() -> None:
    moved = inv.association(Snapshot(now=0.0, **deployed(instances=[bare_metal(node="node-0")],
                                                          nodes=[node(instance="bm-1"), node("node-0")])))
    assert "node node-1 names instance bm-1, which names node node-0" in [v.evidence for v in moved]
    early = server(vm_state=vm.BUILDING, deadline=10.0)
    assert inv.stuck_transient(Snapshot(now=9.0, instances=[early])) == []


# -- survivors of a full mutation run (bench/mutations.py --module domain/invariants.py) ----------


def test_a_violation_is_a_value_equal_by_value_and_unchangeable() -> None:
    one, same = Violation("stale-vif", {"node": "n"}, "why"), Violation("stale-vif", {"node": "n"}, "why")
    assert one == same
    with pytest.raises(FrozenInstanceError):
        one.evidence = "other"  # type: ignore[misc]


def test_a_users_port_as_the_vif_of_a_node_compute_holds_is_compute_s_to_judge() -> None:
    # the node names a compute instance, so its VIF is compute's even on a port compute neither made
    # nor owns (a user's port, given back and no longer bound): the NIC keeps a VIF the server lost
    violations = inv.stale_vif(Snapshot(now=0.0, **deployed(ports=[port()])))
    assert [v.evidence for v in violations] == [
        "node node-1 lists VIF port-1 but the port is bound to nothing, not to instance bm-1"]


def test_a_port_changed_before_the_node_recorded_it_was_not_released_since() -> None:
    recorded = NodePort(uuid="nic-1", address="52:54:00:00:00:01", node_uuid="node-1",
                        internal_info={TENANT_VIF_KEY: "port-1"}, updated_at=100.0)
    snap = Snapshot(now=200.0, nodes=[node()], ports=[port(updated_at=50.0)], node_ports=[recorded])
    assert inv.stale_vif(snap) == []


def test_a_server_at_rest_past_an_old_deadline_and_an_active_bare_metal_server_are_not_stuck() -> None:
    # every vm_state but BUILDING is at rest without a task (ERROR, STOPPED... sort after "building")
    for state in (vm.STOPPED, vm.ERROR, vm.PAUSED):
        assert inv.stuck_transient(Snapshot(now=11.0, instances=[server(vm_state=state, deadline=10.0)])) == []
    # an ACTIVE bare-metal server whose node left it is the association check's, not a stuck build
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[bare_metal()], nodes=[])) == []
    assert inv.stuck_transient(Snapshot(now=0.0, instances=[bare_metal()], nodes=[node(instance="aaa")])) == []


def test_a_bare_metal_build_whose_node_names_another_instance_whichever_sorts_first() -> None:
    building = bare_metal(vm_state=vm.BUILDING)
    for other in ("aaa", "zzz"):
        violations = inv.stuck_transient(Snapshot(now=0.0, instances=[building], nodes=[node(instance=other)]))
        assert found(violations) == [("stuck-transient", {"instance": "bm-1", "node": "node-1"})], other


def test_a_server_at_rest_is_not_left_in_flight_whatever_its_state() -> None:
    at_rest = [server(f"vm-{state}", vm_state=state) for state in (vm.ACTIVE, vm.STOPPED, vm.ERROR, vm.SUSPENDED)]
    assert inv.transient_leftovers(Snapshot(now=0.0, instances=at_rest)) == []


def test_a_server_at_rest_in_any_state_is_live() -> None:
    # ERROR, STOPPED, PAUSED... sort after "deleted"; each is as live as ACTIVE
    for state in (vm.ERROR, vm.STOPPED, vm.PAUSED, vm.SUSPENDED):
        listed = Snapshot(now=0.0, instances=[server(vm_state=state)], ports=[port(device_id="vm-1")],
                          vifs=[cached("vm-1", "port-1")])
        assert inv.orphan_port(listed) == [], state


def test_a_bare_metal_server_at_rest_whose_node_left_it_is_no_stuck_build() -> None:
    for state in (vm.ERROR, vm.STOPPED):
        assert inv.stuck_transient(Snapshot(now=0.0, instances=[bare_metal(vm_state=state)], nodes=[])) == [], state


def test_still_more_values_read_from_a_store() -> None:
    made = Snapshot(now=0.0, nodes=[node(instance="someone-elses")], ports=[port(created_by=fresh(CREATED_BY_COMPUTE))],
                    node_ports=[nic("port-1")])
    assert len(inv.stale_vif(made)) == 1
    assert inv.association(Snapshot(now=0.0, **deployed(nodes=[node(instance=fresh("bm-1"))]))) == []
    brought = port(device_id="vm-1", created_by=fresh(CREATED_BY_USER))
    assert len(inv.user_resources_kept(Snapshot(now=0.0, ports=[brought]))) == 1


def test_skipped_servers_and_ports_do_not_end_these_loops_either() -> None:
    gone = server("vm-0", vm_state=vm.BUILDING, deadline=10.0, deleted=True)
    late = server(vm_state=vm.BUILDING, deadline=10.0)
    assert found(inv.stuck_transient(Snapshot(now=11.0, instances=[gone, late]))) == [
        ("stuck-transient", {"instance": "vm-1"})]
    compute_s = port("p0", device_id="vm-gone", created_by=CREATED_BY_COMPUTE, mac="fa:16:3e:00:00:0a")
    users = port(device_id="vm-1")
    assert found(inv.user_resources_kept(Snapshot(now=0.0, ports=[compute_s, users]))) == [
        ("user-resources-kept", {"port": "port-1", "instance": "vm-1"})]


def test_soft_policies_are_not_judged() -> None:
    for policy in ("soft-affinity", "soft-anti-affinity"):
        assert inv.server_group_policy(grouped(policy, ["a", "a"])) == [], policy
        assert inv.server_group_policy(grouped(policy, ["a", "b"])) == [], policy


def test_a_port_released_after_a_nic_recorded_it_in_the_first_second() -> None:
    # the simulated clock starts at 0: a NIC may record its VIF at 0.5, and that is a record
    recorded = NodePort(uuid="nic-1", address="52:54:00:00:00:01", node_uuid="node-1",
                        internal_info={TENANT_VIF_KEY: "port-1"}, updated_at=0.5)
    snap = Snapshot(now=200.0, nodes=[node()], ports=[port(updated_at=160.0)], node_ports=[recorded])
    assert len(inv.stale_vif(snap)) == 1


def test_yet_more_values_read_from_a_store() -> None:
    made = port(created_by=fresh(CREATED_BY_COMPUTE))
    assert len(inv.orphan_port(Snapshot(now=0.0, ports=[made]))) == 1
    building = bare_metal(vm_state=fresh(vm.BUILDING))
    assert len(inv.stuck_transient(Snapshot(now=0.0, instances=[building], nodes=[]))) == 1
    assert len(inv.transient_leftovers(Snapshot(now=0.0, instances=[server(vm_state=fresh(vm.BUILDING))]))) == 1


def test_a_server_skipped_by_the_association_check_does_not_end_its_loop() -> None:
    lost = inv.association(Snapshot(now=0.0, instances=[server("vm-0"), bare_metal()], nodes=[]))
    assert found(lost) == [("association", {"instance": "bm-1", "node": "node-1"})]


def test_only_a_router_interface_must_be_on_a_subnet() -> None:
    # a port of any other owner (one that sorts after the router's interface too) may have no address
    others = [port("t", device_owner="trunk:subport", fixed_ips=[]),
              port("n", device_owner="neutron:LOADBALANCERV2", fixed_ips=[], mac="fa:16:3e:00:00:0b")]
    assert inv.router_interface(Snapshot(now=0.0, ports=others, routers=[], subnet_ids=set())) == []


def test_the_last_values_read_from_a_store_and_a_network_that_sorts_after_the_ports() -> None:
    assert inv.association(Snapshot(now=0.0, **deployed(instances=[bare_metal(node=fresh("node-1"))]))) == []
    assert len(inv.server_group_policy(grouped(fresh(ANTI_AFFINITY), ["a", "a"]))) == 1
    late = server(vm_state=fresh(vm.BUILDING), deadline=10.0)
    assert len(inv.stuck_transient(Snapshot(now=11.0, instances=[late]))) == 1
    deleted = server(vm_state=fresh(vm.DELETED))
    assert len(inv.orphan_port(Snapshot(now=0.0, instances=[deleted], ports=[port(device_id="vm-1")],
                                        vifs=[cached("vm-1", "port-1")]))) == 1
    held = IpAllocation("sub", "10.0.0.5", "zzz", "port-1")
    assert len(inv.ip_allocation(Snapshot(now=0.0, ports=[port()], ip_allocations=[held]))) == 1


def test_a_stable_node_or_an_unassociated_floating_ip_does_not_end_its_loop() -> None:
    deadline = bms.PROVISION_STATES.states[bms.DEPLOYWAIT].deadline
    assert deadline is not None
    nodes = [node("node-0", provision_state=bms.ACTIVE), node(provision_state=bms.DEPLOYWAIT)]
    assert found(inv.stuck_transient(Snapshot(now=1.0 + deadline, nodes=nodes))) == [
        ("stuck-transient", {"node": "node-1"})]
    holder = port("fport", device_id="fip-1", device_owner=FLOATINGIP_OWNER, mac="fa:16:3e:00:00:09")
    fips = [fip(), fip(id="fip-2", port_id="port-1", fixed_ip_address="10.0.0.5")]
    assert found(inv.floating_ip_port(Snapshot(now=0.0, ports=[holder], floating_ips=fips))) == [
        ("floating-ip-port", {"floatingip": "fip-2", "port": "port-1"})]
    stray = port("fport", device_id="fip-9", device_owner=fresh(FLOATINGIP_OWNER))
    assert len(inv.router_interface(Snapshot(now=0.0, ports=[stray], routers=[], subnet_ids=set(),
                                             floating_ips=[]))) == 1
