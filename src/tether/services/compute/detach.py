"""Interface detach (os-interface DELETE): unplug, give the port back, and only then forget it (rule 1)."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute import network_info, records
from tether.services.compute.attach import require_attachable
from tether.services.compute.instances import Instances, visible_instance
from tether.services.compute.plugging import Plugging
from tether.services.compute.port_ownership import PortOwnership
from tether.services.context import RequestContext
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.network import NetworkService


@dataclass(eq=False)
class Detach:
    store: Store
    rt: Runtime
    _: KW_ONLY
    instances: Instances
    network: NetworkService
    plugging: Plugging
    ownership: PortOwnership

    async def detach_interface(self, ctx: RequestContext, uuid: str, port_id: str) -> None:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-attach-interfaces:delete")
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
        require_attachable(instance, "detach_interface")
        async with self.store.begin() as conn:
            cached = {entry.port_id for entry in await network_info.cached_vifs(conn, uuid)}
        if port_id not in cached:
            raise ce.PortNotAttached(port_id=port_id)
        async with self.store.begin() as conn:
            await records.start_action(conn, ctx, uuid, "detach_interface", self.rt.now())
        error: Exception | None = None
        try:
            async with self.rt.locks.hold("instance", uuid):
                await self._detach_locked(uuid, port_id)
        except Exception as failure:
            error = failure
        async with self.store.begin() as conn:
            await records.finish_action(conn, ctx.request_id, uuid, self.rt.now(), error=error)
        if error is not None:
            raise error

    async def _detach_locked(self, uuid: str, port_id: str) -> None:
        instance = await self.instances.live(uuid)
        if instance is None:
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            entries = {entry.port_id: entry for entry in await network_info.cached_vifs(conn, uuid)}
        if port_id not in entries:
            raise ce.PortNotAttached(port_id=port_id)
        await self.rt.checkpoint("compute.detach_interface.before_driver_detach")
        await self.plugging.unplug(instance, port_id)
        await self.rt.checkpoint("compute.detach_interface.before_unbind")
        port = await self.network.find_port(port_id)
        if port is not None and port.device_id == uuid:
            await self.ownership.hand_back(port)
        async with self.store.begin() as conn:
            # rule 1: the entry goes only now that the device and the binding are gone.
            await network_info.drop_vif(conn, uuid, port_id)
