"""Building an instance: schedule, allocate ports, plug them, spawn, and always end somewhere.

Rule 3 (seed 003): a build ends ACTIVE, ERROR or deleted, never stuck in
BUILD. A node that vanishes or is torn down under a build is its own typed
failure (``NodeVanished``), never confused with the user deleting the instance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Flavor, Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.errors import compute as ce
from tether.domain.network import ACTIVE as PORT_ACTIVE
from tether.domain.network import CREATED_BY_COMPUTE, DEFAULT_COMPUTE_OWNER, Port
from tether.domain.placement import Usage, choose_hypervisor
from tether.services.compute import network_info, records
from tether.services.compute.translate import network_error
from tether.store import intents, repos

if TYPE_CHECKING:
    from tether.services.compute.service import ComputeService

STUCK_BUILD = "stuck-build-on-node-teardown"
ZOMBIE = "zombie-interface-on-attach-race"


class NodeVanished(Exception):
    """The node under a build was torn down, deleted or disassociated by someone else."""

    def __init__(self, node_uuid: str, how: str) -> None:
        super().__init__(f"the node {node_uuid} was {how} during the build")
        self.node_uuid, self.how = node_uuid, how


class BuildOps:
    async def _build(self: ComputeService, uuid: str, request_id: str) -> None:
        async with self.rt.locks.hold("instance", uuid):
            async with self.store.begin() as conn:
                instance = await repos.instances.get(conn, uuid)
                if instance is None or instance.deleted:
                    return
                flavor = await repos.flavors.get(conn, instance.flavor_id)
            try:
                await self._run_build(instance, flavor, request_id)
            except NodeVanished as vanished:
                if STUCK_BUILD in self.rt.bugs:
                    await self._lose_track_of_build(instance, request_id, vanished)
                    return
                await self._fail_instance(uuid, request_id, ce.InstanceDeployFailure(
                    instance_uuid=uuid, reason=str(vanished)))
            except ce.ProvisioningAborted as aborted:
                # The user deleted it: the delete finishes the job; this is no failure.
                self.rt.note(str(aborted))
                await self._end_build_for_delete(uuid, request_id, aborted)
            except Exception as error:
                await self._fail_instance(uuid, request_id, error)

    async def _run_build(self: ComputeService, instance: Instance, flavor: Flavor | None, request_id: str) -> None:
        """``instance`` and its ``flavor`` as read under the instance lock, with no checkpoint since."""
        if flavor is None:
            raise ce.FlavorNotFound(flavor_id=instance.flavor_id)
        self._abort_if_deleting(instance, instance.uuid)
        if flavor.is_baremetal:
            instance = await self._claim_node(instance, flavor)
        else:
            instance = await self._claim_hypervisor(instance, flavor)
        await self.rt.checkpoint("compute.build.after_schedule")
        await self._set_task_state(instance, vm.NETWORKING)
        ports = await self._allocate_ports(instance)
        await self.rt.checkpoint("compute.build.before_vif_plug")
        self._abort_if_deleting(await self._live_instance(instance.uuid), instance.uuid)
        if instance.is_baremetal:
            await self._spawn_on_node(instance, ports)
        else:
            await self._spawn_on_hypervisor(instance, ports)
        await self._finish_build(instance.uuid, request_id)

    def _abort_if_deleting(self: ComputeService, instance: Instance | None, uuid: str) -> None:
        if instance is None or instance.task_state == vm.DELETING or instance.vm_state in (vm.ERROR, vm.DELETED):
            raise ce.ProvisioningAborted(instance_uuid=uuid)

    async def _set_task_state(self: ComputeService, instance: Instance, task_state: str) -> None:
        """Move the build on, unless someone else changed the task state since this build set it:
        a delete that already started wins, and its task_state is never overwritten."""
        async with self.store.begin() as conn:
            moved = await repos.instances.update(conn, instance.uuid,
                                                 expect={"vm_state": vm.BUILDING, "task_state": instance.task_state},
                                                 task_state=task_state, updated_at=self.now())
        if moved:
            instance.task_state = task_state

    # -- scheduling ---------------------------------------------------------------

    async def _claim_hypervisor(self: ComputeService, instance: Instance, flavor: Flavor) -> Instance:
        async with self.store.begin() as conn:
            hypervisors = await repos.hypervisors.find(conn, order_by=("hostname",))
            flavors = {known.id: known for known in await repos.flavors.find(conn)}
            # Counted by the database: reading every live instance would cost each build O(instances).
            placed = await repos.instances.tally(conn, ("host", "flavor_id"), deleted=False, is_baremetal=False)
            usage: dict[str, Usage] = {}
            for host, flavor_id, count in placed:
                if host == instance.host and flavor_id == instance.flavor_id:
                    count -= 1  # not a neighbour of itself
                other_flavor = flavors.get(flavor_id)
                if host and other_flavor is not None and count > 0:
                    usage[host] = usage.get(host, Usage()).plus(other_flavor, count)
            chosen = choose_hypervisor(hypervisors, usage, flavor)
            if chosen is None:
                raise ce.NoValidHost(reason="There are not enough hosts available.")
            await repos.instances.update(conn, instance.uuid, host=chosen.hostname, node=chosen.hostname,
                                         updated_at=self.now())
        self.rt.note(f"{instance.name} scheduled to hypervisor {chosen.hostname}")
        instance.host = instance.node = chosen.hostname
        return instance

    async def _claim_node(self: ComputeService, instance: Instance, flavor: Flavor) -> Instance:
        for node in await self.baremetal.find_free_nodes(flavor.resource_class or ""):
            if await self.baremetal.claim_node(node.uuid, instance.uuid, {"image_source": instance.image_id}):
                from tether.services.compute.service import BAREMETAL_HOST

                async with self.store.begin() as conn:
                    await repos.instances.update(conn, instance.uuid, host=BAREMETAL_HOST, node=node.uuid,
                                                 updated_at=self.now())
                self.rt.note(f"{instance.name} scheduled to node {node.name or node.uuid}")
                instance.host, instance.node = BAREMETAL_HOST, node.uuid
                return instance
        raise ce.NoValidHost(reason=f"No available node of resource class {flavor.resource_class}.")

    # -- networking ---------------------------------------------------------------

    async def _allocate_ports(self: ComputeService, instance: Instance) -> list[Port]:
        ports: list[Port] = []
        ctx = self._internal(instance)
        host = instance.node if instance.is_baremetal else instance.host
        vnic = "baremetal" if instance.is_baremetal else "normal"
        for requested in instance.requested_networks or []:
            try:
                if requested.get("port_id"):
                    port = await self.network.bind_port(
                        requested["port_id"], device_id=instance.uuid, device_owner=DEFAULT_COMPUTE_OWNER,
                        host_id=host or "", vnic_type=vnic)
                    preserve = True
                else:
                    fixed = [{"ip_address": requested["fixed_ip"]}] if requested.get("fixed_ip") else None
                    port = await self.network.create_port(
                        ctx, network_id=requested["network_id"], fixed_ips=fixed, device_id=instance.uuid,
                        device_owner=DEFAULT_COMPUTE_OWNER, binding_host_id=host or "", binding_vnic_type=vnic,
                        project_id=instance.project_id, created_by=CREATED_BY_COMPUTE)
                    preserve = False
            except TetherError as error:
                raise network_error(error, port_id=requested.get("port_id"),
                                    network_id=requested.get("network_id")) from None
            async with self.store.begin() as conn:
                await network_info.add_vif(conn, instance.uuid, port, preserve, requested.get("tag"))
            ports.append(port)
        return ports

    # -- spawning -------------------------------------------------------------------

    async def _spawn_on_hypervisor(self: ComputeService, instance: Instance, ports: list[Port]) -> None:
        host = instance.host or ""
        self.hypervisor.create_domain(host, instance.uuid)
        for port in ports:
            self.hypervisor.plug(host, instance.uuid, port.id, port.mac_address)
        await self._set_task_state(instance, vm.SPAWNING)
        await self.rt.checkpoint("compute.build.wait_vif_plugged")
        deadline = self.now() + self.vif_plug_timeout
        waiting = {port.id for port in ports}
        while waiting:
            for port_id in sorted(waiting):
                port = await self.network.find_port(port_id)
                if port is None or port.device_id != instance.uuid:
                    # rule 4 (seed 004): re-check after the side effect; the port went away.
                    raise ce.PortNotFound(port_id=port_id)
                if port.status == PORT_ACTIVE:
                    waiting.discard(port_id)
            if not waiting:
                break
            self._abort_if_deleting(await self._live_instance(instance.uuid), instance.uuid)
            remaining = deadline - self.now()
            if remaining <= 0:
                raise ce.VirtualInterfaceCreateException()
            await self.rt.wait(("instance", instance.uuid), min(remaining, 5.0))

    async def _spawn_on_node(self: ComputeService, instance: Instance, ports: list[Port]) -> None:
        node_uuid = instance.node or ""
        for port in ports:
            try:
                await self.baremetal.vif_attach(self._internal(instance), node_uuid, port.id)
            except be.NodeNotFound:
                raise NodeVanished(node_uuid, "deleted") from None
            except TetherError as error:
                raise ce.BuildAbortException(
                    instance_uuid=instance.uuid,
                    reason=ce.VirtualInterfacePlugException(vif=port.id, node=node_uuid, error=error.message).message,
                ) from None
            refreshed = await self.network.find_port(port.id)
            if refreshed is not None:
                async with self.store.begin() as conn:
                    await network_info.refresh_vif(conn, instance.uuid, refreshed)
        await self.rt.checkpoint("compute.build.before_node_deploy")
        self._abort_if_deleting(await self._live_instance(instance.uuid), instance.uuid)
        await self._set_task_state(instance, vm.SPAWNING)
        try:
            await self.baremetal.set_provision_state(self._internal(instance), node_uuid, "active")
        except be.NodeNotFound:
            raise NodeVanished(node_uuid, "deleted") from None
        except be.InvalidStateRequested as error:
            await self._raise_if_vanished(instance, node_uuid)
            raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=error.message) from None
        await self._wait_for_node_active(instance, node_uuid)

    async def _wait_for_node_active(self: ComputeService, instance: Instance, node_uuid: str) -> None:
        while True:
            await self.rt.checkpoint("compute.build.wait_active")
            # The user's delete comes first: it is a delete, not a failure (seed 003 test 4).
            self._abort_if_deleting(await self._live_instance(instance.uuid), instance.uuid)
            node = await self._raise_if_vanished(instance, node_uuid)
            if node.provision_state == bms.ACTIVE:
                return
            if node.provision_state == bms.DEPLOYFAIL:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=node.last_error or "deploy failed")
            current = await self._live_instance(instance.uuid)
            if current is not None and current.deadline is not None and self.now() >= current.deadline:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid,
                                               reason=f"timed out waiting for node {node_uuid} to deploy")
            await self.rt.wait(self.baremetal.node_key(node_uuid), self.node_poll_interval, guard=True)

    async def _raise_if_vanished(self: ComputeService, instance: Instance, node_uuid: str) -> Any:
        # rule 3 (seed 003): a node gone from under the build is its own failure, never
        # "instance not found".
        node = await self.baremetal.find_node(node_uuid)
        if node is None:
            raise NodeVanished(node_uuid, "deleted")
        if node.instance_uuid != instance.uuid:
            raise NodeVanished(node_uuid, "torn down" if node.provision_state in _TORN_DOWN else "disassociated")
        if node.provision_state in _TORN_DOWN or node.target_provision_state in (bms.AVAILABLE, "deleted"):
            raise NodeVanished(node_uuid, "torn down")
        return node

    # -- endings --------------------------------------------------------------------

    async def _finish_build(self: ComputeService, uuid: str, request_id: str) -> None:
        now = self.now()
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
            changed = await repos.instances.update(
                conn, uuid, expect={"vm_state": vm.BUILDING, "deleted": False},
                vm_state=vm.ACTIVE, task_state=None, power_state=vm.RUNNING, launched_at=now,
                deadline=None, updated_at=now)
            if not changed or (instance is not None and instance.task_state == vm.DELETING):
                raise ce.ProvisioningAborted(instance_uuid=uuid)
            await records.finish_action(conn, request_id, uuid, now, instance=instance)
            await intents.forget(conn, f"build:{uuid}")
        self.rt.note(f"server {instance.name if instance else uuid} ACTIVE")
        self.rt.notify(("instance", uuid))

    async def _fail_instance(self: ComputeService, uuid: str, request_id: str, error: BaseException) -> None:
        """Release everything the instance holds, then ERROR with the fault (rules 2 and 3)."""
        self.rt.note(f"build of {uuid} failed: {error}")
        await self.rt.checkpoint("compute.build.before_cleanup")
        instance = await self._live_instance(uuid)
        if instance is None:
            return
        await self._release_resources(instance)
        now = self.now()
        async with self.store.begin() as conn:
            current = await repos.instances.get(conn, uuid)
            deleting = current is not None and current.task_state == vm.DELETING
            await repos.instances.update(
                conn, uuid, vm_state=vm.ERROR, task_state=vm.DELETING if deleting else None,
                power_state=vm.NOSTATE, host=None, node=None, deadline=None, updated_at=now)
            await records.record_fault(conn, uuid, error, now)
            await records.finish_action(conn, request_id, uuid, now, error=error)
            await intents.forget(conn, f"build:{uuid}")
        self.rt.notify(("instance", uuid))

    async def _end_build_for_delete(self: ComputeService, uuid: str, request_id: str, reason: BaseException) -> None:
        now = self.now()
        async with self.store.begin() as conn:
            await records.finish_action(conn, request_id, uuid, now, error=reason)
            await intents.forget(conn, f"build:{uuid}")

    async def _lose_track_of_build(
        self: ComputeService, instance: Instance, request_id: str, vanished: NodeVanished
    ) -> None:
        """Emulated seed 003: nova takes the vanished node for 'instance not found'.

        It cleans up the networks and returns without touching the instance,
        which stays in BUILD with no fault.
        """
        self.rt.note("Instance disappeared during build.")
        await self._release_ports(instance)
        async with self.store.begin() as conn:
            await intents.forget(conn, f"build:{instance.uuid}")


_TORN_DOWN = (bms.AVAILABLE, bms.DELETING, bms.CLEANING, bms.CLEANWAIT, bms.MANAGEABLE, bms.ENROLL)
