"""Interface attach (os-interface POST).

Rule 4 (seed 004): attach, detach, the port-deleted event and cache refreshes
run under the instance's lock, and after plugging a device the attach checks
that its port still exists and is still ours, undoing the plug if not.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain import compute_states as vm
from tether.domain.compute import Instance, VifEntry
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.domain.network import CREATED_BY_COMPUTE, DEFAULT_COMPUTE_OWNER, Port
from tether.runtime.runtime import Runtime
from tether.services.compute import network_info, records
from tether.services.compute.instances import Instances, acting_for, visible_instance
from tether.services.compute.plugging import Plugging
from tether.services.compute.port_ownership import PortOwnership
from tether.services.compute.translate import network_error
from tether.services.context import RequestContext
from tether.store import intents
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.network import NetworkService

MAX_TAG = 60

# Plugging a freshly bound port and recording it in the cache; emulation supplies upstream's order.
PlugAndRecord = Callable[["Attach", Instance, Port, bool, "str | None"], Awaitable[VifEntry]]


async def plug_then_record(attach: Attach, instance: Instance, port: Port, preserve: bool, tag: str | None) -> VifEntry:
    try:
        await attach.rt.checkpoint("compute.attach_interface.before_driver_attach")
        await attach.plugging.plug(instance, port)
        await attach.rt.checkpoint("compute.attach_interface.before_cache_update")
        # rule 4 (seed 004): the port may have been deleted while we plugged it.
        current = await attach.network.find_port(port.id)
        if current is None or current.device_id != instance.uuid:
            raise ce.PortNotFound(port_id=port.id)
        async with attach.store.begin() as conn:
            return await network_info.add_vif(conn, instance.uuid, current, preserve, tag)
    except Exception:
        await attach.plugging.unplug(instance, port.id)
        await attach.ownership.give_back(port)
        raise


@dataclass(eq=False)
class Attach:
    store: Store
    rt: Runtime
    _: KW_ONLY
    instances: Instances
    network: NetworkService
    plugging: Plugging
    ownership: PortOwnership
    plug_and_record: PlugAndRecord = plug_then_record

    async def attach_interface(
        self,
        ctx: RequestContext,
        uuid: str,
        *,
        port_id: str | None = None,
        net_id: str | None = None,
        fixed_ip: str | None = None,
        tag: str | None = None,
    ) -> VifEntry:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-attach-interfaces:create")
        _validate_attach_request(port_id, net_id, fixed_ip, tag)
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
        require_attachable(instance, "attach_interface")
        try:
            if port_id is not None:
                port = await self.network.get_port(ctx, port_id)
            else:
                await self.network.get_network(ctx, net_id)
        except TetherError as error:
            raise network_error(error, port_id=port_id, network_id=net_id) from None
        if port_id is not None and port.device_id:
            raise ce.PortInUse(port_id=port_id)
        intent_id = f"attach:{uuid}:{ctx.request_id}"
        async with self.store.begin() as conn:
            await records.start_action(conn, ctx, uuid, "attach_interface", self.rt.now())
            await intents.record(conn, intent_id, "attach", uuid,
                                 {"port_id": port_id, "request_id": ctx.request_id}, self.rt.now())
        try:
            async with self.rt.locks.hold("instance", uuid):
                entry = await self._attach_locked(uuid, port_id, net_id, fixed_ip, tag)
        except BaseException as error:
            if isinstance(error, Exception):
                async with self.store.begin() as conn:
                    await records.finish_action(conn, ctx.request_id, uuid, self.rt.now(), error=error)
                    await intents.forget(conn, intent_id)
            raise
        async with self.store.begin() as conn:
            await records.finish_action(conn, ctx.request_id, uuid, self.rt.now())
            await intents.forget(conn, intent_id)
        return entry

    async def _attach_locked(
        self, uuid: str, port_id: str | None, net_id: str | None, fixed_ip: str | None, tag: str | None,
    ) -> VifEntry:
        instance = await self.instances.live(uuid)
        if instance is None:
            raise ce.InstanceNotFound(instance_id=uuid)
        require_attachable(instance, "attach_interface")
        host = instance.node if instance.is_baremetal else instance.host
        try:
            if port_id is not None:
                # Seed 004 test 3: a port already gone fails here, before any guest device.
                port = await self.network.bind_port(
                    port_id, device_id=uuid, device_owner=DEFAULT_COMPUTE_OWNER, host_id=host or "",
                    vnic_type="baremetal" if instance.is_baremetal else None)
            else:
                port = await self.network.create_port(
                    acting_for(instance), network_id=net_id or "",
                    fixed_ips=[{"ip_address": fixed_ip}] if fixed_ip else None, device_id=uuid,
                    device_owner=DEFAULT_COMPUTE_OWNER, binding_host_id=host or "",
                    project_id=instance.project_id, created_by=CREATED_BY_COMPUTE)
        except TetherError as error:
            raise network_error(error, port_id=port_id, network_id=net_id) from None
        preserve = port.created_by != CREATED_BY_COMPUTE
        return await self.plug_and_record(self, instance, port, preserve, tag)


def _validate_attach_request(port_id: str | None, net_id: str | None, fixed_ip: str | None, tag: str | None) -> None:
    """What nova's request schema and controller refuse before anything happens (400)."""
    for attr, value in (("port_id", port_id), ("net_id", net_id)):
        if value is not None and not is_uuid_like(value):
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {attr}. Value: {value}.")
    if port_id is None and net_id is None:
        raise ce.ComputeBadRequest(reason="Must input network_id or port_id")
    if port_id is not None and net_id is not None:
        raise ce.ComputeBadRequest(reason="Must not input both network_id and port_id")
    if fixed_ip is not None:
        if net_id is None:
            raise ce.ComputeBadRequest(reason="Must input network_id when request IP address")
        try:
            ipaddress.ip_address(fixed_ip)
        except ValueError:
            raise ce.ComputeBadRequest(reason=f"Invalid fixed IP address ({fixed_ip})") from None
    if tag is not None and (not isinstance(tag, str) or len(tag) > MAX_TAG):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute tag.")


def require_attachable(instance: Instance, action: str) -> None:
    if instance.vm_state not in (vm.ACTIVE, vm.STOPPED) or instance.task_state is not None:
        attr, state = ("task_state", instance.task_state) if instance.task_state else ("vm_state", instance.vm_state)
        raise ce.InstanceInvalidState(action=action, instance_uuid=instance.uuid, attr=attr, state=state)
