"""The built-in scenarios, one or more per seed."""

from __future__ import annotations

from tether.domain import baremetal_states as bms
from tether.seeding import DemoShape
from tether.sim.scenarios import protections
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
    # The second boot comes after the race; only the delete races the port delete.
    timeline=(
        Timed(0.0, "user", _terminate_then_reboot, ("delete",)),
        Timed(1.0, "operator", lambda env: env.delete_ports_of("server1"), ("port-delete",)),
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
    timeline=(Timed(0.0, "user", _reuse_ports, ("boot", "delete")),),
    expect=_expect_reuse,
    bug="mac-kept-on-unbind",
    invariant="mac-conflict",
)


def _fleet(count: int) -> dict[str, object]:
    """The seed's stack: a group of bare-metal servers, one per free node."""
    server = {"type": "OS::Nova::Server",
              "properties": {"name": "bm-%index%", "flavor": "baremetal", "image": "cirros",
                             "networks": [{"network": "private"}]}}
    return {"heat_template_version": "2018-08-31",
            "resources": {"fleet": {"type": "OS::Heat::ResourceGroup",
                                    "properties": {"count": count, "resource_def": server}}}}


async def _failing_node(env: Env) -> None:
    env.break_hardware("node-1", "deploy")  # the reporter's BMC issues: one deploy fails


async def _create_then_replace(env: Env) -> None:
    await env.create_stack("fleet", _fleet(2))
    # the failed deploy's node is cleaned and free again before the user retries
    for node in ("node-1", "node-2"):
        await env.wait_node(node, (bms.AVAILABLE, bms.ACTIVE))
    await env.update_stack("fleet")


async def _expect_replaced(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("fleet") != "UPDATE_COMPLETE":
        unmet.append(f"the stack update should end UPDATE_COMPLETE, is {env.outcomes.get('fleet')}")
    servers = await env.cloud.compute.find_servers(env.ctx, all_projects=True, deleted=False)
    states = sorted(server.status for server in servers)
    if states != ["ACTIVE", "ACTIVE"]:
        unmet.append(f"both servers should be ACTIVE, are {states}")
    if len({server.node for server in servers}) != len(servers):
        unmet.append("each server should be on its own node")
    return unmet


STACK_REPLACE_FAILED_BAREMETAL_SERVER = Scenario(
    name="stack-replace-failed-baremetal-server",
    seed="001",
    summary="A stack of as many bare-metal servers as nodes; one deploy fails; `stack update` replaces it.",
    shape=DemoShape(nodes=2, hypervisors=1),
    prepare=_failing_node,
    timeline=(Timed(0.0, "user", _create_then_replace, ("stack-create", "stack-update")),),
    expect=_expect_replaced,
    bug="orphan-internal-ports",
    invariant="orphan-port",
)


async def _one_server_stack(env: Env) -> None:
    await env.create_stack("single", _fleet(1))
    members = await env.cloud.compute.find_servers(env.ctx, all_projects=True, deleted=False)
    env.names["bm-0"] = members[0].uuid


async def _expect_all_gone(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("single") != "DELETE_COMPLETE":
        unmet.append(f"the stack delete should end DELETE_COMPLETE, is {env.outcomes.get('single')}")
    if await env.cloud.compute.find_servers(env.ctx, all_projects=True, deleted=False):
        unmet.append("no server should be left")
    made = [port.id for port in await env.cloud.network.list_ports(env.ctx) if port.created_by == "orchestration"]
    if made:
        unmet.append(f"the stack's ports should be gone: {made}")
    return unmet


STACK_DELETE_RACES_SERVER_DELETE = Scenario(
    name="stack-delete-races-server-delete",
    seed="001",
    summary="A stack's bare-metal server is deleted behind its back while the stack is deleted.",
    shape=DemoShape(nodes=1, hypervisors=1),
    prepare=_one_server_stack,
    timeline=(Timed(0.0, "user", lambda env: env.delete_stack("single"), ("stack-delete",)),
              Timed(0.0, "operator", lambda env: env.delete_server("bm-0"), ("delete",))),
    expect=_expect_all_gone,
    tags=("coverage",),
)


# -- seed 003 -------------------------------------------------------------------------------


def _expect_failed_build(how: str, node_state: str | None) -> object:
    async def expect(env: Env) -> list[str]:
        unmet = []
        uuid = env.id("server1")
        if env.outcomes.get("server1") != "ERROR":
            unmet.append(f"server1 should end in ERROR, is {env.outcomes.get('server1')}")
            return unmet
        # what GET /servers/{id} shows; its fault is there because the server is in ERROR
        record = await env.cloud.compute.server_record(env.ctx, uuid)
        instance, fault = record.instance, record.fault
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
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1"), ("boot",)),
              Timed(0.0, "operator", _undeploy_when_waiting, ("node-undeploy",))),
    expect=_expect_failed_build("torn down", bms.AVAILABLE),  # type: ignore[arg-type]
    bug="stuck-build-on-node-teardown",
    invariant="stuck-transient",
)

NODE_DELETED_DURING_BUILD = Scenario(
    name="node-deleted-during-build",
    seed="003",
    summary="The operator puts the node in maintenance and deletes it while the deploy sits in wait call-back.",
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1"), ("boot",)),
              Timed(0.0, "operator", _delete_node_when_waiting, ("node-maintenance", "node-delete"))),
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
    timeline=(Timed(0.0, "user", lambda env: env.boot("server1"), ("boot",)),
              Timed(0.0, "user-2", _delete_when_waiting, ("delete",))),
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
    record = await env.cloud.compute.server_record(env.ctx, env.id("myvm"))
    # The record shows the info cache of any server but a building one; myvm was booted and
    # waited for before the race, so a BUILD here would make the cache check below vacuous.
    if record.instance.status == "BUILD":
        unmet.append("myvm should not be building again: its record hides the info cache")
    cached = {vif.port_id for vif in record.vifs}
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
    timeline=(Timed(0.0, "user", lambda env: env.attach_port("myvm", "myport"), ("attach",)),
              Timed(4.0, "user-2", lambda env: env.delete_port("myport"), ("port-delete",))),
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
    timeline=(Timed(0.0, "user", lambda env: env.attach_port("myvm", "myport"), ("attach",)),
              Timed(4.0, "user-2", lambda env: env.delete_port("myport"), ("port-delete",))),
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
    timeline=(Timed(0.0, "user", lambda env: env.delete_port("myport"), ("port-delete",)),
              Timed(1.0, "compute", lambda env: env.refresh_cache("myvm"), ("cache-refresh",))),
    faults=("network.port_delete.before_notify=sleep:4*1",),
    expect=_expect_no_zombie,
    bug="zombie-interface-on-attach-race",
    invariant="zombie-interface",
)


# -- pairs and triples: every two operations that share an instance, port or node ------------
# (``operations.required_pairs``); none of them reproduces a seed, all of them must pass.


async def _vm_with_two_ports(env: Env) -> None:
    """A VM with port-a attached and port-b free."""
    await env.boot("myvm", flavor="m1.small")
    await env.create_port("port-a")
    await env.create_port("port-b")
    await env.attach_port("myvm", "port-a")


async def _expect_guest_matches_ports(env: Env) -> list[str]:
    """The guest's devices are exactly the ports bound to the server (none, once it is gone)."""
    uuid = env.id("myvm")
    plugged = {device.port_id for device in env.cloud.world.hypervisor.interfaces(instance_uuid=uuid)}
    live = set(await _ports_of(env, "myvm"))
    if plugged != live:
        return [f"guest devices {sorted(plugged)} differ from the server's ports {sorted(live)}"]
    return []


INTERFACE_RACES = Scenario(
    name="interface-attach-detach-port-delete",
    seed="004",
    summary="On one VM: attach port-b, detach port-a, and delete port-a, all at once.",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_with_two_ports,
    timeline=(Timed(0.0, "user", lambda env: env.attach_port("myvm", "port-b"), ("attach",)),
              Timed(0.0, "user-2", lambda env: env.detach_port("myvm", "port-a"), ("detach",)),
              Timed(0.0, "operator", lambda env: env.delete_port("port-a"), ("port-delete",))),
    expect=_expect_guest_matches_ports,
    tags=("coverage",),
)


async def _expect_server_gone(env: Env) -> list[str]:
    unmet = await _expect_guest_matches_ports(env)
    if env.outcomes.get("myvm") != "DELETED":
        unmet.append(f"myvm should be deleted, is {env.outcomes.get('myvm')}")
    return unmet


DELETE_RACES_INTERFACES = Scenario(
    name="delete-races-interface-attach-detach",
    seed="004",
    summary="A VM is deleted while port-b is attached to it and port-a detached from it.",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_vm_with_two_ports,
    timeline=(Timed(0.0, "user", lambda env: env.delete_server("myvm"), ("delete",)),
              Timed(0.0, "user-2", lambda env: env.attach_port("myvm", "port-b"), ("attach",)),
              Timed(0.0, "user-3", lambda env: env.detach_port("myvm", "port-a"), ("detach",))),
    expect=_expect_server_gone,
    tags=("coverage",),
)


async def _two_ports(env: Env) -> None:
    await env.create_port("port-a")
    await env.create_port("port-b")


async def _when_booting(env: Env, then: str) -> None:
    if await env.wait_known("myvm"):
        if then == "attach":
            await env.attach_port("myvm", "port-b")
        else:
            await env.detach_port("myvm", "port-a")


BOOT_RACES_INTERFACES = Scenario(
    name="boot-races-interface-attach-detach",
    seed="004",
    summary="A VM boots on port-a while port-b is attached to it and port-a detached from it.",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_two_ports,
    timeline=(Timed(0.0, "user", lambda env: env.boot("myvm", flavor="m1.small", ports=("port-a",)), ("boot",)),
              Timed(0.0, "user-2", lambda env: _when_booting(env, "attach"), ("attach",)),
              Timed(0.0, "user-3", lambda env: _when_booting(env, "detach"), ("detach",))),
    expect=_expect_guest_matches_ports,
    tags=("coverage",),
)


PORT_DELETED_DURING_BOOT = Scenario(
    name="port-deleted-during-boot",
    seed="001",
    summary="A VM boots on a pre-created port while that port is deleted.",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_two_ports,
    timeline=(Timed(0.0, "user", lambda env: env.boot("myvm", flavor="m1.small", ports=("port-a",)), ("boot",)),
              Timed(0.0, "operator", lambda env: env.delete_port("port-a"), ("port-delete",))),
    expect=_expect_guest_matches_ports,
    tags=("coverage",),
)


async def _maintenance_window(env: Env) -> None:
    await env.set_maintenance("node-1", True)
    await env.set_maintenance("node-1", False)


async def _expect_node_released(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("server1") != "DELETED":
        unmet.append(f"server1 should be deleted, is {env.outcomes.get('server1')}")
    if await env.cloud.network.list_ports(env.ctx, device_owner="compute:nova"):
        unmet.append("server1's ports should be deleted")
    if await env.node_state("node-1") != "deleted":
        unmet += await _node_clean(env, "node-1", set())
    return unmet


DELETE_RACES_MAINTENANCE_AND_NODE_DELETE = Scenario(
    name="delete-races-maintenance-and-node-delete",
    seed="003",
    summary="A bare-metal server is deleted while one operator toggles its node's maintenance "
            "and another deletes the node.",
    prepare=lambda env: env.boot("server1"),
    timeline=(Timed(0.0, "user", lambda env: env.delete_server("server1"), ("delete",)),
              Timed(0.0, "operator", _maintenance_window, ("node-maintenance",)),
              Timed(0.0, "operator-2", lambda env: env.delete_node("node-1"), ("node-maintenance", "node-delete"))),
    expect=_expect_node_released,
    tags=("coverage",),
)

DELETE_RACES_NODE_DELETE = Scenario(
    name="delete-races-undeploy-and-node-delete",
    seed="003",
    summary="A bare-metal server is deleted while the operator undeploys its node and deletes the node.",
    prepare=lambda env: env.boot("server1"),
    timeline=(Timed(0.0, "user", lambda env: env.delete_server("server1"), ("delete",)),
              Timed(0.0, "operator", lambda env: env.undeploy("node-1"), ("node-undeploy",)),
              Timed(0.0, "operator-2", lambda env: env.delete_node("node-1"), ("node-maintenance", "node-delete"))),
    expect=_expect_node_released,
    tags=("coverage",),
)


# -- server groups (issue 13) -------------------------------------------------------------------


async def _anti_affinity_group(env: Env) -> None:
    # A bigger VM outside the group tilts the spread: without the policy both members would pick the other host.
    await env.boot("filler", flavor="m1.small")
    group = await env.cloud.compute.create_server_group(env.ctx, "spread", "anti-affinity")
    env.names["spread"] = group.id


async def _expect_members_apart(env: Env) -> list[str]:
    unmet = []
    hosts = {}
    for name in ("vm-a", "vm-b"):
        if env.outcomes.get(name) != "ACTIVE":
            unmet.append(f"{name} should be ACTIVE (two hypervisors fit two members), is {env.outcomes.get(name)}")
            continue
        record = await env.cloud.compute.server_record(env.ctx, env.id(name))
        hosts[name] = record.instance.host
    if len(hosts) == 2 and len(set(hosts.values())) == 1:
        unmet.append(f"the anti-affinity members vm-a and vm-b both run on {hosts['vm-a']}")
    return unmet


ANTI_AFFINITY_BOOT_RACES_BOOT = Scenario(
    name="anti-affinity-boot-races-boot",
    seed="013",
    summary="Two VMs of one anti-affinity server group boot at once on two hypervisors: they must land apart.",
    shape=DemoShape(nodes=0, hypervisors=2),
    prepare=_anti_affinity_group,
    timeline=(Timed(0.0, "user", lambda env: env.boot("vm-a", flavor="m1.tiny", group="spread"), ("boot",)),
              Timed(0.0, "user-2", lambda env: env.boot("vm-b", flavor="m1.tiny", group="spread"), ("boot",))),
    expect=_expect_members_apart,
    tags=("coverage",),
)


# -- server actions (issue 13): what a rebuild or a resize revert races -----------------------


async def _expect_rebuilt_and_node_clean(env: Env) -> list[str]:
    unmet = []
    if env.outcomes.get("server1") != "ACTIVE":
        unmet.append(f"server1 should be ACTIVE after its rebuild, is {env.outcomes.get('server1')}")
    unmet += await _node_clean(env, "node-1", set(await _ports_of(env, "server1")))
    return unmet


REBUILD_RACES_PORT_DELETE = Scenario(
    name="rebuild-races-port-delete",
    seed="000",
    summary="A bare-metal server is rebuilt (its node redeployed, its VIFs kept) while its port is deleted.",
    prepare=lambda env: env.boot("server1"),
    timeline=(Timed(0.0, "user", lambda env: env.rebuild("server1"), ("rebuild",)),
              Timed(0.0, "operator", lambda env: env.delete_ports_of("server1"), ("port-delete",))),
    expect=_expect_rebuilt_and_node_clean,
    tags=("coverage",),
)


async def _resized_vm_with_port(env: Env) -> None:
    """myvm on m1.small, resized to m1.tiny and waiting in VERIFY_RESIZE, with port-a attached; port-b free."""
    await env.boot("myvm", flavor="m1.small")
    await env.create_port("port-a")
    await env.create_port("port-b")
    await env.attach_port("myvm", "port-a")
    await env.resize("myvm", "m1.tiny")


async def _expect_reverted_and_guest_matches(env: Env) -> list[str]:
    unmet = await _expect_guest_matches_ports(env)
    found = await env.cloud.compute.find_servers(env.ctx, all_projects=True, uuid=env.id("myvm"))
    if not found or (found[0].status, found[0].flavor_id) != ("ACTIVE", env.id("m1.small")):
        state = (found[0].status, found[0].flavor_id) if found else "gone"
        unmet.append(f"myvm should be ACTIVE on m1.small again, is {state}")
    return unmet


async def _attach_when_reverted(env: Env) -> None:
    """A user who attaches as soon as the server is ACTIVE again (nova refuses an attach in VERIFY_RESIZE)."""
    await env.attach_port("myvm", "port-b")
    if env.outcomes.get("attach port-b to myvm") != "ok":
        await env.wait_settled("myvm")
        await env.attach_port("myvm", "port-b")


RESIZE_REVERT_RACES_INTERFACES = Scenario(
    name="resize-revert-races-interface-attach",
    seed="004",
    summary="A resize is reverted (the guest plugged again from its network info) while port-b is attached "
            "and the attached port-a is deleted.",
    shape=DemoShape(nodes=0, hypervisors=1),
    prepare=_resized_vm_with_port,
    timeline=(Timed(0.0, "user", lambda env: env.revert_resize("myvm"), ("resize-revert",)),
              Timed(0.0, "user-2", _attach_when_reverted, ("attach",)),
              Timed(0.0, "operator", lambda env: env.delete_port("port-a"), ("port-delete",))),
    expect=_expect_reverted_and_guest_matches,
    tags=("coverage",),
)


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        TERMINATE_RACES_PORT_DELETE,
        REUSE_PRECREATED_PORT,
        STACK_REPLACE_FAILED_BAREMETAL_SERVER,
        STACK_DELETE_RACES_SERVER_DELETE,
        NODE_TORN_DOWN_DURING_BUILD,
        NODE_DELETED_DURING_BUILD,
        USER_DELETE_DURING_BUILD,
        PORT_DELETED_DURING_ATTACH,
        PORT_DELETED_BEFORE_CACHE,
        PORT_DELETED_CACHE_REFRESH_FIRST,
        INTERFACE_RACES,
        DELETE_RACES_INTERFACES,
        BOOT_RACES_INTERFACES,
        PORT_DELETED_DURING_BOOT,
        DELETE_RACES_MAINTENANCE_AND_NODE_DELETE,
        DELETE_RACES_NODE_DELETE,
        ANTI_AFFINITY_BOOT_RACES_BOOT,
        REBUILD_RACES_PORT_DELETE,
        RESIZE_REVERT_RACES_INTERFACES,
        *protections.each_layer_alone(TERMINATE_RACES_PORT_DELETE),
        *protections.PLANTED,
    )
}
