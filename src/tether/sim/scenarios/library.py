"""The built-in scenarios, one or more per seed."""

from __future__ import annotations

from tether.domain import baremetal_states as bms
from tether.services.seeding import DemoShape
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import Scenario, Timed


async def _node_clean(env: Env, node: str, expected_vifs: set[str]) -> list[str]:
    unmet = []
    vifs = set(await env.cloud.baremetal.vif_list(env.ctx, env.id(node)))
    if vifs != expected_vifs:
        unmet.append(f"node {node} lists VIFs {sorted(vifs)}, expected {sorted(expected_vifs)}")
    return unmet


async def _ports_of(env: Env, server: str) -> list[str]:
    return [port.id for port in await env.cloud.network.list_ports(env.ctx, device_id=env.id(server))]


# -- seed 000 -------------------------------------------------------------------------------


async def _terminate_then_reboot(env: Env) -> None:
    await env.delete_server("server1")
    await env.wait_node("node-1", bms.AVAILABLE)
    await env.boot("server2")


async def _expect_second_boot(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("server2") != "ACTIVE":
        unmet.append(f"server2 should be ACTIVE on the freed node, is {env.outcomes.get('server2')}")
    unmet += await _node_clean(env, "node-1", set(await _ports_of(env, "server2")))
    return unmet


TERMINATE_RACES_PORT_DELETE = Scenario(
    name="terminate-races-port-delete",
    seed="000",
    summary="A bare-metal instance is deleted while its port is deleted; a second instance then boots on the node.",
    prepare=lambda env: env.boot("server1"),
    timeline=(
        Timed(0.0, "user", _terminate_then_reboot),
        Timed(1.0, "operator", lambda env: env.delete_ports_of("server1")),
    ),
    faults=("compute.delete.before_unplug=sleep:3*1",),
    expect=_expect_second_boot,
    bug="stale-vif-on-terminate",
    invariant="stale-vif",
)


# -- seed 001 -------------------------------------------------------------------------------


async def _precreated_ports(env: Env) -> None:
    await env.create_port("test-port1")
    await env.create_port("test-port2")


async def _reuse_ports(env: Env) -> None:
    await env.boot("test-server", ports=("test-port1",))
    await env.delete_server("test-server")
    await env.wait_node("node-1", bms.AVAILABLE)
    await env.boot("test-server-2", ports=("test-port2",))


async def _expect_reuse(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("test-server-2") != "ACTIVE":
        unmet.append(f"the second server should be ACTIVE, is {env.outcomes.get('test-server-2')}")
    port1 = await env.cloud.network.find_port(env.id("test-port1"))
    if port1 is None:
        unmet.append("test-port1 was deleted, but the user brought it")
    elif port1.is_bound or port1.device_id:
        unmet.append("test-port1 is still bound after its server was deleted")
    return unmet


REUSE_PRECREATED_PORT = Scenario(
    name="reuse-precreated-port-on-baremetal",
    seed="001",
    summary="Two pre-created ports; a bare-metal server on the first is deleted, then one on the second, same node.",
    prepare=_precreated_ports,
    timeline=(Timed(0.0, "user", _reuse_ports),),
    expect=_expect_reuse,
    bug="mac-kept-on-unbind",
    invariant="mac-conflict",
)


# -- seed 003 -------------------------------------------------------------------------------


def _expect_failed_build(how: str, node_state: str | None) -> object:
    async def expect(env: Env) -> list[str]:
        unmet = []
        uuid = env.id("server1")
        if env.outcomes.get("server1") != "ERROR":
            unmet.append(f"server1 should end in ERROR, is {env.outcomes.get('server1')}")
            return unmet
        instance = await env.cloud.compute.get_server(env.ctx, uuid)
        fault = await env.cloud.compute.server_fault(env.ctx, uuid)
        prefix = f"Failed to provision instance {uuid}:"
        if instance.task_state is not None:
            unmet.append(f"task_state should be none, is {instance.task_state}")
        if fault is None or not fault.message.startswith(prefix) or how not in fault.message:
            unmet.append(f"fault should start {prefix!r} and say the node was {how}: {fault and fault.message}")
        if instance.host or instance.node:
            unmet.append("host and node should be cleared")
        if await _ports_of(env, "server1"):
            unmet.append("the build's ports should be cleaned up")
        if node_state is not None:
            state = await env.node_state("node-1")
            if state != node_state:
                unmet.append(f"node-1 should end {node_state}, is {state}")
            unmet += await _node_clean(env, "node-1", set())
        return unmet

    return expect


async def _undeploy_when_waiting(env: Env) -> None:
    await env.wait_node("node-1", bms.DEPLOYWAIT)
    await env.undeploy("node-1")


async def _delete_node_when_waiting(env: Env) -> None:
    await env.wait_node("node-1", bms.DEPLOYWAIT)
    await env.delete_node("node-1")


NODE_TORN_DOWN_DURING_BUILD = Scenario(
    name="node-torn-down-during-build",
    seed="003",
    summary="The operator undeploys the node while the instance's deploy sits in wait call-back.",
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1")),
              Timed(0.0, "operator", _undeploy_when_waiting)),
    expect=_expect_failed_build("torn down", bms.AVAILABLE),  # type: ignore[arg-type]
    bug="stuck-build-on-node-teardown",
    invariant="stuck-transient",
)

NODE_DELETED_DURING_BUILD = Scenario(
    name="node-deleted-during-build",
    seed="003",
    summary="The operator puts the node in maintenance and deletes it while the deploy sits in wait call-back.",
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1")),
              Timed(0.0, "operator", _delete_node_when_waiting)),
    expect=_expect_failed_build("deleted", None),  # type: ignore[arg-type]
    bug="stuck-build-on-node-teardown",
    invariant="stuck-transient",
)


async def _delete_when_waiting(env: Env) -> None:
    await env.wait_node("node-1", bms.DEPLOYWAIT)
    await env.delete_server("server1")


async def _expect_deleted(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("server1") != "DELETED":
        unmet.append(f"server1 should be deleted, not {env.outcomes.get('server1')}")
    await env.wait_node("node-1", bms.AVAILABLE)
    state = await env.node_state("node-1")
    if state != bms.AVAILABLE:
        unmet.append(f"node-1 should end available, is {state}")
    unmet += await _node_clean(env, "node-1", set())
    if await env.cloud.network.list_ports(env.ctx, device_owner="compute:nova"):
        unmet.append("the build's ports should be deleted")
    return unmet


USER_DELETE_DURING_BUILD = Scenario(
    name="user-delete-during-build",
    seed="003",
    summary="The user deletes the instance during its bare-metal deploy: a delete, not a failure.",
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1")),
              Timed(0.0, "user-2", _delete_when_waiting)),
    expect=_expect_deleted,
)


# -- seed 004 -------------------------------------------------------------------------------


async def _vm_and_port(env: Env) -> None:
    await env.boot("myvm", flavor="m1.small")
    await env.create_port("myport")


async def _vm_with_attached_port(env: Env) -> None:
    await _vm_and_port(env)
    await env.attach_port("myvm", "myport")


async def _expect_no_zombie(env: Env) -> list[str]:
    unmet = []
    port_id = env.id("myport")
    devices = env.cloud.world.hypervisor.interfaces(instance_uuid=env.id("myvm"))
    if any(device.port_id == port_id for device in devices):
        unmet.append(f"the guest still has a device for deleted port {port_id}")
    cached = {vif.port_id for vif in await env.cloud.compute.server_vifs(env.ctx, env.id("myvm"))}
    if port_id in cached:
        unmet.append("the info cache still lists the deleted port")
    live = set(await _ports_of(env, "myvm"))
    plugged = {device.port_id for device in devices}
    if plugged != live:
        unmet.append(f"guest devices {sorted(plugged)} differ from the server's ports {sorted(live)}")
    return unmet


PORT_DELETED_DURING_ATTACH = Scenario(
    name="port-deleted-during-attach",
    seed="004",
    summary="`server add port` is held before the driver attach while `port delete` runs (case A).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_and_port,
    timeline=(Timed(0.0, "user", lambda env: env.attach_port("myvm", "myport")),
              Timed(4.0, "user-2", lambda env: env.delete_port("myport"))),
    faults=("compute.attach_interface.before_driver_attach=sleep:8*1",),
    expect=_expect_no_zombie,
    bug="zombie-interface-on-attach-race",
    invariant="zombie-interface",
)

PORT_DELETED_BEFORE_CACHE = Scenario(
    name="port-deleted-during-attach-event-first",
    seed="004",
    summary="The port-deleted event arrives before the info cache holds the port being attached (case B).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_and_port,
    timeline=(Timed(0.0, "user", lambda env: env.attach_port("myvm", "myport")),
              Timed(4.0, "user-2", lambda env: env.delete_port("myport"))),
    faults=("compute.attach_interface.before_cache_update=sleep:8*1",),
    expect=_expect_no_zombie,
    bug="zombie-interface-on-attach-race",
    invariant="zombie-interface",
)

PORT_DELETED_CACHE_REFRESH_FIRST = Scenario(
    name="port-deleted-cache-refresh-first",
    seed="004",
    summary="A cache refresh drops the deleted port before the port-deleted event is processed (case C).",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_with_attached_port,
    timeline=(Timed(0.0, "user", lambda env: env.delete_port("myport")),
              Timed(1.0, "compute", lambda env: env.refresh_cache("myvm"))),
    faults=("network.port_delete.before_notify=sleep:4*1",),
    expect=_expect_no_zombie,
    bug="zombie-interface-on-attach-race",
    invariant="zombie-interface",
)


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        TERMINATE_RACES_PORT_DELETE,
        REUSE_PRECREATED_PORT,
        NODE_TORN_DOWN_DURING_BUILD,
        NODE_DELETED_DURING_BUILD,
        USER_DELETE_DURING_BUILD,
        PORT_DELETED_DURING_ATTACH,
        PORT_DELETED_BEFORE_CACHE,
        PORT_DELETED_CACHE_REFRESH_FIRST,
    )
}
