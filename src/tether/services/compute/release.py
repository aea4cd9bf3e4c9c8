"""Releasing what an instance holds: its guest or its node, then its ports.

Rule 1 (seeds 000, 004): act on the union of the info cache and the truth
(the hypervisor's guest interfaces, the node's VIF list, the ports bound to
the instance). Rule 2 (seed 001): the ports go back by their ownership.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain import baremetal_states as bms
from tether.domain.baremetal import Node
from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.runtime import Runtime
from tether.services.compute import network_info
from tether.services.compute.instances import acting_for
from tether.services.compute.port_ownership import PortOwnership
from tether.services.context import RequestContext
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.network import NetworkService


# How an instance's nodes are released; emulation supplies upstream's order. ``unplug_point``
# is the checkpoint a delete passes between tear-down and unplugging, in upstream's order.
ReleaseNodes = Callable[["Release", Instance, "str | None"], Awaitable[None]]


async def detach_listed_vifs_then_unprovision(release: Release, instance: Instance, unplug_point: str | None) -> None:
    ctx = acting_for(instance)
    for node in await release.nodes_of(instance):
        # rule 1 (seed 000): detach what the node lists, not what the cache says. Only a node that is
        # torn down has a second layer (its tear-down detaches them too), so only there can this be off.
        if node.provision_state not in bms.UNPROVISION_STATES or release.rt.protection_on(
                "compute.delete.detach_node_vifs"):
            for vif in await release.baremetal.vif_list(ctx, node.uuid):
                await release.detach_from_node(ctx, node.uuid, vif)
        await release.rt.checkpoint("compute.delete.before_node_teardown")
        await release.unprovision(instance, node)


@dataclass(eq=False)
class Release:
    store: Store
    rt: Runtime
    _: KW_ONLY
    hypervisor: FakeHypervisor
    baremetal: BaremetalService
    network: NetworkService
    ownership: PortOwnership
    node_poll_interval: float
    node_teardown_timeout: float
    release_nodes: ReleaseNodes = detach_listed_vifs_then_unprovision

    async def release_all(self, instance: Instance, unplug_point: str | None = None) -> None:
        if instance.is_baremetal:
            await self.release_nodes(self, instance, unplug_point)
        else:
            await self.release_guest(instance)
        await self.rt.checkpoint("compute.delete.before_port_cleanup")
        await self.release_ports(instance)

    async def release_guest(self, instance: Instance) -> None:
        # rule 1 (seed 004): unplug what the hypervisor really has, whatever the cache says.
        for interface in self.hypervisor.interfaces(instance_uuid=instance.uuid):
            self.hypervisor.unplug(interface.host, instance.uuid, interface.port_id)
        for host, uuid in self.hypervisor.domains():
            if uuid == instance.uuid:
                self.hypervisor.destroy_domain(host, uuid)

    async def nodes_of(self, instance: Instance) -> list[Node]:
        """Every node that says it runs this instance, plus the one the instance names."""
        nodes = {node.uuid: node for node in await self.baremetal.list_nodes(
            acting_for(instance), instance_uuid=instance.uuid)}
        if instance.node and instance.node not in nodes:
            node = await self.baremetal.find_node(instance.node)
            if node is not None and node.instance_uuid == instance.uuid:
                nodes[node.uuid] = node
        return list(nodes.values())

    async def detach_from_node(
        self, ctx: RequestContext, node_uuid: str, vif: str, ignore_all: bool = False
    ) -> None:
        try:
            await self.baremetal.vif_detach(ctx, node_uuid, vif)
        except be.VifNotAttached:
            pass
        except be.NodeLocked:
            self.rt.note(f"node {node_uuid} is busy; its tear-down detaches VIF {vif}")
        except TetherError as error:
            if not ignore_all:
                raise
            self.rt.note(f"ignored: {error}")

    async def unprovision(self, instance: Instance, node: Node) -> None:
        current = await self.baremetal.find_node(node.uuid)
        if current is None or current.instance_uuid != instance.uuid:
            return
        if current.provision_state in bms.UNPROVISION_STATES:
            try:
                await self.baremetal.set_provision_state(acting_for(instance), node.uuid, "deleted")
            except (be.InvalidStateRequested, be.NodeNotFound) as error:
                self.rt.note(f"node {node.uuid} not torn down: {error}")
            await self._wait_for_node_released(instance, node.uuid)
        else:
            await self.baremetal.release_node(node.uuid, instance.uuid)

    async def _wait_for_node_released(self, instance: Instance, node_uuid: str) -> None:
        deadline = self.rt.now() + self.node_teardown_timeout
        while self.rt.now() < deadline:
            node = await self.baremetal.find_node(node_uuid)
            if node is None or (node.instance_uuid != instance.uuid and node.provision_state != bms.DELETING):
                return
            await self.rt.wait(self.baremetal.node_key(node_uuid), self.node_poll_interval, guard=True)
        self.rt.note(f"node {node_uuid} still tearing down; its reconciler takes over")

    async def release_ports(self, instance: Instance) -> None:
        ctx = acting_for(instance)
        async with self.store.begin() as conn:
            cached = await network_info.cached_vifs(conn, instance.uuid)
        bound = {port.id: port for port in await self.network.list_ports(ctx, device_id=instance.uuid)}
        for entry in cached:
            if entry.port_id not in bound:
                port = await self.network.find_port(entry.port_id)
                if port is not None and port.device_id == instance.uuid:
                    bound[port.id] = port
        for port in bound.values():
            await self.ownership.give_back(port)
        async with self.store.begin() as conn:
            for entry in cached:
                await network_info.drop_vif(conn, instance.uuid, entry.port_id)
