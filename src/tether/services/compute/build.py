"""Building an instance: schedule, allocate ports, plug them, spawn, and always end somewhere.

Rule 3 (seed 003): a build ends ACTIVE, ERROR or deleted, never stuck in
BUILD. A node that vanishes or is torn down under a build is its own typed
failure (``NodeVanished``), never confused with the user deleting the instance.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Flavor, Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.errors import compute as ce
from tether.domain.network import ACTIVE as PORT_ACTIVE
from tether.domain.network import CREATED_BY_COMPUTE, DEFAULT_COMPUTE_OWNER, Port
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state, network_info, records
from tether.services.compute.failure import InstanceFailure
from tether.services.compute.instances import Instances, acting_for
from tether.services.compute.node_vanished import NodeVanished, node_still_ours
from tether.services.compute.placement import Placement
from tether.services.compute.translate import network_error
from tether.store import intents, repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.network import NetworkService

# What a build does when its node vanished under it; emulation supplies upstream's answer.
OnNodeVanished = Callable[["Build", Instance, str, NodeVanished], Awaitable[None]]


async def fail_the_build(build: Build, instance: Instance, request_id: str, vanished: NodeVanished) -> None:
    # rule 3 (seed 003): the node vanished; the build failed, the instance was not deleted.
    await build.failure.fail(instance.uuid, request_id, ce.InstanceDeployFailure(
        instance_uuid=instance.uuid, reason=str(vanished)))


def abort_if_deleting(instance: Instance | None, uuid: str) -> None:
    """The user's delete wins over a build: stop building (it is no failure)."""
    if instance is None or instance.task_state == vm.DELETING or instance.vm_state in (vm.ERROR, vm.DELETED):
        raise ce.ProvisioningAborted(instance_uuid=uuid)


@dataclass(eq=False)
class Build:
    store: Store
    rt: Runtime
    _: KW_ONLY
    instances: Instances
    placement: Placement
    failure: InstanceFailure
    network: NetworkService
    baremetal: BaremetalService
    hypervisor: FakeHypervisor
    vif_plug_timeout: float
    node_poll_interval: float
    on_node_vanished: OnNodeVanished = fail_the_build

    async def run(self, uuid: str, request_id: str) -> None:
        async with self.rt.locks.hold("instance", uuid):
            async with self.store.begin() as conn:
                instance = await repos.instances.get(conn, uuid)
                if instance is None or instance.deleted:
                    return
                flavor = await repos.flavors.get(conn, instance.flavor_id)
            try:
                await self._build(instance, flavor, request_id)
            except NodeVanished as vanished:
                await self.on_node_vanished(self, instance, request_id, vanished)
            except ce.ProvisioningAborted as aborted:
                # The user deleted it: the delete finishes the job; this is no failure.
                self.rt.note(str(aborted))
                await self._end_for_delete(uuid, request_id, aborted)
            except Exception as error:
                await self.failure.fail(uuid, request_id, error)

    async def _build(self, instance: Instance, flavor: Flavor | None, request_id: str) -> None:
        """``instance`` and its ``flavor`` as read under the instance lock, with no checkpoint since."""
        if flavor is None:
            raise ce.FlavorNotFound(flavor_id=instance.flavor_id)
        abort_if_deleting(instance, instance.uuid)
        instance = await self.placement.claim(instance, flavor)
        await self.rt.checkpoint("compute.build.after_schedule")
        await self._advance(instance, "network")
        ports = await self._allocate_ports(instance)
        await self.rt.checkpoint("compute.build.before_vif_plug")
        abort_if_deleting(await self.instances.live(instance.uuid), instance.uuid)
        if instance.is_baremetal:
            await self._spawn_on_node(instance, ports)
        else:
            await self._spawn_on_hypervisor(instance, ports)
        await self._finish(instance.uuid, request_id)

    async def _advance(self, instance: Instance, event: str) -> None:
        """Move the build on, unless someone else changed the instance since this build did:
        a delete that already started wins, and its task_state is never overwritten."""
        async with self.store.begin() as conn:
            moved = await instance_state.move(conn, instance, event, self.rt.now(), unless_changed=True)
        if moved:
            instance.vm_state, instance.task_state = vm.next_state(instance.vm_state, instance.task_state, event)

    # -- networking ---------------------------------------------------------------

    async def _allocate_ports(self, instance: Instance) -> list[Port]:
        ports: list[Port] = []
        ctx = acting_for(instance)
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
                        project_id=instance.project_id, created_by=CREATED_BY_COMPUTE,
                        security_groups=requested.get("security_groups"))
                    preserve = False
            except TetherError as error:
                raise network_error(error, port_id=requested.get("port_id"),
                                    network_id=requested.get("network_id")) from None
            async with self.store.begin() as conn:
                await network_info.add_vif(conn, instance.uuid, port, preserve, requested.get("tag"))
            ports.append(port)
        return ports

    # -- spawning -------------------------------------------------------------------

    async def _spawn_on_hypervisor(self, instance: Instance, ports: list[Port]) -> None:
        host = instance.host or ""
        self.hypervisor.create_domain(host, instance.uuid)
        self.hypervisor.write_console(host, instance.uuid, *guest_data_lines(instance))
        for port in ports:
            self.hypervisor.plug(host, instance.uuid, port.id, port.mac_address)
        await self._advance(instance, "spawn")
        await self.rt.checkpoint("compute.build.wait_vif_plugged")
        deadline = self.rt.now() + self.vif_plug_timeout
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
            abort_if_deleting(await self.instances.live(instance.uuid), instance.uuid)
            remaining = deadline - self.rt.now()
            if remaining <= 0:
                raise ce.VirtualInterfaceCreateException()
            await self.rt.wait(("instance", instance.uuid), min(remaining, 5.0))

    async def _spawn_on_node(self, instance: Instance, ports: list[Port]) -> None:
        node_uuid = instance.node or ""
        for port in ports:
            try:
                await self.baremetal.vif_attach(acting_for(instance), node_uuid, port.id)
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
        abort_if_deleting(await self.instances.live(instance.uuid), instance.uuid)
        await self._advance(instance, "spawn")
        try:
            await self.baremetal.set_provision_state(acting_for(instance), node_uuid, "active")
        except be.NodeNotFound:
            raise NodeVanished(node_uuid, "deleted") from None
        except be.InvalidStateRequested as error:
            await node_still_ours(self.baremetal, instance, node_uuid)
            raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=error.message) from None
        await self._wait_for_node_active(instance, node_uuid)

    async def _wait_for_node_active(self, instance: Instance, node_uuid: str) -> None:
        while True:
            await self.rt.checkpoint("compute.build.wait_active")
            # The user's delete comes first: it is a delete, not a failure (seed 003 test 4).
            abort_if_deleting(await self.instances.live(instance.uuid), instance.uuid)
            node = await node_still_ours(self.baremetal, instance, node_uuid)
            if node.provision_state == bms.ACTIVE:
                return
            if node.provision_state == bms.DEPLOYFAIL:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=node.last_error or "deploy failed")
            current = await self.instances.live(instance.uuid)
            if current is not None and current.deadline is not None and self.rt.now() >= current.deadline:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid,
                                               reason=f"timed out waiting for node {node_uuid} to deploy")
            await self.rt.wait(self.baremetal.node_key(node_uuid), self.node_poll_interval, guard=True)

    # -- endings --------------------------------------------------------------------

    async def _finish(self, uuid: str, request_id: str) -> None:
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
            if instance is None or instance.deleted or instance.vm_state != vm.BUILDING \
                    or instance.task_state == vm.DELETING:
                raise ce.ProvisioningAborted(instance_uuid=uuid)
            await instance_state.move(conn, instance, "built", now, unless_changed=True, power_state=vm.RUNNING,
                                      launched_at=now, deadline=None)
            await records.finish_action(conn, request_id, uuid, now, instance=instance)
            await intents.forget(conn, f"build:{uuid}")
        self.rt.note(f"server {instance.name} ACTIVE")
        self.rt.notify(("instance", uuid))

    async def _end_for_delete(self, uuid: str, request_id: str, reason: BaseException) -> None:
        now = self.rt.now()
        async with self.store.begin() as conn:
            await records.finish_action(conn, request_id, uuid, now, error=reason)
            await intents.forget(conn, f"build:{uuid}")


def guest_data_lines(instance: Instance) -> list[str]:
    """What the fake guest's console says it was given at boot, as cloud-init would report it."""
    lines = [f"[tether] injected file {item['path']} ({len(base64.decodebytes(item['contents'].encode()))} bytes)"
             for item in instance.injected_files or []]
    if instance.config_drive:
        lines.append("[tether] config drive attached")
    if instance.user_data:
        lines.append(f"[tether] user data: {len(base64.decodebytes(instance.user_data.encode()))} bytes")
    return lines
