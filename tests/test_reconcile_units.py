"""The reconcilers' own decisions, without a cloud: when StuckTransients comes back for a key, and what
ZombieInterfaces clears once the instance is gone.

tests/test_reconcilers.py plants each disagreement in a live cloud; the explorer's protection tests
mend each out-of-band scenario. Neither asks for the seconds until a node's deadline, nor for
another instance's domain left alone; these do (the oracle of ``bench/mutations.py`` for
reconcile/transients.py and reconcile/instances.py).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from tests.equal_copies import fresh
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.baremetal import Node
from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.invariants import Snapshot, Violation
from tether.domain.network import CREATED_BY_COMPUTE, CREATED_BY_ORCHESTRATION, CREATED_BY_USER, Port
from tether.drivers.hypervisor import FakeHypervisor
from tether.reconcile.instances import ZombieInterfaces
from tether.reconcile.nodes import Associations, StaleVifs
from tether.reconcile.ports import NicMacs, OrphanPorts
from tether.reconcile.queue import Key
from tether.reconcile.transients import StuckTransients
from tether.services.context import RequestContext

WAIT = bms.PROVISION_STATES.states[bms.DEPLOYWAIT].deadline
assert WAIT is not None


def server(uuid: str = "vm-1", **fields: Any) -> Instance:
    values: dict[str, Any] = {"name": uuid, "project_id": "p", "user_id": "u", "flavor_id": "f", "image_id": "i",
                              "vm_state": vm.BUILDING, "host": "hv-1", "deadline": 100.0}
    values.update(fields)
    return Instance(uuid=uuid, **values)


def node(uuid: str = "node-1", **fields: Any) -> Node:
    values: dict[str, Any] = {"provision_state": bms.DEPLOYWAIT, "provision_updated_at": 10.0}
    values.update(fields)
    return Node(uuid=uuid, name=uuid, **values)


def next_look(snapshot: Snapshot, key: Key) -> float | None:
    return StuckTransients(None).next_look(snapshot, key)  # type: ignore[arg-type]


def test_an_instance_in_flight_is_looked_at_again_when_its_deadline_passes() -> None:
    snap = Snapshot(now=40.0, instances=[server("vm-0", deadline=50.0), server(), server("vm-2", deadline=45.0)])
    assert next_look(snap, Key("instance", "vm-1")) == 60.0
    acting = replace(snap, instances=[server(vm_state=vm.ACTIVE, task_state=vm.REBOOTING)])
    assert next_look(acting, Key("instance", "vm-1")) == 60.0
    # at rest, deleted, without a deadline, or past it already: nothing to wait for
    for instance in (server(vm_state=vm.ACTIVE), server(vm_state=vm.STOPPED), server(vm_state=vm.ERROR),
                     server(deleted=True), server(deadline=None), server(deadline=40.0),
                     server(deadline=30.0)):
        assert next_look(replace(snap, instances=[instance]), Key("instance", "vm-1")) is None, instance


def test_a_node_in_flight_is_looked_at_again_when_its_states_deadline_passes() -> None:
    nodes = [node("node-0", provision_updated_at=20.0), node(), node("node-2", provision_updated_at=15.0)]
    snap = Snapshot(now=40.0, nodes=nodes)
    assert next_look(snap, Key("node", "node-1")) == 10.0 + WAIT - 40.0
    assert next_look(snap, Key("node", "node-0")) == 20.0 + WAIT - 40.0
    # a stable state, one the table does not know, or a deadline passed: nothing to wait for
    for state in (bms.ACTIVE, bms.AVAILABLE, "no such state"):
        assert next_look(replace(snap, nodes=[node(provision_state=state)]), Key("node", "node-1")) is None, state
    assert next_look(replace(snap, now=10.0 + WAIT), Key("node", "node-1")) is None
    assert next_look(replace(snap, now=11.0 + WAIT, nodes=[node()]), Key("node", "node-1")) is None
    # the earliest of two waits
    assert next_look(Snapshot(now=40.0, nodes=[node(), node(provision_updated_at=12.0)]),
                     Key("node", "node-1")) == 10.0 + WAIT - 40.0



def test_a_key_read_from_a_store_compares_by_value() -> None:
    snap = Snapshot(now=40.0, instances=[server(vm_state=fresh(vm.BUILDING))], nodes=[node()])
    assert next_look(snap, Key("instance", fresh("vm-1"))) == 60.0
    assert next_look(snap, Key("node", fresh("node-1"))) == 10.0 + WAIT - 40.0
    assert next_look(snap, Key(fresh("instance"), "vm-1")) == 60.0


def test_an_instance_key_never_reads_the_nodes_nor_a_node_key_the_instances() -> None:
    snap = Snapshot(now=40.0, instances=[server("node-1")], nodes=[node("vm-1")])
    assert next_look(snap, Key("instance", "vm-1")) is None
    assert next_look(snap, Key("node", "node-1")) is None


async def test_zombie_interfaces_of_a_gone_instance_clear_its_devices_and_domain_only() -> None:
    hypervisor = FakeHypervisor()
    for uuid in ("vm-0", "vm-1", "vm-2"):
        hypervisor.create_domain("hv-1", uuid)
        hypervisor.plug("hv-1", uuid, f"port-{uuid}", "fa:16:3e:00:00:01")

    async def live_instance(uuid: str) -> None:
        return None

    cloud = SimpleNamespace(compute=SimpleNamespace(live_instance=live_instance),
                            world=SimpleNamespace(hypervisor=hypervisor))
    reconciler = ZombieInterfaces(cloud)  # type: ignore[arg-type]
    violation = Violation("zombie-interface", {"instance": fresh("vm-1")}, "its instance is gone")
    assert await reconciler.mend(violation) is True
    assert [i.instance_uuid for i in hypervisor.interfaces()] == ["vm-0", "vm-2"]
    assert sorted(hypervisor.domains()) == [("hv-1", "vm-0"), ("hv-1", "vm-2")]
    # nothing plugged any more: nothing changed, though a domain may be cleared
    assert await reconciler.mend(violation) is False


async def test_zombie_interfaces_of_a_gone_instance_without_a_domain_are_unplugged() -> None:
    # a device left on a host where the instance has no domain (a destroy that did not take its devices)
    hypervisor = FakeHypervisor()
    hypervisor.plug("hv-2", "vm-1", "port-1", "fa:16:3e:00:00:01")

    async def live_instance(uuid: str) -> None:
        return None

    cloud = SimpleNamespace(compute=SimpleNamespace(live_instance=live_instance),
                            world=SimpleNamespace(hypervisor=hypervisor))
    violation = Violation("zombie-interface", {"instance": "vm-1"}, "its instance is gone")
    assert await ZombieInterfaces(cloud).mend(violation) is True  # type: ignore[arg-type]
    assert hypervisor.interfaces() == []


# --- reconcile/nodes.py and reconcile/ports.py: each decision against a stub cloud that records its calls


class Stub:
    """A service that records each call, answers from ``answers`` and raises what ``raises`` names."""

    def __init__(self, calls: list[tuple[Any, ...]], **answers: Any) -> None:
        self.calls, self.answers, self.raises = calls, answers, {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("calls", "answers", "raises"):
            raise AttributeError(name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, *args, *sorted(kwargs.items())))
            if name in self.raises:
                raise self.raises[name]
            answer = self.answers.get(name)
            return answer(*args) if callable(answer) else answer
        return call


def stub_cloud(nodes: tuple[Node, ...] = (), live: tuple[str, ...] = (), ports: tuple[Port, ...] = (),
               reconciled: bool = True, forgotten: bool = True) -> tuple[Any, list[tuple[Any, ...]]]:
    calls: list[tuple[Any, ...]] = []

    def find_node(uuid: str) -> Node | None:
        return next((n for n in nodes if n.uuid == uuid), None)

    def live_instance(uuid: str) -> Instance | None:
        return server(uuid) if uuid in live else None

    def find_port(port_id: str) -> Port | None:
        return next((p for p in ports if p.id == port_id), None)

    cloud = SimpleNamespace(
        baremetal=Stub(calls, find_node=find_node),
        compute=Stub(calls, live_instance=live_instance, reconcile_network=reconciled, forget_node=forgotten),
        network=Stub(calls, find_port=find_port))
    return cloud, calls


def acts(calls: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The calls that change something, a context shown as (project, system)."""
    shown = []
    for call in calls:
        if call[0] in ("find_node", "find_port", "live_instance"):
            continue
        shown.append(tuple((a.project_id, a.system) if isinstance(a, RequestContext) else a for a in call))
    return shown


def looked_up(calls: list[tuple[Any, ...]]) -> list[str]:
    return [call[1] for call in calls if call[0] == "live_instance"]


def stale(node_uuid: str = "node-1", vif: str = "vif-1") -> Violation:
    return Violation("stale-vif", {"node": fresh(node_uuid), "vif": fresh(vif)}, "no port for it")


async def test_a_stale_vif_of_a_node_without_an_instance_is_detached() -> None:
    cloud, calls = stub_cloud(nodes=(node("node-0"), node(instance_uuid=""), node("node-2")))
    assert await StaleVifs(cloud).mend(stale()) is True
    assert acts(calls) == [("vif_detach", (None, True), "node-1", "vif-1")]
    assert looked_up(calls) == []


async def test_a_stale_vif_of_a_node_whose_instance_is_gone_is_detached() -> None:
    cloud, calls = stub_cloud(nodes=(node(instance_uuid="vm-1"),), live=("vm-2",))
    assert await StaleVifs(cloud).mend(stale()) is True
    assert acts(calls) == [("vif_detach", (None, True), "node-1", "vif-1")]
    assert looked_up(calls) == ["vm-1"]


async def test_a_stale_vif_of_a_node_whose_instance_lives_is_the_instances_to_mend() -> None:
    for answer in (True, False):
        cloud, calls = stub_cloud(nodes=(node(instance_uuid=fresh("vm-1")),), live=("vm-1",), reconciled=answer)
        assert await StaleVifs(cloud).mend(stale()) is answer
        assert acts(calls) == [("reconcile_network", "vm-1")]


async def test_a_stale_vif_of_a_gone_node_is_left_alone() -> None:
    cloud, calls = stub_cloud(nodes=(node("node-0"),))
    assert await StaleVifs(cloud).mend(stale()) is False
    assert acts(calls) == []


async def test_a_stale_vif_that_cannot_be_detached_is_left_for_the_next_pass() -> None:
    for error in (be.VifNotAttached("gone"), be.NodeNotFound("gone"), be.NodeLocked("busy")):
        cloud, calls = stub_cloud(nodes=(node(),))
        cloud.baremetal.raises["vif_detach"] = error
        assert await StaleVifs(cloud).mend(stale()) is False, error
        assert acts(calls) == [("vif_detach", (None, True), "node-1", "vif-1")]


def association(node_uuid: str | None = "node-1", instance_uuid: str | None = "vm-1") -> Violation:
    resources = {"node": fresh_or_none(node_uuid), "instance": fresh_or_none(instance_uuid)}
    return Violation("association", {k: v for k, v in resources.items() if v is not None}, "one side is gone")


def fresh_or_none(text: str | None) -> str | None:
    return None if text is None else fresh(text)


async def test_a_node_held_for_a_gone_instance_is_torn_down_or_released() -> None:
    for state in bms.UNPROVISION_STATES:
        cloud, calls = stub_cloud(nodes=(node("node-0", instance_uuid="vm-1"),
                                         node(instance_uuid=fresh("vm-1"), provision_state=fresh(state))))
        assert await Associations(cloud).mend(association()) is True, state
        assert acts(calls) == [("set_provision_state", (None, True), "node-1", "deleted")], state
    for state in (bms.AVAILABLE, bms.CLEANING, bms.MANAGEABLE):
        cloud, calls = stub_cloud(nodes=(node(instance_uuid=fresh("vm-1"), provision_state=state),))
        assert await Associations(cloud).mend(association()) is True, state
        assert acts(calls) == [("release_node", "node-1", "vm-1")], state


async def test_an_association_whose_two_sides_agree_is_left_alone() -> None:
    # the node holds the live instance: nothing points at nothing
    cloud, calls = stub_cloud(nodes=(node(instance_uuid=fresh("vm-1"), provision_state=bms.ACTIVE),), live=("vm-1",))
    assert await Associations(cloud).mend(association()) is False
    assert acts(calls) == []
    # neither side exists any more, or the node holds another (gone) instance
    for nodes in ((), (node(instance_uuid="vm-2"),), (node(instance_uuid=""),)):
        cloud, calls = stub_cloud(nodes=nodes)
        assert await Associations(cloud).mend(association()) is False, nodes
        assert acts(calls) == [], nodes


async def test_a_live_instance_whose_node_is_gone_or_elsewhere_forgets_it() -> None:
    for nodes in ((), (node(instance_uuid="vm-2"),), (node(instance_uuid=""),)):
        for answer in (True, False):
            cloud, calls = stub_cloud(nodes=nodes, live=("vm-1",), forgotten=answer)
            assert await Associations(cloud).mend(association()) is answer, nodes
            assert acts(calls) == [("forget_node", "vm-1", "node-1")], nodes


async def test_an_association_names_what_it_lacks_as_empty() -> None:
    cloud, calls = stub_cloud(nodes=(node(instance_uuid=""),), live=("vm-1",))
    assert await Associations(cloud).mend(association(node_uuid=None)) is True
    assert acts(calls) == [("forget_node", "vm-1", "")]
    cloud, calls = stub_cloud(nodes=(node(uuid="", instance_uuid=""),))
    assert await Associations(cloud).mend(association(instance_uuid=None)) is False
    assert looked_up(calls) == [""]


def port(port_id: str = "port-1", **fields: Any) -> Port:
    values: dict[str, Any] = {"name": port_id, "network_id": "net-1", "project_id": "p",
                              "mac_address": "fa:16:3e:00:00:01"}
    values.update(fields)
    return Port(id=port_id, **values)


def orphan(port_id: str = "port-1") -> Violation:
    return Violation("orphan-port", {"port": fresh(port_id)}, "no owner lists it")


async def test_an_orphan_port_an_owner_created_goes_with_the_owner() -> None:
    made = fresh(CREATED_BY_ORCHESTRATION)
    for device, live in (("", ("",)), ("vm-1", ()), ("vm-1", ("vm-2",))):
        cloud, calls = stub_cloud(ports=(port("port-0"), port(created_by=made, device_id=device, project_id="q")),
                                  live=live)
        assert await OrphanPorts(cloud).mend(orphan()) is True, device
        assert acts(calls) == [("delete_port", ("q", True), "port-1")], device
        assert looked_up(calls) == ([device] if device else []), device


async def test_an_orphan_port_an_owner_created_stays_on_its_live_server() -> None:
    cloud, calls = stub_cloud(ports=(port(created_by=fresh(CREATED_BY_ORCHESTRATION), device_id=fresh("vm-1")),),
                              live=("vm-1",))
    assert await OrphanPorts(cloud).mend(orphan()) is False
    assert acts(calls) == []


async def test_an_orphan_port_of_a_live_server_is_the_servers_to_mend() -> None:
    for answer in (True, False):
        cloud, calls = stub_cloud(ports=(port(device_id=fresh("vm-1")),), live=("vm-1",), reconciled=answer)
        assert await OrphanPorts(cloud).mend(orphan()) is answer
        assert acts(calls) == [("reconcile_network", "vm-1")]


async def test_an_orphan_port_the_user_or_compute_made_is_given_back() -> None:
    # compute's own ports, too ("compute" sorts before "orchestration", "user" after)
    for maker in (CREATED_BY_USER, CREATED_BY_COMPUTE):
        for device, live in (("", ("",)), ("vm-1", ()), ("vm-1", ("vm-2",))):
            mine = port(device_id=device, created_by=maker)
            cloud, calls = stub_cloud(ports=(mine,), live=live)
            assert await OrphanPorts(cloud).mend(orphan()) is True, (maker, device)
            assert acts(calls) == [("give_back_port", mine)], (maker, device)
            assert looked_up(calls) == ([device] if device else []), (maker, device)


async def test_a_gone_orphan_port_is_left_alone() -> None:
    cloud, calls = stub_cloud(ports=(port("port-0"),))
    assert await OrphanPorts(cloud).mend(orphan()) is False
    assert acts(calls) == []


def conflict(port_id: str | None = "port-1") -> Violation:
    return Violation("mac-conflict", {} if port_id is None else {"port": fresh(port_id)}, "a NIC's MAC")


async def test_a_released_port_with_a_nics_mac_gets_a_fresh_one() -> None:
    cloud, calls = stub_cloud(ports=(port("port-0"), port(project_id="q")))
    assert await NicMacs(cloud).mend(conflict()) is True
    assert acts(calls) == [("update_port", ("q", True), "port-1", ("mac_address", None))]


async def test_a_mac_conflict_without_a_released_port_is_left_alone() -> None:
    for ports, violation in (((port(),), conflict(None)), ((port("port-0"),), conflict()),
                             ((port(binding_host_id="node-1"),), conflict())):
        cloud, calls = stub_cloud(ports=ports)
        assert await NicMacs(cloud).mend(violation) is False, violation
        assert acts(calls) == [], violation


async def test_a_mac_conflict_the_update_refuses_is_left_for_the_next_pass() -> None:
    cloud, calls = stub_cloud(ports=(port(),))
    cloud.network.raises["update_port"] = TetherError("bound meanwhile")
    assert await NicMacs(cloud).mend(conflict()) is False
    assert acts(calls) == [("update_port", ("p", True), "port-1", ("mac_address", None))]
