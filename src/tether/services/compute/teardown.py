"""Deleting an instance and releasing what it holds.

Rule 1 (seeds 000, 004): act on the union of the info cache and the truth
(the hypervisor's guest interfaces, the node's VIF list, the ports bound to
the instance). Rule 2 (seed 001): delete the ports compute created, release
the ones the user brought.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.services.compute import network_info, records
from tether.services.context import RequestContext
from tether.store import intents, repos

if TYPE_CHECKING:
    from tether.domain.baremetal import Node
    from tether.services.compute.service import ComputeService

STALE_VIF = "stale-vif-on-terminate"


class TeardownOps:
    async def _delete(self: ComputeService, uuid: str, request_id: str) -> None:
        async with self.rt.locks.hold("instance", uuid):
            instance = await self._live_instance(uuid)
            if instance is None:
                async with self.store.begin() as conn:
                    await intents.forget(conn, f"delete:{uuid}")
                return
            try:
                if STALE_VIF in self.rt.bugs and instance.is_baremetal:
                    # Emulated seed 000: nova's destroy unprovisions before it unplugs.
                    await self._release_resources(instance, unplug_point="compute.delete.before_unplug")
                else:
                    await self.rt.checkpoint("compute.delete.before_unplug")
                    await self._release_resources(instance)
            except Exception as error:
                await self._fail_delete(instance, request_id, error)
                return
            await self._mark_deleted(instance, request_id)

    async def _mark_deleted(self: ComputeService, instance: Instance, request_id: str) -> None:
        now = self.now()
        async with self.store.begin() as conn:
            # Finished before the host is cleared: the event keeps the host the delete ran on.
            await records.finish_action(conn, request_id, instance.uuid, now, instance=instance)
            await repos.instances.update(
                conn, instance.uuid, vm_state=vm.DELETED, task_state=None, power_state=vm.NOSTATE,
                deleted=True, deleted_at=now, host=None, node=None, deadline=None, updated_at=now)
            await repos.instance_vifs.delete_where(conn, instance_uuid=instance.uuid)
            await intents.forget(conn, f"delete:{instance.uuid}")
            await intents.forget(conn, f"build:{instance.uuid}")
        self.rt.note(f"server {instance.name} deleted")
        self.rt.notify(("instance", instance.uuid))

    async def _fail_delete(self: ComputeService, instance: Instance, request_id: str, error: Exception) -> None:
        self.rt.note(f"delete of {instance.name} failed: {error}")
        now = self.now()
        async with self.store.begin() as conn:
            await repos.instances.update(conn, instance.uuid, vm_state=vm.ERROR, task_state=None,
                                         deadline=None, updated_at=now)
            await records.record_fault(conn, instance.uuid, error, now)
            await records.finish_action(conn, request_id, instance.uuid, now, error=error)
            await intents.forget(conn, f"delete:{instance.uuid}")
        self.rt.notify(("instance", instance.uuid))

    # -- releasing ---------------------------------------------------------------

    async def _release_resources(self: ComputeService, instance: Instance, unplug_point: str | None = None) -> None:
        if instance.is_baremetal:
            await self._release_node(instance, unplug_point)
        else:
            await self._release_guest(instance)
        await self.rt.checkpoint("compute.delete.before_port_cleanup")
        await self._release_ports(instance)

    async def _release_guest(self: ComputeService, instance: Instance) -> None:
        # rule 1 (seed 004): unplug what the hypervisor really has, whatever the cache says.
        for interface in self.hypervisor.interfaces(instance_uuid=instance.uuid):
            self.hypervisor.unplug(interface.host, instance.uuid, interface.port_id)
        for host, uuid in self.hypervisor.domains():
            if uuid == instance.uuid:
                self.hypervisor.destroy_domain(host, uuid)

    async def _nodes_of(self: ComputeService, instance: Instance) -> list[Node]:
        """Every node that says it runs this instance, plus the one the instance names."""
        nodes = {node.uuid: node for node in await self.baremetal.list_nodes(
            self._internal(instance), instance_uuid=instance.uuid)}
        if instance.node and instance.node not in nodes:
            node = await self.baremetal.find_node(instance.node)
            if node is not None and node.instance_uuid == instance.uuid:
                nodes[node.uuid] = node
        return list(nodes.values())

    async def _release_node(self: ComputeService, instance: Instance, unplug_point: str | None = None) -> None:
        ctx = self._internal(instance)
        like_pike = STALE_VIF in self.rt.bugs
        async with self.store.begin() as conn:
            cached = [entry.port_id for entry in await network_info.cached_vifs(conn, instance.uuid)]
        for node in await self._nodes_of(instance):
            if not like_pike:
                # rule 1 (seed 000): detach what the node lists, not what the cache says.
                for vif in await self.baremetal.vif_list(ctx, node.uuid):
                    await self._detach_from_node(ctx, node.uuid, vif)
            await self.rt.checkpoint("compute.delete.before_node_teardown")
            await self._unprovision(instance, node)
            if like_pike:
                # Emulated seed 000: only afterwards, and only what the cache still lists.
                if unplug_point is not None:
                    await self.rt.checkpoint(unplug_point)
                    cached = [e.port_id for e in await self._cached(instance.uuid)]
                for vif in cached:
                    await self._detach_from_node(ctx, node.uuid, vif, ignore_all=True)
                await self.baremetal.release_node(node.uuid, instance.uuid)

    async def _cached(self: ComputeService, uuid: str) -> list:  # type: ignore[type-arg]
        async with self.store.begin() as conn:
            return await network_info.cached_vifs(conn, uuid)

    async def _detach_from_node(
        self: ComputeService, ctx: RequestContext, node_uuid: str, vif: str, ignore_all: bool = False
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

    async def _unprovision(self: ComputeService, instance: Instance, node: Node) -> None:
        current = await self.baremetal.find_node(node.uuid)
        if current is None or current.instance_uuid != instance.uuid:
            return
        if current.provision_state in bms.UNPROVISION_STATES:
            try:
                await self.baremetal.set_provision_state(self._internal(instance), node.uuid, "deleted")
            except (be.InvalidStateRequested, be.NodeNotFound) as error:
                self.rt.note(f"node {node.uuid} not torn down: {error}")
            await self._wait_for_node_released(instance, node.uuid)
        else:
            await self.baremetal.release_node(node.uuid, instance.uuid)

    async def _wait_for_node_released(self: ComputeService, instance: Instance, node_uuid: str) -> None:
        deadline = self.now() + self.node_teardown_timeout
        while self.now() < deadline:
            node = await self.baremetal.find_node(node_uuid)
            if node is None or (node.instance_uuid != instance.uuid and node.provision_state != bms.DELETING):
                return
            await self.rt.wait(self.baremetal.node_key(node_uuid), self.node_poll_interval, guard=True)
        self.rt.note(f"node {node_uuid} still tearing down; its reconciler takes over")

    async def _release_ports(self: ComputeService, instance: Instance) -> None:
        ctx = self._internal(instance)
        async with self.store.begin() as conn:
            cached = await network_info.cached_vifs(conn, instance.uuid)
        bound = {port.id: port for port in await self.network.list_ports(ctx, device_id=instance.uuid)}
        for entry in cached:
            if entry.port_id not in bound:
                port = await self.network.find_port(entry.port_id)
                if port is not None and port.device_id == instance.uuid:
                    bound[port.id] = port
        for port in bound.values():
            await self.give_back_port(port)
        async with self.store.begin() as conn:
            for entry in cached:
                await network_info.drop_vif(conn, instance.uuid, entry.port_id)
