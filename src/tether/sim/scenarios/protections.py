"""Every protection shown alone (issue 17 item 4).

Where two layers guard one invariant, a scenario switches one off
(``Scenario.protections_off``, a fault rule ``NAME=off``) and shows the other
holds without it. And each reconciler has a scenario that plants its
disagreement out of band (a row changed behind a service's back, an event
lost, a driver that drifted) and declares the mend expected: explored
exhaustively, a reconciler that does nothing leaves its violation and turns
the scenario red. On a correct build nothing else ever needs them.
"""

from __future__ import annotations

from dataclasses import replace

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain import replies as rp
from tether.seeding import DemoShape
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import ExpectedMend, Scenario, Timed

OUT_OF_BAND = ("out-of-band",)

# -- two layers, one invariant: a node's VIFs are detached from the node's own list --------------

COMPUTE_DETACH_ALONE = "terminate-races-port-delete-compute-detach-alone"
TEARDOWN_DETACH_ALONE = "terminate-races-port-delete-teardown-detach-alone"


def each_layer_alone(race: Scenario) -> tuple[Scenario, Scenario]:
    """Seed 000's race (``race``) twice: with the node's tear-down leaving its VIFs, and with compute's
    delete detaching none; each time the other layer must hold alone."""
    common = {"bug": None, "invariant": None, "tags": ("protection",)}
    return (
        replace(race, name=COMPUTE_DETACH_ALONE, protections_off=("baremetal.teardown.detach_vifs",),
                summary="Seed 000's race with the node's own tear-down leaving its VIFs: compute's detach must "
                        "hold alone.", **common),  # type: ignore[arg-type]
        replace(race, name=TEARDOWN_DETACH_ALONE, protections_off=("compute.delete.detach_node_vifs",),
                summary="Seed 000's race with compute's delete detaching no VIF: the node's tear-down must hold "
                        "alone.", **common),  # type: ignore[arg-type]
    )


# -- each reconciler, its disagreement planted out of band ---------------------------------------


async def _nothing(env: Env) -> list[str]:
    return []


async def _vm_with_port_a(env: Env) -> None:
    await env.boot("myvm", flavor="m1.small")
    await env.create_port("port-a")
    await env.attach_port("myvm", "port-a")


async def _guest_device_lost(env: Env) -> None:
    """The hypervisor drifted: it lost the guest device of port-a, and told nobody."""
    env.call(rp.OUT_OF_BAND, server=env.id("myvm"), port=env.id("port-a"))
    hypervisor = env.cloud.world.hypervisor
    for device in hypervisor.interfaces(instance_uuid=env.id("myvm")):
        if device.port_id == env.id("port-a"):
            hypervisor.unplug(device.host, device.instance_uuid, device.port_id)
    env.step("the hypervisor lost port-a's guest device")


GUEST_DEVICE_LOST = Scenario(
    name="guest-device-lost-out-of-band",
    seed="004",
    summary="The hypervisor loses a VM's guest device behind compute's back (ZombieInterfaces replugs it).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_with_port_a,
    timeline=(Timed(0.0, "hypervisor", _guest_device_lost, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("zombie-interface", "the driver drifted: a device the server lists is gone"),),
    tags=OUT_OF_BAND,
)


async def _cache_entry_lost(env: Env) -> None:
    """A row changed behind compute's back: myvm's network info forgets port-a."""
    env.call(rp.OUT_OF_BAND, server=env.id("myvm"), port=env.id("port-a"))
    async with env.cloud.store.begin() as uow:
        await uow.instance_vifs.delete_where(instance_uuid=env.id("myvm"), port_id=env.id("port-a"))
    env.step("myvm's network info lost port-a behind compute's back")


CACHE_ENTRY_LOST = Scenario(
    name="cache-entry-lost-out-of-band",
    seed="004",
    summary="A VM's network info loses a port bound to it behind compute's back (OrphanPorts mends it).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_with_port_a,
    timeline=(Timed(0.0, "database", _cache_entry_lost, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("orphan-port", "a row changed out of band: the port names a server that does "
                                                "not list it"),),
    tags=OUT_OF_BAND,
)


async def _port_row_lost(env: Env) -> None:
    """The port-deleted event lost: server1's port row goes without network telling compute or ironic."""
    async with env.cloud.store.begin() as uow:
        ports = await uow.ports.find(device_id=env.id("server1"))
        for port in ports:
            env.call(rp.OUT_OF_BAND, server=env.id("server1"), port=port.id)
            await uow.ip_allocations.delete_where(port_id=port.id)
            await uow.ports.delete(port.id)
    env.step("server1's port row deleted, and its event lost")


PORT_DELETED_EVENT_LOST = Scenario(
    name="port-deleted-event-lost",
    seed="000",
    summary="A bare-metal server's port row is deleted and the event lost: its node keeps the VIF "
            "(StaleVifs mends it).",
    prepare=lambda env: env.boot("server1"),
    timeline=(Timed(0.0, "database", _port_row_lost, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("stale-vif", "the port-deleted event was lost: the node lists a VIF whose port "
                                              "is gone"),),
    tags=OUT_OF_BAND,
)


async def _port_and_freed_node(env: Env) -> None:
    await env.create_port("port-a")


async def _mac_drifted(env: Env) -> None:
    """A row changed behind network's back: port-a takes node-1's NIC MAC, though it is no VIF there."""
    env.call(rp.OUT_OF_BAND, port=env.id("port-a"))
    async with env.cloud.store.begin() as uow:
        (nic, *_) = await uow.node_ports.find(node_uuid=env.id("node-1"))
        await uow.ports.update(env.id("port-a"), mac_address=nic.address)
    env.step("port-a's MAC set to node-1's NIC's behind network's back")


NIC_MAC_DRIFTED = Scenario(
    name="nic-mac-kept-out-of-band",
    seed="001",
    summary="An unbound port is given a bare-metal NIC's MAC behind network's back (NicMacs gives it a fresh one).",
    prepare=_port_and_freed_node,
    timeline=(Timed(0.0, "database", _mac_drifted, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("mac-conflict", "a row changed out of band: a released port holds a NIC's MAC"),),
    tags=OUT_OF_BAND,
)


async def _booted_and_deleted(env: Env) -> None:
    await env.boot("server1")
    await env.delete_server("server1")
    await env.wait_node("node-1", bms.AVAILABLE)


async def _node_names_the_deleted(env: Env) -> None:
    """A row changed behind ironic's back: the free node names the deleted server again."""
    env.call(rp.OUT_OF_BAND, server=env.id("server1"), node=env.id("node-1"))
    async with env.cloud.store.begin() as uow:
        await uow.nodes.update(env.id("node-1"), instance_uuid=env.id("server1"))
    env.step("node-1 names the deleted server1 again")


NODE_NAMES_DELETED_SERVER = Scenario(
    name="node-names-deleted-server-out-of-band",
    seed="003",
    summary="A free node is made to name a deleted server behind ironic's back (Associations releases it).",
    prepare=_booted_and_deleted,
    timeline=(Timed(0.0, "database", _node_names_the_deleted, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("association", "a row changed out of band: the node names a server that is "
                                                "gone"),),
    tags=OUT_OF_BAND,
)


async def _action_abandoned(env: Env) -> None:
    """A compute that died mid-action without its intent: myvm is left rebooting, past the deadline."""
    env.call(rp.OUT_OF_BAND, server=env.id("myvm"))
    async with env.cloud.store.begin() as uow:
        await uow.instances.update(env.id("myvm"), task_state=vm.REBOOTING, deadline=env.cloud.rt.now() - 1.0)
    env.step("myvm left rebooting past its deadline, behind compute's back")


ACTION_PAST_DEADLINE = Scenario(
    name="action-past-deadline-out-of-band",
    seed="003",
    summary="A VM is left in a server action past its deadline behind compute's back (StuckTransients ends it).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=lambda env: env.boot("myvm", flavor="m1.small"),
    timeline=(Timed(0.0, "database", _action_abandoned, OUT_OF_BAND),),
    expect=_nothing,
    expected_mends=(ExpectedMend("stuck-transient", "a row changed out of band: nothing drives the action any "
                                                    "more"),),
    tags=OUT_OF_BAND,
)

PLANTED = (GUEST_DEVICE_LOST, CACHE_ENTRY_LOST, PORT_DELETED_EVENT_LOST, NIC_MAC_DRIFTED,
           NODE_NAMES_DELETED_SERVER, ACTION_PAST_DEADLINE)
# The reconciler each planted scenario exists for (by the invariant it mends).
RECONCILER_OF = {scenario.name: scenario.expected_mends[0].invariant for scenario in PLANTED}
