"""How upstream nova handles the port-deleted event and cache refreshes (seeds 000 and 004).

Neither takes the instance lock, and both consult only the info cache, never
the hypervisor or the node: what seed 004's cases B and C and seed 000's
"the neutron vif unplugged event ... will remove the port from the instance
info cache" describe.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tether.domain.errors import TetherError
from tether.services.compute import network_info
from tether.services.compute.network_sync import NetworkSync


def vif_deleted_like_nova(*, drop_first: bool) -> Callable[[NetworkSync, str, str], Awaitable[None]]:
    """``drop_first``: Pike's order (seed 000), the cache entry goes before the detach is tried."""

    async def vif_deleted(sync: NetworkSync, uuid: str, port_id: str) -> None:
        instance = await sync.instances.live(uuid)
        if instance is None:
            return
        async with sync.store.begin() as conn:
            listed = any(entry.port_id == port_id for entry in await network_info.cached_vifs(conn, uuid))
        if not listed:
            return  # seed 004 case B: the cache does not hold the port yet, so nothing is done
        if drop_first:
            async with sync.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)
        await sync.rt.checkpoint("compute.vif_deleted.before_detach")
        try:
            await sync.plugging.unplug(instance, port_id)
        except TetherError as error:
            sync.rt.note(f"detach of VIF {port_id[:8]} failed and was ignored: {error}")
            if not drop_first:
                return
        if not drop_first:
            async with sync.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)

    return vif_deleted


async def refresh_like_nova(sync: NetworkSync, uuid: str) -> None:
    """Seed 004 case C: the refresh drops vanished ports from the cache, unplugging nothing."""
    instance = await sync.instances.live(uuid)
    if instance is None:
        return
    async with sync.store.begin() as conn:
        cached = [entry.port_id for entry in await network_info.cached_vifs(conn, uuid)]
    for port_id in cached:
        port = await sync.network.find_port(port_id)
        if port is None or port.device_id != uuid:
            await sync.rt.checkpoint("compute.refresh_cache.before_drop")
            async with sync.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)
