"""Tear-down's own promises, each on a real bare-metal service (tests/baremetal_bench.py): a torn-down node
is powered off and wiped by a clean of its own; its allocation ends and its instance's release is
announced only when tear-down itself forgot them; a node that left ``deleting`` under the job is left
as it is; a BMC that fails puts the node loudly into ``error``.

The explorer's protection tests (tests/test_explore_protections.py) race tear-down against compute's
delete and judge the VIFs alone; tests/test_baremetal_provisioning.py follows a node through undeploy
but never with an allocation, an InstanceReleased listener, a node changed under its job, or a clean
that might be taken for the hardware's last. These pin them (the oracle of ``bench/mutations.py`` for
services/baremetal/teardown.py).
"""

from __future__ import annotations

from tests.baremetal_bench import ADMIN, Bench
from tether.domain.baremetal import Node
from tether.domain.baremetal_states import ACTIVE, AVAILABLE, ERROR, POWER_OFF, POWER_ON
from tether.domain.errors import baremetal as be
from tether.domain.events import InstanceReleased
from tether.drivers.hardware import FakeHardware
from tether.runtime.bus import MessageBus
from tether.services.baremetal.steps import BaremetalSteps, detach_every_listed_vif
from tether.services.baremetal.vifs import Vifs
from tether.store import repos
from tether.store.database import Database

INSTANCE = "11111111-2222-4333-8444-555555555555"


def listening_bench(database: Database, **options: object) -> tuple[Bench, list[InstanceReleased]]:
    """A bench whose store publishes on a bus, and the InstanceReleased news it carried."""
    bus = MessageBus()
    heard: list[InstanceReleased] = []
    bus.subscribe(InstanceReleased, heard.append)
    return Bench(database, bus=bus, **options), heard  # type: ignore[arg-type]


async def tear_down(bench: Bench, node: Node) -> Node:
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "deleted"))
    return await bench.node(node.uuid)


async def test_a_torn_down_node_is_powered_off_and_wiped_by_a_clean_of_its_own(database: Database) -> None:
    # New machines are clean at once and this deploy takes no time, so the hardware's last clean began
    # the very instant tear-down moves the node into cleaning: only a clean that resumes after a restart
    # may take such a clean for its own; tear-down's must wipe the deployed image again.
    hardware = FakeHardware(deploy_seconds=0, clean_seconds=5, new_machines_clean=True)
    bench, heard = listening_bench(database, hardware=hardware)
    ports = await bench.network_with_ports(1)
    node = await bench.deployed_node(ports, instance=INSTANCE)
    assert (node.provision_state, node.power_state) == (ACTIVE, POWER_ON)
    started = bench.rt.now()
    assert hardware.clean_started_at(node.uuid) == started

    final = await tear_down(bench, node)

    assert bench.transitions(node.uuid)[-3:] == [
        "active -> deleting (delete)", "deleting -> cleaning (clean)", "cleaning -> available (done)"]
    assert final.provision_state == AVAILABLE
    assert final.power_state == POWER_OFF == hardware.power_state(node.uuid)
    machine = hardware.machine(node.uuid)
    assert (machine.clean_started_at, machine.clean_done_at) == (started, started + 5)
    assert machine.deploy_started_at is None  # the image is gone
    assert bench.rt.now() == started + 5
    assert (final.instance_uuid, final.instance_info, final.allocation_uuid) == (None, {}, None)
    assert heard == [InstanceReleased(INSTANCE, node.uuid)]


async def test_tear_down_ends_the_nodes_allocation(database: Database) -> None:
    bench, heard = listening_bench(database)
    node = await bench.available_node()
    keep = await bench.available_node("n2")
    bm = bench.baremetal

    async def allocate_and_deploy() -> tuple[str, str]:
        allocation = await bm.create_allocation(ADMIN, resource_class="baremetal", candidate_nodes=[node.uuid])
        other = await bm.create_allocation(ADMIN, resource_class="baremetal", candidate_nodes=[keep.uuid])
        await bm.set_provision_state(ADMIN, node.uuid, "active")
        return allocation.uuid, other.uuid

    allocation, other = await bench.do(allocate_and_deploy(), "setup")
    deployed = await bench.node(node.uuid)
    assert (deployed.provision_state, deployed.allocation_uuid, deployed.instance_uuid) == (
        ACTIVE, allocation, allocation)

    final = await tear_down(bench, deployed)

    assert final.provision_state == AVAILABLE
    assert (final.allocation_uuid, final.instance_uuid) == (None, None)
    error = await bench.fails(bm.get_allocation(ADMIN, allocation))
    assert isinstance(error, be.AllocationNotFound)
    # ironic ends that node's allocation only
    assert (await bench.do(bm.get_allocation(ADMIN, other))).node_uuid == keep.uuid
    assert heard == [InstanceReleased(allocation, node.uuid)]


async def test_tear_down_of_a_node_without_an_instance_announces_no_release(database: Database) -> None:
    bench, heard = listening_bench(database)
    node = await bench.available_node()
    await bench.do(bench.baremetal.set_provision_state(ADMIN, node.uuid, "active"))

    final = await tear_down(bench, await bench.node(node.uuid))

    assert (final.provision_state, final.power_state) == (AVAILABLE, POWER_OFF)
    assert heard == []


async def test_a_node_changed_under_its_tear_down_is_left_as_it_was_left(database: Database) -> None:
    """Another party (a conductor taking the node over, an operator's repair) moved it out of deleting."""

    async def detach_then_lose_the_node(vifs: Vifs, node_uuid: str) -> None:
        await detach_every_listed_vif(vifs, node_uuid)
        async with vifs.store.begin() as conn:
            await repos.nodes.update(conn, node_uuid, provision_state=ERROR, last_error="taken over")

    bench, heard = listening_bench(database, steps=BaremetalSteps(detach_vifs_on_teardown=detach_then_lose_the_node))
    node = await bench.available_node()
    bm = bench.baremetal

    async def allocate_and_deploy() -> str:
        allocation = await bm.create_allocation(ADMIN, resource_class="baremetal")
        await bm.set_provision_state(ADMIN, node.uuid, "active")
        return allocation.uuid

    allocation = await bench.do(allocate_and_deploy(), "setup")
    cleaned_at = bench.hardware.clean_started_at(node.uuid)

    final = await tear_down(bench, await bench.node(node.uuid))

    # what the other party wrote stands, and the job changed nothing after it
    assert (final.provision_state, final.last_error) == (ERROR, "taken over")
    assert (final.instance_uuid, final.allocation_uuid) == (allocation, allocation)
    assert (await bench.do(bm.get_allocation(ADMIN, allocation))).node_uuid == node.uuid
    assert heard == []
    assert final.power_state == POWER_ON == bench.hardware.power_state(node.uuid)
    assert bench.hardware.clean_started_at(node.uuid) == cleaned_at
    assert bench.transitions(node.uuid)[-1] == "active -> deleting (delete)"
    assert f"node {node.uuid}: job stopped, the node changed under it" in [e.text for e in bench.rt.journal]


async def test_a_bmc_that_cannot_power_the_node_off_fails_the_tear_down(database: Database) -> None:
    bench = Bench(database)
    ports = await bench.network_with_ports(1)
    node = await bench.deployed_node(ports)
    cleaned_at = bench.hardware.clean_started_at(node.uuid)
    bench.hardware.fail(node.uuid, "power")

    final = await tear_down(bench, node)

    assert bench.transitions(node.uuid)[-2:] == ["active -> deleting (delete)", "deleting -> error (fail)"]
    assert (final.provision_state, final.target_provision_state) == (ERROR, None)
    assert final.last_error == "Failed to tear down: IPMI call failed: power."
    assert final.power_state == POWER_ON == bench.hardware.power_state(node.uuid)
    assert bench.hardware.clean_started_at(node.uuid) == cleaned_at  # no clean after a failure
    assert final.reservation is None
