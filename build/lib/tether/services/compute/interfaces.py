"""Interface attach and detach (os-interface).

Rule 4 (seed 004): attach, detach, the port-deleted event and cache refreshes
run under the instance's lock, and after plugging a device the attach checks
that its port still exists and is still ours, undoing the plug if not.
"""

from __future__ import annotations

import contextlib
import ipaddress
from typing import TYPE_CHECKING

from tether.domain import compute_states as vm
from tether.domain.compute import Instance, VifEntry
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.domain.network import CREATED_BY_COMPUTE, DEFAULT_COMPUTE_OWNER, Port
from tether.services.compute import network_info, records
from tether.services.compute.translate import network_error
from tether.services.context import RequestContext
from tether.store import intents

if TYPE_CHECKING:
    from tether.services.compute.service import ComputeService

ZOMBIE = "zombie-interface-on-attach-race"
MAX_TAG = 60


class InterfaceOps:
    async def attach_interface(
        self: ComputeService,
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
            instance = await self._visible_instance(conn, ctx, uuid)
        _require_attachable(instance, "attach_interface")
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
            await records.start_action(conn, ctx, uuid, "attach_interface", self.now())
            await intents.record(conn, intent_id, "attach", uuid,
                                 {"port_id": port_id, "request_id": ctx.request_id}, self.now())
        try:
            async with self.rt.locks.hold("instance", uuid):
                entry = await self._attach_locked(uuid, port_id, net_id, fixed_ip, tag)
        except BaseException as error:
            if isinstance(error, Exception):
                async with self.store.begin() as conn:
                    await records.finish_action(conn, ctx.request_id, uuid, self.now(), error=error)
                    await intents.forget(conn, intent_id)
            raise
        async with self.store.begin() as conn:
            await records.finish_action(conn, ctx.request_id, uuid, self.now())
            await intents.forget(conn, intent_id)
        return entry

    async def _attach_locked(
        self: ComputeService, uuid: str, port_id: str | None, net_id: str | None,
        fixed_ip: str | None, tag: str | None,
    ) -> VifEntry:
        instance = await self._live_instance(uuid)
        if instance is None:
            raise ce.InstanceNotFound(instance_id=uuid)
        _require_attachable(instance, "attach_interface")
        host = instance.node if instance.is_baremetal else instance.host
        try:
            if port_id is not None:
                # Seed 004 test 3: a port already gone fails here, before any guest device.
                port = await self.network.bind_port(
                    port_id, device_id=uuid, device_owner=DEFAULT_COMPUTE_OWNER, host_id=host or "",
                    vnic_type="baremetal" if instance.is_baremetal else None)
            else:
                port = await self.network.create_port(
                    self._internal(instance), network_id=net_id or "",
                    fixed_ips=[{"ip_address": fixed_ip}] if fixed_ip else None, device_id=uuid,
                    device_owner=DEFAULT_COMPUTE_OWNER, binding_host_id=host or "",
                    project_id=instance.project_id, created_by=CREATED_BY_COMPUTE)
        except TetherError as error:
            raise network_error(error, port_id=port_id, network_id=net_id) from None
        preserve = port.created_by != CREATED_BY_COMPUTE
        if ZOMBIE in self.rt.bugs:
            return await self._attach_like_nova(instance, port, preserve, tag)
        try:
            await self.rt.checkpoint("compute.attach_interface.before_driver_attach")
            await self._plug(instance, port)
            await self.rt.checkpoint("compute.attach_interface.before_cache_update")
            # rule 4 (seed 004): the port may have been deleted while we plugged it.
            current = await self.network.find_port(port.id)
            if current is None or current.device_id != uuid:
                raise ce.PortNotFound(port_id=port.id)
            async with self.store.begin() as conn:
                return await network_info.add_vif(conn, uuid, current, preserve, tag)
        except Exception:
            await self._undo_attach(instance, port)
            raise

    async def _attach_like_nova(
        self: ComputeService, instance: Instance, port: Port, preserve: bool, tag: str | None
    ) -> VifEntry:
        """Emulated seed 004: bind, cache, then plug, with no re-check and no shared lock."""
        await self.rt.checkpoint("compute.attach_interface.before_cache_update")
        async with self.store.begin() as conn:
            entry = await network_info.add_vif(conn, instance.uuid, port, preserve, tag)
        await self.rt.checkpoint("compute.attach_interface.before_driver_attach")
        await self._plug(instance, port)
        return entry

    async def _plug(self: ComputeService, instance: Instance, port: Port) -> None:
        if instance.is_baremetal:
            try:
                await self.baremetal.vif_attach(self._internal(instance), instance.node or "", port.id)
            except TetherError as error:
                failed = ce.InterfaceAttachFailed(instance_uuid=instance.uuid).message
                raise ce.ComputeConflict(reason=f"{failed}: {error.message}") from None
        else:
            self.hypervisor.plug(instance.host or "", instance.uuid, port.id, port.mac_address)

    async def _unplug(self: ComputeService, instance: Instance, port_id: str) -> None:
        if instance.is_baremetal:
            with contextlib.suppress(be.VifNotAttached, be.NodeNotFound):
                await self.baremetal.vif_detach(self._internal(instance), instance.node or "", port_id)
        else:
            self.hypervisor.unplug(instance.host or "", instance.uuid, port_id)

    async def _undo_attach(self: ComputeService, instance: Instance, port: Port) -> None:
        await self._unplug(instance, port.id)
        await self.give_back_port(port)

    async def detach_interface(self: ComputeService, ctx: RequestContext, uuid: str, port_id: str) -> None:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-attach-interfaces:delete")
        async with self.store.begin() as conn:
            instance = await self._visible_instance(conn, ctx, uuid)
        _require_attachable(instance, "detach_interface")
        async with self.store.begin() as conn:
            cached = {entry.port_id for entry in await network_info.cached_vifs(conn, uuid)}
        if port_id not in cached:
            raise ce.PortNotAttached(port_id=port_id)
        async with self.store.begin() as conn:
            await records.start_action(conn, ctx, uuid, "detach_interface", self.now())
        error: Exception | None = None
        try:
            async with self.rt.locks.hold("instance", uuid):
                await self._detach_locked(uuid, port_id)
        except Exception as failure:
            error = failure
        async with self.store.begin() as conn:
            await records.finish_action(conn, ctx.request_id, uuid, self.now(), error=error)
        if error is not None:
            raise error

    async def _detach_locked(self: ComputeService, uuid: str, port_id: str) -> None:
        instance = await self._live_instance(uuid)
        if instance is None:
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            entries = {entry.port_id: entry for entry in await network_info.cached_vifs(conn, uuid)}
        if port_id not in entries:
            raise ce.PortNotAttached(port_id=port_id)
        await self.rt.checkpoint("compute.detach_interface.before_driver_detach")
        await self._unplug(instance, port_id)
        await self.rt.checkpoint("compute.detach_interface.before_unbind")
        port = await self.network.find_port(port_id)
        if port is not None and port.device_id == uuid:
            if port.created_by == CREATED_BY_COMPUTE:
                await self.network.delete_port(self._internal(instance), port_id)
            else:
                await self.network.release_port(port_id, reset_mac=False)
        async with self.store.begin() as conn:
            # rule 1: the entry goes only now that the device and the binding are gone.
            await network_info.drop_vif(conn, uuid, port_id)

    async def list_interfaces(
        self: ComputeService, ctx: RequestContext, uuid: str
    ) -> list[tuple[VifEntry, Port | None]]:
        async with self.store.begin() as conn:
            await self._visible_instance(conn, ctx, uuid)
            entries = await network_info.cached_vifs(conn, uuid)
        return [(entry, await self.network.find_port(entry.port_id)) for entry in entries]

    async def get_interface(
        self: ComputeService, ctx: RequestContext, uuid: str, port_id: str
    ) -> tuple[VifEntry, Port | None]:
        for entry, port in await self.list_interfaces(ctx, uuid):
            if entry.port_id == port_id:
                return entry, port
        try:
            await self.network.get_port(ctx, port_id)
        except TetherError:
            raise ce.PortNotFound(port_id=port_id) from None
        raise ce.ComputeNotFound(reason=f"Instance {uuid} does not have a port with id {port_id}")


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


def _require_attachable(instance: Instance, action: str) -> None:
    if instance.vm_state not in (vm.ACTIVE, vm.STOPPED) or instance.task_state is not None:
        attr, state = ("task_state", instance.task_state) if instance.task_state else ("vm_state", instance.vm_state)
        raise ce.InstanceInvalidState(action=action, instance_uuid=instance.uuid, attr=attr, state=state)


