"""Compute's release of what an instance holds (services/compute/release.py), decision by decision: a real
``Release`` on the deterministic scheduler in virtual time, a real FakeHypervisor and info cache, and a
stub bare-metal and network service that record what they are asked and answer what each test says.

The scenarios and the explorer's protection tests delete one server in a cloud whose answers all agree.
None has a node list that misses the node the instance names, a cached port the port list misses,
another instance's domain, node or port beside it, a tear-down that is refused, fails or never ends, or a
VIF detach that fails; none asks when the wait for a node's tear-down ends. These do (the oracle of
``bench/mutations.py`` for services/compute/release.py).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest

from tests.equal_copies import fresh
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.baremetal import Node
from tether.domain.compute import Instance, VifEntry
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.network import CREATED_BY_COMPUTE, Port
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.clock import VirtualClock
from tether.runtime.faults import FaultRule
from tether.runtime.runtime import Runtime
from tether.services.baremetal.transitions import node_key
from tether.services.compute.port_ownership import PortOwnership
from tether.services.compute.release import Release, detach_listed_vifs_then_unprovision
from tether.services.context import RequestContext
from tether.sim.scheduler import Scheduler, scheduled_runtime
from tether.store import repos
from tether.store.database import Database, Store

MAC = "fa:16:3e:00:00:01"
POLL, TIMEOUT = 10.0, 30.0
# More looks at one node than any test's wait takes: a wait that never ends fails instead of hanging.
MAX_LOOKS = 50



def server(uuid: str = "vm-1", **fields: Any) -> Instance:
    values: dict[str, Any] = {"name": uuid, "project_id": "p", "user_id": "u", "flavor_id": "f", "image_id": "i",
                              "vm_state": vm.ACTIVE, "is_baremetal": True, "node": "node-1"}
    values.update(fields)
    return Instance(uuid=fresh(uuid), **values)


def node(uuid: str = "node-1", **fields: Any) -> Node:
    values: dict[str, Any] = {"provision_state": bms.ACTIVE, "instance_uuid": fresh("vm-1")}
    values.update(fields)
    return Node(uuid=uuid, name=uuid, **values)


def port(port_id: str, **fields: Any) -> Port:
    values: dict[str, Any] = {"name": port_id, "network_id": "net-1", "project_id": "p", "mac_address": MAC,
                              "device_id": fresh("vm-1")}
    values.update(fields)
    return Port(id=port_id, **values)


def shown(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A call's arguments, a context shown as (project, system)."""
    return tuple((a.project_id, a.system) if isinstance(a, RequestContext) else a for a in args)


class Baremetal:
    """The bare-metal service as Release uses it. ``unlisted`` nodes exist but the node list misses them
    (a list read a moment before the node was claimed); ``raises`` maps an operation to its error."""

    def __init__(self, *nodes: Node, vifs: dict[str, list[str]] | None = None, unlisted: tuple[str, ...] = ()) -> None:
        self.nodes = {n.uuid: n for n in nodes}
        self.vifs = vifs or {}
        self.unlisted = unlisted
        self.calls: list[tuple[Any, ...]] = []
        self.raises: dict[str, Exception] = {}
        self.looks = 0
        # what a tear-down the request starts leaves the node as, at once (None: it stays as it is)
        self.torn_down: Node | None = None

    def _act(self, name: str, *args: Any) -> None:
        self.calls.append((name, *shown(args)))
        if name in self.raises:
            raise self.raises[name]

    async def list_nodes(self, ctx: RequestContext, *, instance_uuid: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.instance_uuid == instance_uuid and n.uuid not in self.unlisted]

    async def find_node(self, uuid: str) -> Node | None:
        self.looks += 1
        assert self.looks <= MAX_LOOKS, "looks at the node for ever"
        return self.nodes.get(uuid)

    async def vif_list(self, ctx: RequestContext, node_uuid: str) -> list[str]:
        return list(self.vifs.get(node_uuid, ()))

    async def vif_detach(self, ctx: RequestContext, node_uuid: str, vif: str) -> None:
        self._act("vif_detach", ctx, node_uuid, vif)

    async def set_provision_state(self, ctx: RequestContext, node_uuid: str, target: str) -> None:
        self._act("set_provision_state", ctx, node_uuid, target)
        if self.torn_down is not None:
            self.nodes[node_uuid] = self.torn_down

    async def release_node(self, node_uuid: str, instance_uuid: str) -> None:
        self._act("release_node", node_uuid, instance_uuid)

    @staticmethod
    def node_key(uuid: str) -> tuple[str, str]:
        return node_key(uuid)


class Network:
    """The network service as Release (and PortOwnership) use it; ``unlisted`` ports exist but the port
    list misses them."""

    def __init__(self, *ports: Port, unlisted: tuple[str, ...] = ()) -> None:
        self.ports = {p.id: p for p in ports}
        self.unlisted = unlisted
        self.calls: list[tuple[Any, ...]] = []

    async def list_ports(self, ctx: RequestContext, *, device_id: str) -> list[Port]:
        return [p for p in self.ports.values() if p.device_id == device_id and p.id not in self.unlisted]

    async def find_port(self, port_id: str) -> Port | None:
        return self.ports.get(port_id)

    async def delete_port(self, ctx: RequestContext, port_id: str) -> None:
        self.calls.append(("delete_port", *shown((ctx, port_id))))

    async def release_port(self, port_id: str, *, reset_mac: bool) -> None:
        self.calls.append(("release_port", port_id, reset_mac))


def release_with(baremetal: Baremetal | None = None, network: Network | None = None,
                 hypervisor: FakeHypervisor | None = None, store: Store | None = None,
                 rt: Runtime | None = None, poll: float = POLL) -> Release:
    network = network or Network()
    return Release(store, rt or scheduled_runtime(Scheduler(VirtualClock(0.0))),  # type: ignore[arg-type]
                   hypervisor=hypervisor or FakeHypervisor(), baremetal=baremetal or Baremetal(),  # type: ignore[arg-type]
                   network=network, ownership=PortOwnership(network),  # type: ignore[arg-type]
                   node_poll_interval=poll, node_teardown_timeout=TIMEOUT)


async def run(rt: Runtime, *work: Coroutine[Any, Any, Any]) -> None:
    """Run ``work`` as actors of the runtime's scheduler, in virtual time, to the end; the first's error."""
    scheduler = rt.executor.scheduler  # type: ignore[attr-defined]
    actors = [scheduler.spawn(coro, f"actor-{i}") for i, coro in enumerate(work)]
    await scheduler.run()
    if actors[0].error is not None:
        raise actors[0].error


def notes(release: Release) -> list[str]:
    return [entry.text for entry in release.rt.journal]


# --- a guest


async def test_a_guest_is_unplugged_everywhere_and_only_its_own_domain_destroyed() -> None:
    hypervisor = FakeHypervisor()
    for uuid in ("vm-0", "vm-1", "vm-2"):
        hypervisor.create_domain("hv-1", uuid)
        hypervisor.plug("hv-1", uuid, f"port-{uuid}", MAC)
    # a device left on a host where the guest has no domain: destroying its domain does not take it
    hypervisor.plug("hv-2", "vm-1", "port-x", MAC)

    await release_with(hypervisor=hypervisor).release_guest(server(is_baremetal=False))

    assert [(i.host, i.instance_uuid) for i in hypervisor.interfaces()] == [("hv-1", "vm-0"), ("hv-1", "vm-2")]
    assert hypervisor.domains() == [("hv-1", "vm-0"), ("hv-1", "vm-2")]


# --- the nodes of a bare-metal instance


async def test_the_nodes_of_an_instance_are_those_listed_and_the_one_it_names_if_it_holds_it() -> None:
    listed = node("node-0")
    baremetal = Baremetal(listed, node(), unlisted=("node-1",))
    assert [n.uuid for n in await release_with(baremetal).nodes_of(server())] == ["node-0", "node-1"]
    # named and listed: once
    baremetal = Baremetal(node())
    assert [n.uuid for n in await release_with(baremetal).nodes_of(server())] == ["node-1"]


async def test_a_named_node_that_is_gone_or_holds_another_instance_is_not_the_instances() -> None:
    for named in (None, node(instance_uuid=None), node(instance_uuid="vm-0"), node(instance_uuid="vm-2")):
        baremetal = Baremetal(node("node-0"), *([named] if named else []), unlisted=("node-1",))
        assert [n.uuid for n in await release_with(baremetal).nodes_of(server())] == ["node-0"], named


async def test_compute_detaches_each_vif_a_node_lists_then_tears_it_down() -> None:
    baremetal = Baremetal(node(), vifs={"node-1": ["vif-1", "vif-2"]})
    baremetal.torn_down = node(instance_uuid=None, provision_state=bms.CLEANING)
    release = release_with(baremetal)
    await run(release.rt, detach_listed_vifs_then_unprovision(release, server(), None))
    internal = ("p", True)
    assert baremetal.calls == [("vif_detach", internal, "node-1", "vif-1"), ("vif_detach", internal, "node-1", "vif-2"),
                               ("set_provision_state", internal, "node-1", "deleted")]


async def test_with_its_layer_off_compute_leaves_the_vifs_only_to_a_tear_down() -> None:
    # the protection is compute's layer of seed 000's fix; a node that is only released has no other
    for state, then in ((bms.ACTIVE, "set_provision_state"), (bms.AVAILABLE, "release_node")):
        baremetal = Baremetal(node(provision_state=state), vifs={"node-1": ["vif-1"]})
        baremetal.torn_down = node(instance_uuid=None, provision_state=bms.CLEANING)
        release = release_with(baremetal)
        release.rt.faults.rules.append(FaultRule.parse("compute.delete.detach_node_vifs=off"))
        await run(release.rt, detach_listed_vifs_then_unprovision(release, server(), None))
        assert [call[0] for call in baremetal.calls] == (["vif_detach", then] if state == bms.AVAILABLE else [then])


# --- detaching one VIF


async def test_a_vif_already_gone_or_on_a_busy_node_does_not_stop_the_release() -> None:
    for error, noted in ((be.VifNotAttached(vif="vif-1", node="node-1"), []),
                         (be.NodeLocked(node="node-1", host="c-1"),
                          ["node node-1 is busy; its tear-down detaches VIF vif-1"])):
        baremetal = Baremetal(node())
        baremetal.raises["vif_detach"] = error
        release = release_with(baremetal)
        await release.detach_from_node(RequestContext.internal("p"), "node-1", "vif-1")
        assert (len(baremetal.calls), notes(release)) == (1, noted), error


async def test_a_vif_detach_that_fails_otherwise_fails_the_release_unless_told_to_ignore_it() -> None:
    baremetal = Baremetal(node())
    baremetal.raises["vif_detach"] = TetherError("the switch said no")
    release = release_with(baremetal)
    with pytest.raises(TetherError, match="the switch said no"):
        await release.detach_from_node(RequestContext.internal("p"), "node-1", "vif-1")
    await release.detach_from_node(RequestContext.internal("p"), "node-1", "vif-1", ignore_all=True)
    assert notes(release) == ["ignored: the switch said no"]


# --- tearing a node down, or releasing it


async def test_a_node_gone_or_held_by_another_instance_is_left_alone() -> None:
    for held in ([], [node(instance_uuid=None)], [node(instance_uuid="vm-0")], [node(instance_uuid="vm-2")]):
        baremetal = Baremetal(*held)
        release = release_with(baremetal)
        await run(release.rt, release.unprovision(server(), node()))
        assert baremetal.calls == [], held


async def test_a_node_the_instance_holds_is_torn_down_where_nova_would_and_released_elsewhere() -> None:
    for state in (*bms.UNPROVISION_STATES, bms.AVAILABLE, bms.CLEANING, bms.MANAGEABLE):
        baremetal = Baremetal(node(provision_state=fresh(state)))
        baremetal.torn_down = node(instance_uuid=None, provision_state=bms.CLEANING)
        release = release_with(baremetal)
        await run(release.rt, release.unprovision(server(), node()))
        expected = (("set_provision_state", ("p", True), "node-1", "deleted") if state in bms.UNPROVISION_STATES
                    else ("release_node", "node-1", "vm-1"))
        assert baremetal.calls == [expected], state
        assert release.rt.now() == 0.0, state


async def test_a_tear_down_the_node_refuses_is_noted_and_still_waited_for() -> None:
    for error in (be.InvalidStateRequested(action="deleted", node="node-1", state="deleting"),
                  be.NodeNotFound(node="node-1")):
        baremetal = Baremetal(node())
        baremetal.raises["set_provision_state"] = error
        release = release_with(baremetal)
        await run(release.rt, release.unprovision(server(), node()),
                  finish_tear_down(release, baremetal, after=15.0))
        assert notes(release)[0] == f"node node-1 not torn down: {error}"
        assert release.rt.now() == 15.0


# --- waiting for a node's tear-down


async def finish_tear_down(release: Release, baremetal: Baremetal, after: float) -> None:
    """The conductor: ``after`` seconds on, the node has forgotten the instance and cleans."""
    await release.rt.sleep(after)
    baremetal.nodes["node-1"] = node(instance_uuid=None, provision_state=bms.CLEANING)
    release.rt.notify(node_key("node-1"))


async def test_the_wait_ends_when_the_conductor_says_the_node_let_go() -> None:
    baremetal = Baremetal(node(provision_state=bms.DELETING))
    release = release_with(baremetal)
    await run(release.rt, release._wait_for_node_released(server(), "node-1"),
              finish_tear_down(release, baremetal, after=25.0))
    assert release.rt.now() == 25.0
    assert baremetal.looks == 4  # at 0, 10, 20 and when told at 25
    assert notes(release) == []


@pytest.mark.parametrize("now", [
    pytest.param(None, id="gone"),
    pytest.param(node(instance_uuid=None, provision_state=bms.CLEANING), id="cleaning"),
    pytest.param(node(instance_uuid=None, provision_state=bms.AVAILABLE), id="available"),
    # a tear-down that failed after forgetting the instance (a BMC that would not power off)
    pytest.param(node(instance_uuid=None, provision_state=bms.ERROR), id="failed-after-forgetting"),
    pytest.param(node(instance_uuid="vm-2", provision_state=bms.ACTIVE), id="another-instances"),
])
async def test_a_node_that_let_go_of_the_instance_ends_the_wait_at_once(now: Node | None) -> None:
    baremetal = Baremetal(*([now] if now else []))
    release = release_with(baremetal)
    await run(release.rt, release._wait_for_node_released(server(), "node-1"))
    assert (release.rt.now(), baremetal.looks, notes(release)) == (0.0, 1, [])


@pytest.mark.parametrize("now", [
    # it forgot the instance but has not left deleting: its VIFs may still be on it
    pytest.param(node(instance_uuid=None, provision_state=fresh(bms.DELETING)), id="forgotten-deleting"),
    pytest.param(node(provision_state=fresh(bms.DELETING)), id="deleting"),
    # a tear-down that failed before forgetting keeps the instance, for an operator or the reconciler
    pytest.param(node(provision_state=bms.ERROR), id="failed"),
    pytest.param(node(provision_state=bms.ACTIVE), id="not-yet"),
])
@pytest.mark.parametrize(("poll", "looks", "ended"), [(POLL, 3, TIMEOUT), (7.0, 5, 35.0)])
async def test_a_node_that_holds_on_is_waited_for_until_the_timeout(
        now: Node, poll: float, looks: int, ended: float) -> None:
    baremetal = Baremetal(now)
    release = release_with(baremetal, poll=poll)
    await run(release.rt, release._wait_for_node_released(server(), "node-1"))
    # the last look is the last before the deadline; the wait after it may end past it
    assert (release.rt.now(), baremetal.looks) == (ended, looks)
    assert notes(release) == ["node node-1 still tearing down; its reconciler takes over"]


# --- the ports


async def test_the_ports_given_back_are_those_bound_and_those_cached_that_still_name_the_instance(
        database: Database) -> None:
    rt = scheduled_runtime(Scheduler(VirtualClock(0.0)))
    store = Store(database, rt)
    network = Network(
        port("port-1"), port("port-2", created_by=CREATED_BY_COMPUTE, project_id="q"),
        port("port-3"),  # bound, but the list misses it: only the cache knows
        port("port-4", device_id="vm-0"), port("port-5", device_id="vm-2"),  # moved to other servers since
        port("port-9", device_id="vm-9"),
        unlisted=("port-3",))
    cached = ("port-1", "port-3", "port-4", "port-5", "port-6")  # port-6 is gone
    async with store.begin() as conn:
        for position, port_id in enumerate(cached):
            await repos.instance_vifs.add(conn, VifEntry(fresh("vm-1"), port_id, "net-1", MAC, position))
        await repos.instance_vifs.add(conn, VifEntry("vm-9", "port-9", "net-1", MAC))
    release = release_with(network=network, store=store, rt=rt)

    await run(rt, release.release_ports(server()))

    assert network.calls == [("release_port", "port-1", False), ("delete_port", ("q", True), "port-2"),
                             ("release_port", "port-3", False)]
    async with store.begin() as conn:
        assert [e.instance_uuid for e in await repos.instance_vifs.find(conn)] == ["vm-9"]
