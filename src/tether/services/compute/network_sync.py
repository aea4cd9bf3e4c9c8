"""Bringing an instance's network in line with the truth: the port-deleted event, cache refreshes.

An event only says which instance to look at (level-triggered, after
controller-runtime), so lost or reordered events are harmless. Both end in
``reconcile``, under the instance lock (rule 4), which acts on the union of
the cache and what the owners of the facts report (rule 1).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.runtime.runtime import Runtime
from tether.services.compute import network_info
from tether.services.compute.instances import Instances, acting_for
from tether.services.compute.plugging import Plugging
from tether.services.compute.port_ownership import PortOwnership
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.network import NetworkService

# How the port-deleted event and a cache refresh are handled; emulation supplies upstream's.
OnVifDeleted = Callable[["NetworkSync", str, str], Awaitable[None]]
OnRefresh = Callable[["NetworkSync", str], Awaitable[None]]


async def reconcile_on_vif_deleted(sync: NetworkSync, uuid: str, port_id: str) -> None:
    await sync.reconcile(uuid, point="compute.vif_deleted.before_detach")


async def reconcile_on_refresh(sync: NetworkSync, uuid: str) -> None:
    await sync.reconcile(uuid, point="compute.refresh_cache.before_drop")


@dataclass(eq=False)
class NetworkSync:
    store: Store
    rt: Runtime
    _: KW_ONLY
    instances: Instances
    network: NetworkService
    plugging: Plugging
    ownership: PortOwnership
    on_vif_deleted: OnVifDeleted = reconcile_on_vif_deleted
    on_refresh: OnRefresh = reconcile_on_refresh

    async def vif_deleted(self, uuid: str, port_id: str) -> None:
        """network-vif-deleted: the port is gone; so must be its device and cache entry."""
        await self.on_vif_deleted(self, uuid, port_id)

    async def refresh(self, uuid: str) -> None:
        """network-changed and the periodic heal: bring the cache in line with the truth."""
        await self.on_refresh(self, uuid)

    async def reconcile(self, uuid: str, point: str = "compute.refresh_cache.before_drop") -> bool:
        """Make the cache, the plugged devices and the ports of a settled instance agree.

        Returns True when something had to change. An instance that is being
        built or deleted is left to that operation, which owns it; one in a
        server action's task state is not (found by the explorer): the lock
        held here means the action's work is not under way, and a port-deleted
        event skipped for it would leave the guest's device behind.
        """
        async with self.rt.locks.hold("instance", uuid):
            instance = await self.instances.live(uuid)
            if instance is None or instance.vm_state not in vm.SETTLED or \
                    (instance.task_state is not None and instance.task_state not in vm.ACTION_STEPS):
                return False
            return await self._reconcile_locked(instance, point)

    async def _reconcile_locked(self, instance: Instance, point: str) -> bool:
        uuid = instance.uuid
        async with self.store.begin() as conn:
            cached = {entry.port_id: entry for entry in await network_info.cached_vifs(conn, uuid)}
        plugged = set(await self.plugging.plugged_ports(instance))
        ours = {port.id: port for port in await self.network.list_ports(acting_for(instance), device_id=uuid)}
        changed = False
        # rule 1 (seeds 000, 004): unplug first, drop the cache entry only once the device is gone.
        for port_id in sorted((set(cached) | plugged) - set(ours)):
            await self.rt.checkpoint(point)
            if port_id in plugged:
                await self.plugging.unplug(instance, port_id)
            async with self.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)
            changed = True
        # rule 2: a port bound to us that we do not list was left by an interrupted attach.
        for port_id in sorted(set(ours) - set(cached)):
            if port_id in plugged:
                await self.plugging.unplug(instance, port_id)
            await self.ownership.give_back(ours[port_id])
            changed = True
        # Every port the instance lists is plugged (zombie-interface, second half); a
        # bare-metal instance that lost its node is ended by ``node_released``.
        if instance.vm_state == vm.ACTIVE and await self.plugging.still_placed(instance):
            if instance.is_baremetal and self.rt.locks.is_locked("node", instance.node or ""):
                # rule 4 (found by the explorer): the node's conductor holds it, a tear-down
                # detaching every VIF; it ends the instance when it forgets it (node_released).
                return changed
            for port_id in sorted(set(cached) & set(ours) - plugged):
                await self.plugging.plug(instance, ours[port_id])
                changed = True
        return changed
