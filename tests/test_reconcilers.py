"""Each reconciler, alone: plant exactly its disagreement in a live cloud and let one queue turn mend it.

The cloud runs as `tether serve` runs it (asyncio, real time); the disagreement
is planted the way it happens in the field, behind the services' backs (a row
written or removed directly, a device plugged on the hypervisor by hand). Each
test first checks that the whole system shows exactly that one violation, then
puts its key in the reconcilers' queue, runs one turn, and checks that exactly
that reconciler mended it and nothing is left.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from unittest.mock import ANY

import pytest

from tether.audit.local import collect
from tether.cloud import Cloud, World
from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.invariants import check_all
from tether.domain.network import CREATED_BY_COMPUTE, DEFAULT_COMPUTE_OWNER
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.reconcile.queue import Key
from tether.reconcile.runner import SETTLE_SECONDS, ReconcileLoop
from tether.runtime.runtime import Runtime
from tether.seeding import DemoShape, Seeded, seed_demo_cloud, wait_for_nodes
from tether.services.context import RequestContext


@dataclass
class Live:
    cloud: Cloud
    seeded: Seeded
    loop: ReconcileLoop

    @property
    def admin(self) -> RequestContext:
        return self.seeded.admin.fresh()

    def id(self, name: str) -> str:
        return self.seeded.names[name]

    async def violations(self) -> list[tuple[str, dict[str, str]]]:
        await self.cloud.rt.drain()
        return [(v.invariant, v.resources) for v in check_all(await collect(self.cloud))]

    async def one_turn(self, key: Key) -> list[str]:
        """Queue ``key``, run exactly one queue turn on it; the invariants it mended.

        Keys the bus queued meanwhile (a device plugged, a port's events) are set aside
        unreconciled, so that nothing but this one turn can have mended the disagreement.
        """
        while (earlier := self.loop.queue.get_nowait()) is not None:
            self.loop.queue.done(earlier)
        self.loop.queue.add(key)
        taken = self.loop.queue.get_nowait()
        assert taken == key
        outcome = await self.loop.turn(taken)
        await self.cloud.rt.drain()
        assert outcome is not None
        return [violation.invariant for violation in outcome.mended]

    async def boot(self, name: str, flavor: str) -> Instance:
        server = await self.cloud.compute.create_server(
            self.admin, name=name, flavor_id=self.id(flavor), image_id=self.id("cirros"),
            networks=[{"uuid": self.id("private")}])
        for _ in range(600):
            current = (await self.cloud.compute.server_record(self.admin, server.uuid)).instance
            if current.vm_state != vm.BUILDING:
                assert current.vm_state == vm.ACTIVE, current
                return current
            await asyncio.sleep(0.01)
        raise TimeoutError(name)


@pytest.fixture
async def live(database) -> Live:
    world = World(database, FakeHypervisor(), FakeHardware(deploy_seconds=0.02, clean_seconds=0.02))
    cloud = Cloud(world, Runtime(), random.Random(7), fast_passwords=True, node_poll_interval=0.02)
    seeded = await seed_demo_cloud(cloud, DemoShape(nodes=2, hypervisors=1))
    await wait_for_nodes(cloud, seeded)
    yield Live(cloud, seeded, ReconcileLoop(cloud, resync_interval=3600.0))
    await cloud.rt.cancel_background()


async def test_stale_vifs_detaches_a_vif_whose_port_is_gone(live: Live) -> None:
    server = await live.boot("bm", "baremetal")
    async with live.cloud.store.begin() as uow:
        (port,) = await uow.ports.find(device_id=server.uuid)
        await uow.ip_allocations.delete_where(port_id=port.id)
        await uow.ports.delete(port.id)  # behind neutron's back: nobody is told
    assert await live.violations() == [("stale-vif", {"node": server.node, "vif": port.id, "nic": ANY})]

    assert await live.one_turn(Key("node", server.node or "")) == ["stale-vif"]
    assert await live.violations() == []
    assert await live.cloud.baremetal.vif_list(live.admin, server.node or "") == []


async def test_orphan_ports_deletes_a_compute_port_whose_instance_never_was(live: Live) -> None:
    ghost = "6a3f0c1e-0000-4000-8000-000000000001"
    port = await live.cloud.network.create_port(
        live.admin, network_id=live.id("private"), device_id=ghost, device_owner=DEFAULT_COMPUTE_OWNER,
        created_by=CREATED_BY_COMPUTE)
    assert await live.violations() == [("orphan-port", {"port": port.id, "instance": ghost})]

    assert await live.one_turn(Key("port", port.id)) == ["orphan-port"]
    assert await live.violations() == []
    assert await live.cloud.network.find_port(port.id) is None


async def test_nic_macs_gives_a_released_port_a_fresh_mac(live: Live) -> None:
    nic_mac = "52:54:00:00:01:00"  # node-1's NIC, which holds no VIF
    port = await live.cloud.network.create_port(live.admin, network_id=live.id("private"), mac_address=nic_mac)
    ((invariant, resources),) = await live.violations()
    assert (invariant, resources["port"]) == ("mac-conflict", port.id)

    assert await live.one_turn(Key("port", port.id)) == ["mac-conflict"]
    assert await live.violations() == []
    mended = await live.cloud.network.find_port(port.id)
    assert mended is not None and mended.mac_address != nic_mac


async def test_stuck_transients_fails_a_build_nothing_drives_past_its_deadline(live: Live) -> None:
    now = live.cloud.rt.now()
    stuck = Instance(uuid="6a3f0c1e-0000-4000-8000-000000000002", name="stuck", project_id=live.admin.project_id or "",
                     user_id=live.admin.user_id, flavor_id=live.id("m1.tiny"), image_id=live.id("cirros"),
                     vm_state=vm.BUILDING, task_state=vm.SCHEDULING, deadline=now - 1.0, created_at=now - 10.0,
                     updated_at=now - 10.0)
    async with live.cloud.store.begin() as uow:
        await uow.instances.add(stuck)  # a build whose process died without a trace
    assert await live.violations() == [("stuck-transient", {"instance": stuck.uuid})]

    assert await live.one_turn(Key("instance", stuck.uuid)) == ["stuck-transient"]
    assert await live.violations() == []
    assert (await live.cloud.compute.server_record(live.admin, stuck.uuid)).instance.vm_state == vm.ERROR


async def test_zombie_interfaces_unplugs_a_guest_device_whose_port_is_gone(live: Live) -> None:
    server = await live.boot("vm", "m1.tiny")
    ghost_port = "6a3f0c1e-0000-4000-8000-000000000003"
    live.cloud.world.hypervisor.plug(server.host or "", server.uuid, ghost_port, "fa:16:3e:00:00:99")
    ((invariant, resources),) = await live.violations()
    assert (invariant, resources["instance"], resources["port"]) == ("zombie-interface", server.uuid, ghost_port)

    assert await live.one_turn(Key("instance", server.uuid)) == ["zombie-interface"]
    assert await live.violations() == []
    assert ghost_port not in {i.port_id for i in live.cloud.world.hypervisor.interfaces(instance_uuid=server.uuid)}


async def test_associations_frees_a_node_that_names_a_deleted_instance(live: Live) -> None:
    now = live.cloud.rt.now()
    gone = Instance(uuid="6a3f0c1e-0000-4000-8000-000000000004", name="gone", project_id=live.admin.project_id or "",
                    user_id=live.admin.user_id, flavor_id=live.id("baremetal"), image_id=live.id("cirros"),
                    vm_state=vm.DELETED, deleted=True, deleted_at=now, is_baremetal=True, created_at=now,
                    updated_at=now)
    node = live.id("node-2")
    async with live.cloud.store.begin() as uow:
        await uow.instances.add(gone)
        await uow.nodes.update(node, instance_uuid=gone.uuid)  # the delete never reached the node
    assert await live.violations() == [("association", {"node": node, "instance": gone.uuid})]

    assert await live.one_turn(Key("node", node)) == ["association"]
    assert await live.violations() == []
    assert (await live.cloud.baremetal.find_node(node)).instance_uuid is None  # type: ignore[union-attr]


async def test_a_failing_reconciliation_is_retried_with_back_off_not_dropped(live: Live) -> None:
    key = Key("node", live.id("node-1"))

    async def broken(_key: Key) -> None:
        raise RuntimeError("the database went away")

    live.loop.controller.reconcile = broken  # type: ignore[assignment,method-assign]
    live.loop.queue.add(key)
    assert await live.loop.turn(live.loop.queue.get_nowait() or key) is None
    assert live.loop.queue.get_nowait() is None  # not at once: backing off
    live.cloud.rt.clock = _Later(live.cloud.rt.clock, 1.5)
    assert live.loop.queue.get_nowait() == key


class _Later:
    def __init__(self, clock: object, seconds: float) -> None:
        self._clock, self._seconds = clock, seconds

    def now(self) -> float:
        return self._clock.now() + self._seconds  # type: ignore[attr-defined]


async def test_the_resync_reads_each_kind_a_slice_at_a_time_and_comes_round_again(
        live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tether.reconcile.runner.RESYNC_SLICE", 1)
    nodes = sorted([live.id("node-1"), live.id("node-2")])

    async def one_slice() -> set[Key]:
        await live.loop.resync_slice()
        queued = set()
        while (key := live.loop.queue.get_nowait()) is not None:
            queued.add(key)
            live.loop.queue.done(key)
        return queued

    slices = [{key.id for key in await one_slice() if key.kind == "node"} for _ in range(4)]
    # the third finds the end of the table, and the fourth starts over
    assert slices == [{nodes[0]}, {nodes[1]}, set(), {nodes[0]}]


async def test_news_on_the_bus_queues_the_keys_it_concerns_once_it_settles(live: Live) -> None:
    server = await live.boot("vm", "m1.tiny")
    (port,) = await live.cloud.network.list_ports(live.admin, device_id=server.uuid)
    while (earlier := live.loop.queue.get_nowait()) is not None:
        live.loop.queue.done(earlier)
    await live.cloud.network.delete_port(live.admin, port.id)  # neutron tells nova: network-vif-deleted
    assert live.loop.queue.get_nowait() is None  # acted on once the burst has settled, not at once
    live.cloud.rt.clock = _Later(live.cloud.rt.clock, SETTLE_SECONDS)
    queued = set()
    while (key := live.loop.queue.get_nowait()) is not None:
        queued.add(key)
        live.loop.queue.done(key)
    assert {Key("instance", server.uuid), Key("port", port.id)} <= queued
    await live.cloud.rt.drain()


async def test_a_burst_of_news_about_one_key_is_one_look_at_its_earliest(live: Live) -> None:
    queue, key = live.loop.queue, Key("instance", "6a3f0c1e-0000-4000-8000-000000000005")
    queue.add_after(key, 5.0)
    queue.add_after(key, 2.0)
    queue.add_after(key, 9.0)
    clock = live.cloud.rt.clock
    live.cloud.rt.clock = _Later(clock, 2.0)
    assert queue.get_nowait() == key
    queue.done(key)
    live.cloud.rt.clock = _Later(clock, 10.0)
    assert queue.get_nowait() is None  # the later adds were folded into the first
