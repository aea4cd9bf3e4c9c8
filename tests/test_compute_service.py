"""The compute service driven the way a user drives it: through its operations, on a seeded cloud.

Each test builds a demo cloud on the ``database`` fixture (SQLite and a real
PostgreSQL) under the deterministic scheduler with virtual time, calls the
service with a RequestContext like the API would, and ends with every
invariant of the design holding.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from tether.audit.local import collect
from tether.cloud import Cloud, World
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.events import GuestDevicePlugged
from tether.domain.ids import new_uuid
from tether.domain.invariants import check_all
from tether.domain.network import CREATED_BY_COMPUTE, Port
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.clock import VirtualClock
from tether.runtime.faults import FaultPlan
from tether.runtime.runtime import Runtime
from tether.seeding import DemoShape, seed_demo_cloud, wait_for_nodes
from tether.services.context import RequestContext
from tether.sim.scheduler import Scheduler, scheduled_runtime
from tether.store import intents, repos

T = TypeVar("T")

SHAPE = DemoShape(nodes=2, nics_per_node=1, hypervisors=2)
TINY, BAREMETAL = "1", "3"


@dataclass
class Lab:
    cloud: Cloud
    admin: RequestContext
    demo: RequestContext
    names: dict[str, str]
    plugged: list[str] = field(default_factory=list)  # every port the hypervisor was ever asked to plug

    @property
    def rt(self) -> Runtime:
        return self.cloud.rt

    @property
    def compute(self) -> Any:
        return self.cloud.compute

    @property
    def network(self) -> Any:
        return self.cloud.network

    @property
    def baremetal(self) -> Any:
        return self.cloud.baremetal

    @property
    def hypervisor(self) -> FakeHypervisor:
        return self.cloud.world.hypervisor

    @property
    def net(self) -> str:
        return self.names["private"]

    @property
    def image(self) -> str:
        return self.names["cirros"]

    async def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` as an actor until it, and all it started, is done; return its value.

        Background work that fails (a build's own failure is not one: it ends
        in ERROR) fails the test.
        """
        scheduler = self.rt.executor.scheduler
        assert scheduler is not None
        first = len(scheduler.actors)
        actor = scheduler.spawn(coro, "test")  # type: ignore[arg-type]
        await scheduler.run()
        failed = [f"{a.name}: {a.error!r}" for a in scheduler.actors[first:] if a is not actor and a.error]
        assert failed == [], failed
        if actor.error is not None:
            raise actor.error
        return actor.result  # type: ignore[no-any-return]

    # -- what a user does, each call a request of its own ------------------------------

    async def port(self, name: str, ctx: RequestContext | None = None) -> Port:
        return await self.network.create_port((ctx or self.demo).fresh(), network_id=self.net, name=name)

    async def boot(
        self, name: str, flavor: str = TINY, networks: Any = None, ctx: RequestContext | None = None
    ) -> Instance:
        """Create a server; its build runs in the background, so ``run`` returns once the build has ended."""
        return await self.compute.create_server(
            (ctx or self.demo).fresh(), name=name, flavor_id=flavor, image_id=self.image,
            networks=networks if networks is not None else [{"uuid": self.net}])

    async def server(self, uuid: str) -> Instance:
        return (await self.compute.server_record(self.admin.fresh(), uuid)).instance

    async def cached(self, uuid: str) -> list[str]:
        """The ports in the server's info cache, as its owner's GET /servers/{id} shows them (any server but a
        building one, whose addresses nova hides)."""
        return [entry.port_id for entry in (await self.compute.server_record(self.demo.fresh(), uuid)).vifs]

    async def ports_of(self, uuid: str) -> list[Port]:
        return await self.network.list_ports(self.admin.fresh(), device_id=uuid)

    async def node_of(self, uuid: str) -> Any:
        (node,) = await self.baremetal.list_nodes(self.admin.fresh(), instance_uuid=uuid)
        return node

    async def nics_of(self, node_uuid: str) -> list[Any]:
        async with self.cloud.store.begin() as conn:
            return await repos.node_ports.find(conn, node_uuid=node_uuid)

    async def fault(self, uuid: str) -> Any:
        async with self.cloud.store.begin() as conn:
            faults = await repos.instance_faults.find(conn, order_by=("id",), instance_uuid=uuid)
        return faults[-1] if faults else None

    async def events_of(self, request_id: str) -> list[Any]:
        async with self.cloud.store.begin() as conn:
            return await repos.action_events.find(conn, order_by=("id",), request_id=request_id)


async def snapshot(lab: Lab) -> dict[str, Any]:
    """Everything an operation could change: the database's compute and network rows and the hardware."""
    snap = await collect(lab.cloud)
    async with lab.cloud.store.begin() as conn:
        recorded = {
            "actions": await repos.instance_actions.find(conn, order_by=("request_id", "instance_uuid")),
            "action_events": await repos.action_events.find(conn, order_by=("id",)),
            "faults": await repos.instance_faults.find(conn, order_by=("id",)),
            "intents": await intents.pending(conn),
            "flavors": await repos.flavors.find(conn),
        }
    return {
        "instances": snap.instances, "ports": snap.ports, "ip_allocations": snap.ip_allocations,
        "vifs": snap.vifs, "nodes": snap.nodes, "node_ports": snap.node_ports,
        "guest_devices": snap.guest_devices, "domains": lab.hypervisor.domains(), **recorded,
    }


async def refused(
    lab: Lab, call: Awaitable[Any], error: type[TetherError], status: int, words: str
) -> TetherError:
    """``call`` fails with ``error`` (HTTP ``status``, its message containing ``words``) and changes nothing."""
    before = await snapshot(lab)
    with pytest.raises(error) as caught:
        await call
    assert caught.value.status == status, caught.value
    assert words in caught.value.message, caught.value.message
    assert caught.value.service == "compute", caught.value
    after = await snapshot(lab)
    assert after == before, {key: (before[key], after[key]) for key in before if before[key] != after[key]}
    return caught.value


@pytest.fixture
async def lab(database) -> Any:
    world = World(database, FakeHypervisor(), FakeHardware(deploy_seconds=60.0, clean_seconds=30.0))
    runtime = scheduled_runtime(Scheduler(VirtualClock()))
    cloud = Cloud(world, runtime, random.Random(0), fast_passwords=True)

    async def seed() -> Lab:
        seeded = await seed_demo_cloud(cloud, SHAPE)
        await wait_for_nodes(cloud, seeded)
        project = await cloud.identity.find_project("demo")
        user = await cloud.identity.find_user("demo")
        demo = RequestContext(user_id=user.id, project_id=project.id, roles=frozenset({"member", "reader"}))
        return Lab(cloud, seeded.admin, demo, dict(seeded.names))

    scheduler = runtime.executor.scheduler
    assert scheduler is not None
    actor = scheduler.spawn(seed(), "seed")
    await scheduler.run()
    assert actor.error is None, actor.error
    made: Lab = actor.result
    cloud.bus.subscribe(GuestDevicePlugged, lambda plugged: made.plugged.append(plugged.port_id))
    yield made
    violations = check_all(await made.run(collect(cloud)))
    assert violations == [], [v.evidence for v in violations]


# -- bad input: a typed error in nova's words, and nothing changed ---------------------------


async def test_create_server_refuses_bad_input_and_changes_nothing(lab: Lab) -> None:
    async def setup() -> tuple[Instance, Port]:
        used = await lab.port("used")
        return await lab.boot("holder", networks=[{"port": used.id}]), await lab.port("free")

    holder, free = await lab.run(setup())
    holder = await lab.run(lab.server(holder.uuid))
    assert holder.status == "ACTIVE"
    used_port = (await lab.run(lab.ports_of(holder.uuid)))[0]
    unknown = new_uuid(random.Random(7))

    async def bad_inputs() -> None:
        create = lab.compute.create_server
        ctx, image, net = lab.demo, lab.image, lab.net

        def server(**overrides: Any) -> Awaitable[Instance]:
            request: dict[str, Any] = {"name": "bad", "flavor_id": TINY, "image_id": image,
                                       "networks": [{"uuid": net}]}
            request.update(overrides)
            return create(ctx.fresh(), **request)

        await refused(lab, server(flavor_id="no-such-flavor"), ce.ComputeBadRequest, 400,
                      "Invalid flavorRef provided.")
        await refused(lab, server(image_id=unknown), ce.ComputeBadRequest, 400, "Can not find requested image")
        await refused(lab, server(image_id="not-a-uuid"), ce.ComputeBadRequest, 400,
                      "Can not find requested image")
        await refused(lab, server(networks=[{"uuid": unknown}]), ce.ComputeBadRequest, 400,
                      f"Network {unknown} could not be found.")
        await refused(lab, server(networks=[{"uuid": "not-a-uuid"}]), ce.ComputeBadRequest, 400,
                      "Bad networks format: network uuid is not in proper format (not-a-uuid)")
        await refused(lab, server(networks=[{"port": unknown}]), ce.ComputeBadRequest, 400,
                      f"Port id {unknown} could not be found.")
        await refused(lab, server(networks=[{"port": "not-a-uuid"}]), ce.ComputeBadRequest, 400,
                      "Bad port format: port uuid is not in proper format (not-a-uuid)")
        await refused(lab, server(networks=[{"port": used_port.id}]), ce.PortInUse, 409,
                      f"Port {used_port.id} is still in use.")
        await refused(lab, server(networks=[{"port": free.id}, {"port": free.id}]), ce.ComputeBadRequest, 400,
                      f"Port {free.id} is duplicated in the request.")
        for wrong in ("everything", 5, {"uuid": net}, [net], [None]):
            await refused(lab, server(networks=wrong), ce.ComputeBadRequest, 400, "networks")
        await refused(lab, server(networks=[{"uuid": net, "fixed_ip": "10.0.0.300"}]), ce.ComputeBadRequest, 400,
                      "Invalid fixed IP address (10.0.0.300)")
        for name in ("", "   ", "x" * 256, 42, None):
            await refused(lab, server(name=name), ce.ComputeBadRequest, 400,
                          "Invalid input for field/attribute name.")
        for metadata in ({"k": 1}, {"": "v"}, {"k" * 256: "v"}, {"k": "v" * 256}, ["k", "v"], "k=v"):
            await refused(lab, server(metadata=metadata), ce.ComputeBadRequest, 400,
                          "Invalid input for field/attribute metadata.")
        await refused(lab, server(key_name="mykey"), ce.ComputeBadRequest, 400, "Invalid key_name provided.")
        queued = await lab.cloud.image.create_image(ctx.fresh(), name="no-data-yet")
        await refused(lab, server(image_id=queued.id), ce.ComputeBadRequest, 400,
                      f"Image {queued.id} is not active.")

    await lab.run(bad_inputs())
    # The free port is still the user's, untouched.
    port = await lab.run(lab.network.find_port(free.id))
    assert port is not None and port.device_id == "" and not port.is_bound


async def test_server_reads_and_deletes_refuse_unknown_and_malformed_ids(lab: Lab) -> None:
    booted = await lab.run(lab.boot("vm"))
    unknown = new_uuid(random.Random(8))

    async def bad_inputs() -> None:
        compute, ctx = lab.compute, lab.demo
        for missing in (unknown, "not-a-uuid", ""):
            # a server's record holds the instance, its info cache and its fault: one read for all three
            for call in (compute.server_record(ctx.fresh(), missing), compute.delete_server(ctx.fresh(), missing),
                         compute.instance_actions(ctx.fresh(), missing, include_deleted=False),
                         compute.instance_actions(ctx.fresh(), missing, include_deleted=True),
                         compute.interface_attachments(ctx.fresh(), missing),
                         compute.attach_interface(ctx.fresh(), missing, net_id=lab.net),
                         compute.detach_interface(ctx.fresh(), missing, unknown)):
                await refused(lab, call, ce.InstanceNotFound, 404, f"Instance {missing} could not be found.")
        await refused(lab, compute.visible_flavor(ctx.fresh(), "no-such-flavor"), ce.FlavorNotFound, 404,
                      "Flavor no-such-flavor could not be found.")
        await refused(lab, compute.interface_attachment(ctx.fresh(), booted.uuid, unknown), ce.PortNotFound, 404,
                      f"Port id {unknown} could not be found.")
        # A name filter that is not a regular expression is refused where filters are parsed, in the API
        # (api/compute/server_filters.py): test_api_compute's test_a_name_filter_that_is_no_regex_is_400.

    await lab.run(bad_inputs())
    assert (await lab.run(lab.server(booted.uuid))).status == "ACTIVE"


async def test_interface_operations_refuse_bad_input_and_change_nothing(lab: Lab) -> None:
    async def setup() -> tuple[Instance, Port, Port, Instance]:
        other_port = await lab.port("other")
        other = await lab.boot("other", networks=[{"port": other_port.id}])
        free = await lab.port("free")
        vm1 = await lab.boot("vm1")
        return vm1, free, other_port, other

    vm1, free, other_port, _ = await lab.run(setup())
    assert (await lab.run(lab.server(vm1.uuid))).status == "ACTIVE"
    unknown = new_uuid(random.Random(9))

    async def bad_inputs() -> None:
        attach, detach, ctx = lab.compute.attach_interface, lab.compute.detach_interface, lab.demo
        await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id=unknown), ce.PortNotFound, 404,
                      f"Port id {unknown} could not be found.")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id="not-a-uuid"), ce.ComputeBadRequest, 400,
                      "Invalid input for field/attribute port_id. Value: not-a-uuid.")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, net_id=unknown), ce.NetworkNotFound, 404,
                      f"Network {unknown} could not be found.")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, net_id="not-a-uuid"), ce.ComputeBadRequest, 400,
                      "Invalid input for field/attribute net_id. Value: not-a-uuid.")
        await refused(lab, attach(ctx.fresh(), vm1.uuid), ce.ComputeBadRequest, 400,
                      "Must input network_id or port_id")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id=free.id, net_id=lab.net), ce.ComputeBadRequest,
                      400, "Must not input both network_id and port_id")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id=free.id, fixed_ip="10.0.0.50"),
                      ce.ComputeBadRequest, 400, "Must input network_id when request IP address")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, net_id=lab.net, fixed_ip="10.0.0.300"),
                      ce.ComputeBadRequest, 400, "Invalid fixed IP address (10.0.0.300)")
        for tag in ("t" * 61, 7):
            await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id=free.id, tag=tag), ce.ComputeBadRequest, 400,
                          "Invalid input for field/attribute tag.")
        await refused(lab, lab.compute.interface_attachment(ctx.fresh(), vm1.uuid, free.id), ce.ComputeNotFound, 404,
                      f"Instance {vm1.uuid} does not have a port with id {free.id}")
        await refused(lab, attach(ctx.fresh(), vm1.uuid, port_id=other_port.id), ce.PortInUse, 409,
                      f"Port {other_port.id} is still in use.")
        for port_id in (free.id, unknown, "not-a-uuid"):
            await refused(lab, detach(ctx.fresh(), vm1.uuid, port_id), ce.PortNotAttached, 404,
                          f"Port {port_id} is not attached")

    await lab.run(bad_inputs())


async def test_interfaces_of_a_building_or_deleting_server_are_refused_with_409(lab: Lab) -> None:
    async def during_build() -> Instance:
        port = await lab.port("p")
        building = await lab.boot("building")
        # The build was accepted and has not run yet: the server is BUILD/scheduling.
        assert building.status == "BUILD"
        error = await refused(lab, lab.compute.attach_interface(lab.demo.fresh(), building.uuid, port_id=port.id),
                              ce.InstanceInvalidState, 409,
                              f"Cannot 'attach_interface' instance {building.uuid} while it is in task_state "
                              "scheduling")
        assert isinstance(error, ce.ComputeConflict)
        return building

    building = await lab.run(during_build())
    assert (await lab.run(lab.server(building.uuid))).status == "ACTIVE"
    (boot_port,) = await lab.run(lab.ports_of(building.uuid))

    async def during_delete() -> None:
        port = await lab.port("q")
        await lab.compute.delete_server(lab.demo.fresh(), building.uuid)
        await refused(lab, lab.compute.attach_interface(lab.demo.fresh(), building.uuid, port_id=port.id),
                      ce.InstanceInvalidState, 409,
                      f"Cannot 'attach_interface' instance {building.uuid} while it is in task_state deleting")
        await refused(lab, lab.compute.detach_interface(lab.demo.fresh(), building.uuid, boot_port.id),
                      ce.InstanceInvalidState, 409,
                      f"Cannot 'detach_interface' instance {building.uuid} while it is in task_state deleting")

    await lab.run(during_delete())
    with pytest.raises(ce.InstanceNotFound):
        await lab.run(lab.server(building.uuid))


async def test_external_events_refuse_bad_input_and_report_unknown_instances(lab: Lab) -> None:
    port = await lab.run(lab.port("p"))
    booted = await lab.run(lab.boot("vm", networks=[{"port": port.id}]))
    unknown = new_uuid(random.Random(10))
    events = lab.compute.external_events

    def event(**fields: Any) -> dict[str, Any]:
        return {"name": "network-vif-deleted", "server_uuid": booted.uuid, "tag": port.id, **fields}

    async def bad_inputs() -> list[dict[str, Any]]:
        admin = lab.admin
        for batch, words in (
            ([event(bogus=1)], "Additional properties are not allowed ('bogus' was unexpected)"),
            ([event(name="network-vif-exploded")], "Invalid input for field/attribute name."),
            ([event(name=None)], "Invalid input for field/attribute name."),
            ([event(server_uuid="not-a-uuid")], "Invalid input for field/attribute server_uuid."),
            ([event(server_uuid=None)], "Invalid input for field/attribute server_uuid."),
            ([event(status="exploded")], "Invalid input for field/attribute status."),
            ([event(tag=7)], "Invalid input for field/attribute tag."),
            ([], "Invalid input for field/attribute events."),
            ("network-vif-deleted", "Invalid input for field/attribute events."),
            (["network-vif-deleted"], "Invalid input for field/attribute events."),
            # One bad event refuses the whole request: the good one is not dispatched either.
            ([event(), event(name="bogus")], "Invalid input for field/attribute name."),
        ):
            await refused(lab, events(admin.fresh(), batch), ce.ComputeBadRequest, 400, words)
        await refused(lab, events(lab.demo.fresh(), [event()]), ce.ComputeForbidden, 403,
                      "Policy doesn't allow os_compute_api:os-server-external-events:create to be performed.")
        before = await snapshot(lab)
        results = await events(admin.fresh(), [event(server_uuid=unknown)])
        assert await snapshot(lab) == before
        return results

    results = await lab.run(bad_inputs())
    assert results == [{"server_uuid": unknown, "name": "network-vif-deleted", "status": "failed",
                        "tag": port.id, "code": 404}]
    # Nothing reached the server: no handler ran, and its port is still attached and plugged.
    assert not [a.name for a in lab.rt.executor.scheduler.actors if a.name.startswith("compute.vif_deleted")]
    assert await lab.run(lab.cached(booted.uuid)) == [port.id]
    assert [i.port_id for i in lab.hypervisor.interfaces(instance_uuid=booted.uuid)] == [port.id]


async def test_another_projects_server_is_not_found_and_a_reader_cannot_write(lab: Lab) -> None:
    admins = await lab.run(lab.boot("admins", ctx=lab.admin))
    mine = await lab.run(lab.boot("mine"))
    demo_port = await lab.run(lab.port("p"))
    reader = RequestContext(user_id=lab.demo.user_id, project_id=lab.demo.project_id, roles=frozenset({"reader"}))

    async def cross_project() -> None:
        compute, ctx, uuid = lab.compute, lab.demo, admins.uuid
        # a server's record holds the instance, its info cache and its fault: one read for all three
        for call in (compute.server_record(ctx.fresh(), uuid), compute.delete_server(ctx.fresh(), uuid),
                     compute.instance_actions(ctx.fresh(), uuid, include_deleted=False),
                     compute.instance_actions(ctx.fresh(), uuid, include_deleted=True),
                     compute.interface_attachments(ctx.fresh(), uuid),
                     compute.attach_interface(ctx.fresh(), uuid, port_id=demo_port.id),
                     compute.detach_interface(ctx.fresh(), uuid, demo_port.id)):
            await refused(lab, call, ce.InstanceNotFound, 404, f"Instance {uuid} could not be found.")
        assert uuid not in [s.uuid for s in await compute.find_servers(ctx.fresh(), deleted=False)]
        await refused(lab, compute.find_servers(ctx.fresh(), all_projects=True), ce.ComputeForbidden, 403,
                      "Policy doesn't allow os_compute_api:servers:detail:get_all_tenants to be performed.")

    async def read_only() -> None:
        compute = lab.compute
        assert (await compute.server_record(reader.fresh(), mine.uuid)).instance.uuid == mine.uuid
        for call, action in (
            (compute.create_server(reader.fresh(), name="r", flavor_id=TINY, image_id=lab.image,
                                   networks=[{"uuid": lab.net}]), "os_compute_api:servers:create"),
            (compute.delete_server(reader.fresh(), mine.uuid), "os_compute_api:servers:delete"),
            (compute.attach_interface(reader.fresh(), mine.uuid, port_id=demo_port.id),
             "os_compute_api:os-attach-interfaces:create"),
            (compute.detach_interface(reader.fresh(), mine.uuid, demo_port.id),
             "os_compute_api:os-attach-interfaces:delete"),
            (compute.create_flavor(lab.demo.fresh(), name="mine", vcpus=1, ram=1, disk=1),
             "os_compute_api:os-flavor-manage:create"),
            (compute.hypervisor_records(lab.demo.fresh()), "os_compute_api:os-hypervisors:list"),
        ):
            await refused(lab, call, ce.ComputeForbidden, 403, f"Policy doesn't allow {action} to be performed.")

    await lab.run(cross_project())
    await lab.run(read_only())
    assert (await lab.run(lab.server(admins.uuid))).status == "ACTIVE"


async def test_flavor_operations_refuse_bad_input_and_change_nothing(lab: Lab) -> None:
    async def bad_inputs() -> None:
        create, ctx = lab.compute.create_flavor, lab.admin

        def flavor(**overrides: Any) -> Awaitable[Any]:
            request: dict[str, Any] = {"name": "new", "vcpus": 1, "ram": 512, "disk": 1}
            request.update(overrides)
            return create(ctx.fresh(), **request)

        for name in ("", "  ", "n" * 256, 5):
            await refused(lab, flavor(name=name), ce.ComputeBadRequest, 400, "Invalid input for field/attribute name.")
        for field_name, value in (("vcpus", 0), ("vcpus", "2"), ("ram", -1), ("ram", True), ("disk", -1),
                                  ("swap", 1.5)):
            await refused(lab, flavor(**{field_name: value}), ce.ComputeBadRequest, 400,
                          f"Invalid input for field/attribute {field_name}.")
        await refused(lab, flavor(id="1"), ce.ComputeConflict, 409, "Flavor with ID 1 already exists.")
        await refused(lab, flavor(name="m1.tiny"), ce.ComputeConflict, 409, "Flavor with name m1.tiny already exists.")
        await refused(lab, lab.compute.delete_flavor(ctx.fresh(), "no-such-flavor"), ce.FlavorNotFound, 404,
                      "Flavor no-such-flavor could not be found.")
        await refused(lab, lab.compute.delete_flavor(lab.demo.fresh(), "1"), ce.ComputeForbidden, 403,
                      "Policy doesn't allow os_compute_api:os-flavor-manage:delete to be performed.")

    await lab.run(bad_inputs())


async def test_private_flavors_are_for_admins_only(lab: Lab) -> None:
    secret = await lab.run(lab.compute.create_flavor(lab.admin.fresh(), name="secret", vcpus=1, ram=256, disk=1,
                                                     is_public=False))
    public = {"1", "2", "3"}

    async def as_member() -> None:
        compute, ctx = lab.compute, lab.demo
        for is_public in (True, False, None):
            assert {f.id for f in await compute.visible_flavors(ctx.fresh(), is_public=is_public)} == public
        await refused(lab, compute.visible_flavor(ctx.fresh(), secret.id), ce.FlavorNotFound, 404,
                      f"Flavor {secret.id} could not be found.")
        await refused(lab, compute.create_server(ctx.fresh(), name="s", flavor_id=secret.id, image_id=lab.image,
                                                 networks=[{"uuid": lab.net}]),
                      ce.ComputeBadRequest, 400, "Invalid flavorRef provided.")

    async def as_admin() -> None:
        compute, ctx = lab.compute, lab.admin
        assert {f.id for f in await compute.visible_flavors(ctx.fresh(), is_public=True)} == public
        assert {f.id for f in await compute.visible_flavors(ctx.fresh(), is_public=False)} == {secret.id}
        assert {f.id for f in await compute.visible_flavors(ctx.fresh(), is_public=None)} == public | {secret.id}
        assert (await compute.visible_flavor(ctx.fresh(), secret.id)).id == secret.id

    await lab.run(as_member())
    await lab.run(as_admin())
    booted = await lab.run(lab.boot("admins", flavor=secret.id, ctx=lab.admin))
    assert (await lab.run(lab.server(booted.uuid))).status == "ACTIVE"


# -- exhaustion: the extra build ends in ERROR, never BUILD ---------------------------------


async def test_more_baremetal_boots_than_nodes_fail_the_extra_one_with_no_valid_host(lab: Lab) -> None:
    async def boot_three() -> list[Instance]:
        return [await lab.boot(f"bm{i}", flavor=BAREMETAL) for i in range(SHAPE.nodes + 1)]

    accepted = await lab.run(boot_three())
    servers = [await lab.run(lab.server(s.uuid)) for s in accepted]
    statuses = sorted(s.status for s in servers)
    assert statuses == ["ACTIVE"] * SHAPE.nodes + ["ERROR"]
    (failed,) = [s for s in servers if s.status == "ERROR"]
    fault = await lab.run(lab.fault(failed.uuid))
    assert fault is not None and fault.message.startswith("No valid host was found."), fault
    assert failed.task_state is None and failed.host is None and failed.node is None
    assert await lab.run(lab.ports_of(failed.uuid)) == []
    nodes = await lab.run(lab.baremetal.list_nodes(lab.admin.fresh()))
    assert sorted(n.instance_uuid for n in nodes) == sorted(s.uuid for s in servers if s.status == "ACTIVE")
    # An instance on no host cannot take events (nova's 422), and it can still be deleted.
    (result,) = await lab.run(lab.compute.external_events(lab.admin.fresh(), [
        {"name": "network-vif-plugged", "server_uuid": failed.uuid}]))
    assert (result["code"], result["status"]) == (422, "failed")
    await lab.run(refused(lab, lab.compute.attach_interface(lab.demo.fresh(), failed.uuid, net_id=lab.net),
                          ce.InstanceInvalidState, 409,
                          f"Cannot 'attach_interface' instance {failed.uuid} while it is in vm_state error"))
    await lab.run(lab.compute.delete_server(lab.demo.fresh(), failed.uuid))
    with pytest.raises(ce.InstanceNotFound):
        await lab.run(lab.server(failed.uuid))


async def test_more_vm_boots_than_hypervisor_capacity_fail_the_extra_one_with_no_valid_host(lab: Lab) -> None:
    big = await lab.run(lab.compute.create_flavor(lab.admin.fresh(), name="m1.whole-host", vcpus=64,
                                                  ram=262144, disk=4000))
    # room in the quota, so that it is the hosts that run out
    await lab.run(lab.compute.update_quota_set(lab.admin.fresh(), lab.demo.project_id or "",
                                               {"cores": -1, "ram": -1}))

    async def boot_three() -> list[Instance]:
        return [await lab.boot(f"vm{i}", flavor=big.id) for i in range(SHAPE.hypervisors + 1)]

    accepted = await lab.run(boot_three())
    servers = [await lab.run(lab.server(s.uuid)) for s in accepted]
    assert sorted(s.status for s in servers) == ["ACTIVE"] * SHAPE.hypervisors + ["ERROR"]
    (failed,) = [s for s in servers if s.status == "ERROR"]
    fault = await lab.run(lab.fault(failed.uuid))
    assert fault is not None
    assert fault.message == "No valid host was found. There are not enough hosts available."
    assert await lab.run(lab.ports_of(failed.uuid)) == []
    assert lab.hypervisor.interfaces(instance_uuid=failed.uuid) == []
    assert sorted(s.host for s in servers if s.status == "ACTIVE") == ["compute-1", "compute-2"]


# -- lifecycles ---------------------------------------------------------------------------------


async def test_vm_lifecycle_boot_attach_detach_delete(lab: Lab) -> None:
    user_port = await lab.run(lab.port("brought"))
    create_ctx = lab.demo.fresh()
    accepted = await lab.run(lab.compute.create_server(
        create_ctx, name="vm1", flavor_id=TINY, image_id=lab.image,
        networks=[{"uuid": lab.net}, {"port": user_port.id}]))
    uuid = accepted.uuid
    server = await lab.run(lab.server(uuid))
    assert (server.status, server.task_state, server.power_state) == ("ACTIVE", None, vm.RUNNING)

    def devices() -> dict[str, str]:
        return {i.port_id: i.mac for i in lab.hypervisor.interfaces(instance_uuid=uuid)}

    ports = await lab.run(lab.ports_of(uuid))
    assert len(ports) == 2 and user_port.id in {p.id for p in ports}
    assert devices() == {p.id: p.mac_address for p in ports}
    assert all(p.status == "ACTIVE" and p.binding_host_id == server.host for p in ports)
    assert sorted(await lab.run(lab.cached(uuid))) == sorted(p.id for p in ports)
    (boot_created,) = [p for p in ports if p.id != user_port.id]
    assert boot_created.created_by == CREATED_BY_COMPUTE

    # Attach a port the user brought: a device appears and the cache lists it.
    extra = await lab.run(lab.port("extra"))
    attach_ctx = lab.demo.fresh()
    entry = await lab.run(lab.compute.attach_interface(attach_ctx, uuid, port_id=extra.id))
    assert entry.port_id == extra.id and entry.preserve_on_delete
    assert extra.id in devices() and extra.id in await lab.run(lab.cached(uuid))
    attached = await lab.run(lab.network.find_port(extra.id))
    assert (attached.device_id, attached.status, attached.binding_host_id) == (uuid, "ACTIVE", server.host)

    # Detach it: the device goes, the port is released to the user, not deleted.
    detach_ctx = lab.demo.fresh()
    await lab.run(lab.compute.detach_interface(detach_ctx, uuid, extra.id))
    assert extra.id not in devices() and extra.id not in await lab.run(lab.cached(uuid))
    released = await lab.run(lab.network.find_port(extra.id))
    assert released is not None
    assert (released.device_id, released.device_owner, released.binding_host_id) == ("", "", "")

    # A port compute creates for an attach is compute's: detach deletes it.
    made = await lab.run(lab.compute.attach_interface(lab.demo.fresh(), uuid, net_id=lab.net))
    assert not made.preserve_on_delete and made.port_id in devices()
    assert (await lab.run(lab.network.find_port(made.port_id))).created_by == CREATED_BY_COMPUTE
    await lab.run(lab.compute.detach_interface(lab.demo.fresh(), uuid, made.port_id))
    assert await lab.run(lab.network.find_port(made.port_id)) is None
    assert made.port_id not in devices()

    # ... and so does deleting the server, which releases the user's boot port.
    last = await lab.run(lab.compute.attach_interface(lab.demo.fresh(), uuid, net_id=lab.net))
    delete_ctx = lab.demo.fresh()
    await lab.run(lab.compute.delete_server(delete_ctx, uuid))
    assert devices() == {} and not any(u == uuid for _, u in lab.hypervisor.domains())
    assert await lab.run(lab.ports_of(uuid)) == []
    for gone in (last.port_id, boot_created.id):
        assert await lab.run(lab.network.find_port(gone)) is None
    kept = await lab.run(lab.network.find_port(user_port.id))
    assert kept is not None and (kept.device_id, kept.binding_host_id) == ("", "")
    assert uuid not in [s.uuid for s in await lab.run(lab.compute.find_servers(lab.demo.fresh(), deleted=False))]
    with pytest.raises(ce.InstanceNotFound):
        await lab.run(lab.compute.server_record(lab.demo.fresh(), uuid))
    deleted = await lab.run(lab.compute.find_servers(lab.admin.fresh(), all_projects=True, deleted=True))
    assert [s.uuid for s in deleted] == [uuid]

    # a deleted server's actions, as nova lists them from 2.21
    actions = await lab.run(lab.compute.instance_actions(lab.demo.fresh(), uuid, include_deleted=True))
    assert sorted(a.action for a in actions) == sorted(
        ["create", "attach_interface", "detach_interface", "attach_interface", "detach_interface",
         "attach_interface", "delete"])
    by_request = {a.request_id: a for a in actions}
    async with lab.cloud.store.begin() as conn:
        hosts = {h.hostname for h in await repos.hypervisors.find(conn)}
    for ctx, action in ((create_ctx, "create"), (attach_ctx, "attach_interface"),
                        (detach_ctx, "detach_interface"), (delete_ctx, "delete")):
        assert by_request[ctx.request_id].action == action
        assert by_request[ctx.request_id].message is None
        (event,) = await lab.run(lab.events_of(ctx.request_id))
        assert (event.event, event.result) == (f"compute_{action}", "Success")
        assert event.finish_time is not None and event.finish_time >= event.start_time
        assert event.host in hosts, event  # the compute host it ran on, as nova records it


async def test_two_servers_booted_on_one_port_at_once_one_wins_the_other_fails_cleanly(lab: Lab) -> None:
    port = await lab.run(lab.port("shared"))

    async def boot_both() -> list[Instance]:
        # Both requests see the port free; only one build can bind it.
        return [await lab.boot(name, networks=[{"port": port.id}]) for name in ("first", "second")]

    first, second = [await lab.run(lab.server(s.uuid)) for s in await lab.run(boot_both())]
    assert (first.status, second.status) == ("ACTIVE", "ERROR")
    fault = await lab.run(lab.fault(second.uuid))
    assert fault is not None and fault.message == f"Port {port.id} is still in use.", fault
    kept = await lab.run(lab.network.find_port(port.id))
    assert (kept.device_id, kept.status) == (first.uuid, "ACTIVE")
    assert [i.port_id for i in lab.hypervisor.interfaces(instance_uuid=first.uuid)] == [port.id]
    assert lab.hypervisor.interfaces(instance_uuid=second.uuid) == []
    assert await lab.run(lab.cached(second.uuid)) == []
    await lab.run(lab.compute.delete_server(lab.demo.fresh(), second.uuid))
    assert (await lab.run(lab.network.find_port(port.id))).device_id == first.uuid


async def test_a_vm_deleted_while_it_builds_leaves_nothing(lab: Lab) -> None:
    port = await lab.run(lab.port("brought"))

    async def boot_then_delete() -> Instance:
        # The build is held while it waits for its ports to go ACTIVE, devices plugged.
        lab.rt.faults = FaultPlan.parse(["compute.build.wait_vif_plugged=sleep:10*1"])
        accepted = await lab.boot("vm1", networks=[{"uuid": lab.net}, {"port": port.id}])
        await lab.rt.sleep(5.0)
        building = await lab.server(accepted.uuid)
        assert (building.status, building.task_state) == ("BUILD", vm.SPAWNING)
        assert len(lab.hypervisor.interfaces(instance_uuid=accepted.uuid)) == 2
        await lab.compute.delete_server(lab.demo.fresh(), accepted.uuid)
        return accepted

    accepted = await lab.run(boot_then_delete())
    with pytest.raises(ce.InstanceNotFound):
        await lab.run(lab.server(accepted.uuid))
    assert await lab.run(lab.fault(accepted.uuid)) is None
    assert lab.hypervisor.interfaces(instance_uuid=accepted.uuid) == []
    assert not any(uuid == accepted.uuid for _, uuid in lab.hypervisor.domains())
    assert await lab.run(lab.ports_of(accepted.uuid)) == []
    released = await lab.run(lab.network.find_port(port.id))
    assert released is not None and (released.device_id, released.binding_host_id) == ("", "")


async def test_a_port_deleted_through_the_network_api_leaves_the_guest_and_the_cache(lab: Lab) -> None:
    port = await lab.run(lab.port("brought"))
    booted = await lab.run(lab.boot("vm1", networks=[{"uuid": lab.net}, {"port": port.id}]))
    await lab.run(lab.network.delete_port(lab.demo.fresh(), port.id))
    server = await lab.run(lab.server(booted.uuid))
    assert server.status == "ACTIVE" and server.task_state is None
    assert port.id not in [i.port_id for i in lab.hypervisor.interfaces(instance_uuid=booted.uuid)]
    assert port.id not in await lab.run(lab.cached(booted.uuid))
    assert len(lab.hypervisor.interfaces(instance_uuid=booted.uuid)) == 1


async def test_baremetal_lifecycle_boot_then_delete_releases_the_node_and_the_users_port(lab: Lab) -> None:
    port = await lab.run(lab.port("brought"))
    accepted = await lab.run(lab.boot("bm1", flavor=BAREMETAL, networks=[{"port": port.id}]))
    server = await lab.run(lab.server(accepted.uuid))
    assert server.status == "ACTIVE" and server.task_state is None
    node = await lab.run(lab.node_of(server.uuid))
    assert node.uuid == server.node and node.provision_state == bms.ACTIVE
    assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == [port.id]
    (nic,) = await lab.run(lab.nics_of(node.uuid))
    bound = await lab.run(lab.network.find_port(port.id))
    assert bound.mac_address == nic.address
    assert (bound.device_id, bound.binding_host_id, bound.binding_vnic_type) == (server.uuid, node.uuid,
                                                                                  "baremetal")
    (vif,) = (await lab.run(lab.compute.server_record(lab.demo.fresh(), server.uuid))).vifs
    assert vif.address == nic.address  # the cache follows the MAC the NIC imposed

    await lab.run(lab.compute.delete_server(lab.demo.fresh(), server.uuid))
    after = await lab.run(lab.baremetal.find_node(node.uuid))
    assert after.provision_state == bms.AVAILABLE and after.instance_uuid is None
    assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == []
    released = await lab.run(lab.network.find_port(port.id))
    assert released is not None
    assert (released.device_id, released.binding_host_id, released.binding_profile) == ("", "", {})
    assert released.mac_address != nic.address
    with pytest.raises(ce.InstanceNotFound):
        await lab.run(lab.compute.server_record(lab.demo.fresh(), server.uuid))


async def test_baremetal_interfaces_take_a_free_nic_or_fail_leaving_the_port_as_it_was(lab: Lab) -> None:
    first, second = await lab.run(lab.port("first")), await lab.run(lab.port("second"))
    accepted = await lab.run(lab.boot("bm1", flavor=BAREMETAL, networks=[{"port": first.id}]))
    uuid = (await lab.run(lab.server(accepted.uuid))).uuid
    node = await lab.run(lab.node_of(uuid))
    (nic,) = await lab.run(lab.nics_of(node.uuid))

    # The node's one NIC carries the boot port: no free physical port for a second one.
    attach_ctx = lab.demo.fresh()
    with pytest.raises(ce.ComputeConflict) as caught:
        await lab.run(lab.compute.attach_interface(attach_ctx, uuid, port_id=second.id))
    assert caught.value.status == 409
    assert caught.value.message.startswith(f"Failed to attach network adapter device to {uuid}: ")
    assert "not enough free physical ports" in caught.value.message
    untouched = await lab.run(lab.network.find_port(second.id))
    assert (untouched.device_id, untouched.binding_host_id, untouched.mac_address) == ("", "", second.mac_address)
    assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == [first.id]
    assert await lab.run(lab.cached(uuid)) == [first.id]
    (failed_action,) = [a for a in await lab.run(lab.compute.instance_actions(lab.demo.fresh(), uuid,
                                                                              include_deleted=False))
                        if a.request_id == attach_ctx.request_id]
    assert failed_action.message == "Error"

    # Detach the boot port: off the node, unbound, and its MAC is no longer the NIC's.
    await lab.run(lab.compute.detach_interface(lab.demo.fresh(), uuid, first.id))
    assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == []
    released = await lab.run(lab.network.find_port(first.id))
    assert (released.device_id, released.binding_host_id) == ("", "") and released.mac_address != nic.address

    # Now the NIC is free: the second port takes it, and its MAC.
    await lab.run(lab.compute.attach_interface(lab.demo.fresh(), uuid, port_id=second.id))
    assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == [second.id]
    assert (await lab.run(lab.network.find_port(second.id))).mac_address == nic.address

    await lab.run(lab.compute.delete_server(lab.demo.fresh(), uuid))
    assert (await lab.run(lab.baremetal.find_node(node.uuid))).provision_state == bms.AVAILABLE
    for port in (first, second):
        kept = await lab.run(lab.network.find_port(port.id))
        assert kept is not None and kept.device_id == "" and kept.mac_address != nic.address


# -- seed 003 -----------------------------------------------------------------------------------


async def test_seed_003_a_user_delete_during_a_baremetal_build_ends_deleted_never_error(lab: Lab) -> None:
    seen: list[str] = []

    async def watch(uuid: str) -> None:
        # Every state the server shows, each time it changes (notified) or once a virtual second.
        while True:
            try:
                seen.append((await lab.server(uuid)).status)
            except ce.InstanceNotFound:
                return
            await lab.rt.wait(("instance", uuid), 1.0)

    async def boot_then_delete() -> Instance:
        accepted = await lab.boot("bm1", flavor=BAREMETAL)
        lab.rt.spawn(watch(accepted.uuid), name="watcher")
        while True:
            nodes = await lab.baremetal.list_nodes(lab.admin.fresh(), instance_uuid=accepted.uuid)
            if nodes and nodes[0].provision_state == bms.DEPLOYWAIT:
                break
            await lab.rt.sleep(1.0)
        await lab.compute.delete_server(lab.demo.fresh(), accepted.uuid)
        return accepted

    accepted = await lab.run(boot_then_delete())
    assert "BUILD" in seen and "ERROR" not in seen, seen
    (gone,) = await lab.run(lab.compute.find_servers(lab.admin.fresh(), all_projects=True, deleted=True))
    assert (gone.uuid, gone.vm_state, gone.task_state) == (accepted.uuid, vm.DELETED, None)
    assert await lab.run(lab.fault(accepted.uuid)) is None
    nodes = await lab.run(lab.baremetal.list_nodes(lab.admin.fresh()))
    assert all(n.provision_state == bms.AVAILABLE and n.instance_uuid is None for n in nodes)
    for node in nodes:
        assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == []
    assert await lab.run(lab.ports_of(accepted.uuid)) == []


async def test_seed_003_a_deploy_failure_ends_error_with_the_fault_and_frees_the_node(lab: Lab) -> None:
    lab.rt.faults = FaultPlan.parse(["baremetal.deploy.wait_callback=error*1"])
    port = await lab.run(lab.port("brought"))
    accepted = await lab.run(lab.boot("bm1", flavor=BAREMETAL, networks=[{"port": port.id}]))
    assert lab.rt.faults.rules[0].fired == 1
    server = await lab.run(lab.server(accepted.uuid))
    assert (server.status, server.task_state, server.host, server.node) == ("ERROR", None, None, None)
    # the record of a server in ERROR has its latest fault
    fault = (await lab.run(lab.compute.server_record(lab.demo.fresh(), server.uuid))).fault
    assert fault is not None
    # nova's words, then the node's last_error
    assert fault.message == (f"Failed to provision instance {server.uuid}: "
                             "Failed to deploy: Injected fault at baremetal.deploy.wait_callback"), fault.message
    nodes = await lab.run(lab.baremetal.list_nodes(lab.admin.fresh()))
    assert all(n.provision_state == bms.AVAILABLE and n.instance_uuid is None for n in nodes)
    for node in nodes:
        assert await lab.run(lab.baremetal.vif_list(lab.admin.fresh(), node.uuid)) == []
        (nic,) = await lab.run(lab.nics_of(node.uuid))
        released = await lab.run(lab.network.find_port(port.id))
        assert released.mac_address != nic.address
    assert (released.device_id, released.binding_host_id) == ("", "")
    (create,) = await lab.run(lab.compute.instance_actions(lab.demo.fresh(), server.uuid, include_deleted=False))
    assert create.message == "Error"


# -- seed 004 -----------------------------------------------------------------------------------


async def test_seed_004_a_port_deleted_before_the_attach_takes_the_lock_fails_before_any_device(lab: Lab) -> None:
    booted = await lab.run(lab.boot("vm1"))
    first, second = await lab.run(lab.port("first")), await lab.run(lab.port("second"))
    outcome: dict[str, Any] = {}

    async def attach(name: str, port_id: str) -> None:
        try:
            await lab.compute.attach_interface(lab.demo.fresh(), booted.uuid, port_id=port_id)
            outcome[name] = "ok"
        except TetherError as error:
            outcome[name] = error

    async def race() -> None:
        # The first attach holds the instance's lock for a while; the second, its port
        # checked, waits for the lock while the user deletes that port.
        lab.rt.faults = FaultPlan.parse(["compute.attach_interface.before_driver_attach=sleep:10*1"])
        lab.rt.spawn(attach("first", first.id), name="attach-first")
        await lab.rt.sleep(1.0)
        lab.rt.spawn(attach("second", second.id), name="attach-second")
        await lab.rt.sleep(1.0)
        assert lab.rt.locks.is_locked("instance", booted.uuid) and outcome == {}
        waiting = {a.name: a.point for a in lab.rt.executor.scheduler.actors if a.state == "waiting"}
        assert waiting.get("attach-second") == "lock.wait.instance", waiting
        await lab.network.delete_port(lab.demo.fresh(), second.id)

    await lab.run(race())
    assert outcome["first"] == "ok"
    error = outcome["second"]
    assert isinstance(error, ce.PortNotFound) and error.status == 404
    assert error.message == f"Port id {second.id} could not be found."
    assert second.id not in lab.plugged  # never plugged, not even for a moment
    assert {i.port_id for i in lab.hypervisor.interfaces(instance_uuid=booted.uuid)} == {
        p.id for p in await lab.run(lab.ports_of(booted.uuid))}
    assert second.id not in await lab.run(lab.cached(booted.uuid))


async def test_seed_004_an_event_for_an_unknown_port_is_a_no_op(lab: Lab) -> None:
    booted = await lab.run(lab.boot("vm1"))
    stranger = new_uuid(random.Random(11))
    before = await lab.run(snapshot(lab))
    results = await lab.run(lab.compute.external_events(lab.admin.fresh(), [
        {"name": name, "server_uuid": booted.uuid, "tag": stranger}
        for name in ("network-vif-deleted", "network-vif-unplugged", "network-changed")]))
    assert [r["code"] for r in results] == [200, 200, 200]
    handlers = [a for a in lab.rt.executor.scheduler.actors
                if a.name.startswith(("compute.vif_deleted", "compute.refresh"))]
    assert len(handlers) == 2 and all(a.state == "done" and a.error is None for a in handlers)
    assert await lab.run(snapshot(lab)) == before


async def test_seed_004_reconcile_network_leaves_a_consistent_instance_untouched(lab: Lab) -> None:
    port = await lab.run(lab.port("brought"))
    vm_server = await lab.run(lab.boot("vm1", networks=[{"uuid": lab.net}, {"port": port.id}]))
    bm_server = await lab.run(lab.boot("bm1", flavor=BAREMETAL))
    before = await lab.run(snapshot(lab))
    for server in (vm_server, bm_server):
        assert await lab.run(lab.compute.reconcile_network(server.uuid)) is False
    assert await lab.run(snapshot(lab)) == before
    assert len(lab.hypervisor.interfaces(instance_uuid=vm_server.uuid)) == 2
