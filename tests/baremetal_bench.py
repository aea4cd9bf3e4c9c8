"""A bench for the bare-metal tests (no tests of its own): the bare-metal service, the real
network service and fake hardware on a fresh database, run by the deterministic scheduler
in virtual time."""

from __future__ import annotations

import random
from collections.abc import Coroutine
from typing import Any

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import AVAILABLE
from tether.domain.network import Port
from tether.drivers.hardware import FakeHardware
from tether.emulation import emulate
from tether.runtime.bugs import Bugs
from tether.runtime.bus import MessageBus
from tether.runtime.clock import VirtualClock
from tether.runtime.faults import FaultRule
from tether.services.baremetal import BaremetalService
from tether.services.baremetal.steps import BaremetalSteps
from tether.services.context import RequestContext
from tether.services.network import NetworkService
from tether.sim.scheduler import Actor, Scheduler, scheduled_runtime
from tether.store import repos
from tether.store.database import Database, Store

ADMIN = RequestContext(user_id="operator", project_id="ops", roles=frozenset({"admin"}))
MEMBER = RequestContext(user_id="alice", project_id="demo", roles=frozenset({"member"}))
HOST = "conductor-1"


class Bench:
    def __init__(
        self,
        database: Database,
        *,
        bugs: tuple[str, ...] = (),
        deploy_seconds: float = 10.0,
        clean_seconds: float = 5.0,
        hardware: FakeHardware | None = None,
        start: float | None = None,
        bus: MessageBus | None = None,
        steps: BaremetalSteps | None = None,
    ) -> None:
        self.database = database
        self.bugs = bugs
        self.bus = bus
        self.steps = steps
        clock = VirtualClock() if start is None else VirtualClock(start)
        self.rt = scheduled_runtime(Scheduler(clock), bugs=Bugs(bugs))
        self.store = Store(database, self.rt, bus)
        self.rng = random.Random(1234)
        self.network = NetworkService(self.store, self.rt, self.rng)
        self.hardware = hardware or FakeHardware(deploy_seconds=deploy_seconds, clean_seconds=clean_seconds)
        self.baremetal = BaremetalService(self.store, self.rt, self.rng, self.network, self.hardware, host=HOST,
                                          steps=steps or emulate(self.rt.bugs.names).baremetal, bus=bus)

    def restarted(self) -> Bench:
        """A new incarnation on the same database and hardware, its clock where this one stopped."""
        return Bench(self.database, bugs=self.bugs, hardware=self.hardware, start=self.rt.now(),
                     bus=self.bus, steps=self.steps)

    def fault(self, rule: str) -> None:
        self.rt.faults.rules.append(FaultRule.parse(rule))

    # -- running ----------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "op") -> Actor:
        assert self.rt.executor.scheduler is not None
        return self.rt.executor.scheduler.spawn(coro, name)

    async def run(self) -> None:
        assert self.rt.executor.scheduler is not None
        await self.rt.executor.scheduler.run()

    async def do(self, coro: Coroutine[Any, Any, Any], name: str = "op") -> Any:
        """Run one operation as an actor, and every job it starts, to the end; its result or error."""
        actor = self.spawn(coro, name)
        await self.run()
        if actor.error is not None:
            raise actor.error
        return actor.result

    async def fails(self, coro: Coroutine[Any, Any, Any], name: str = "op") -> BaseException:
        actor = self.spawn(coro, name)
        await self.run()
        assert actor.error is not None, f"{name} succeeded: {actor.result!r}"
        return actor.error

    def _transition_entries(self, node_uuid: str) -> list[tuple[float, str]]:
        prefix = f"node {node_uuid}: "
        return [(e.at, e.text[len(prefix):]) for e in self.rt.journal
                if e.text.startswith(prefix) and " -> " in e.text]

    def transitions(self, node_uuid: str) -> list[str]:
        """The provision-state changes of one node, in order, as the journal has them."""
        return [text for _, text in self._transition_entries(node_uuid)]

    def transition_times(self, node_uuid: str) -> list[float]:
        return [at for at, _ in self._transition_entries(node_uuid)]

    # -- building a world ---------------------------------------------------------------

    async def node(self, uuid: str) -> Node:
        node = await self.do(self.baremetal.find_node(uuid), "read")
        assert node is not None
        return node

    async def port(self, port_id: str) -> Port | None:
        return await self.do(self.network.find_port(port_id), "read")

    async def nics(self, node_uuid: str) -> list[Any]:
        async def read() -> list[Any]:
            async with self.store.begin() as conn:
                ports = await repos.node_ports.find(conn, node_uuid=node_uuid)
                portgroups = await repos.portgroups.find(conn, node_uuid=node_uuid)
            return [*ports, *portgroups]

        return await self.do(read(), "read")

    async def network_with_ports(self, count: int, *, physnet: str | None = None, name: str = "net") -> list[Port]:
        async def build() -> list[Port]:
            net = await self.network.create_network(ADMIN, name=name, provider_physical_network=physnet)
            await self.network.create_subnet(ADMIN, network_id=net.id, cidr="10.0.0.0/24")
            return [await self.network.create_port(ADMIN, network_id=net.id, name=f"{name}-p{i}")
                    for i in range(count)]

        return await self.do(build(), "setup")

    async def available_node(
        self, name: str = "n1", *, nics: int = 1, physnets: list[str | None] | None = None,
        resource_class: str = "baremetal",
    ) -> Node:
        """An enrolled, managed and provided node with ``nics`` NICs, cleaned and available."""
        bm = self.baremetal

        async def build() -> str:
            node = await bm.create_node(ADMIN, name=name, resource_class=resource_class)
            for i in range(nics):
                physnet = physnets[i] if physnets else None
                await bm.create_port(
                    ADMIN, address=nic_mac(name, i), node_uuid=node.uuid, physical_network=physnet,
                    local_link_connection={"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": f"{name}-Gig0/{i}"},
                )
            await bm.set_provision_state(ADMIN, node.uuid, "manage")
            await bm.set_provision_state(ADMIN, node.uuid, "provide")
            return node.uuid

        uuid = await self.do(build(), "setup")
        node = await self.node(uuid)
        assert node.provision_state == AVAILABLE
        return node

    async def deployed_node(self, ports: list[Port], *, name: str = "n1", instance: str | None = None) -> Node:
        """An active node carrying ``ports`` as VIFs, claimed by an instance (as compute leaves it)."""
        node = await self.available_node(name, nics=len(ports))
        instance = instance or "11111111-2222-4333-8444-555555555555"
        bm = self.baremetal

        async def build() -> None:
            assert await bm.claim_node(node.uuid, instance, {"image_source": "cirros"})
            for port in ports:
                await bm.vif_attach(ADMIN, node.uuid, port.id)
            await bm.set_provision_state(ADMIN, node.uuid, "active")

        await self.do(build(), "setup")
        return await self.node(node.uuid)


def nic_mac(name: str, index: int) -> str:
    tag = sum(name.encode()) % 256
    return f"52:54:00:{tag:02x}:00:{index:02x}"
