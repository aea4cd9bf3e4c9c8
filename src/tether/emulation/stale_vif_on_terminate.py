"""Seed 000: VIFs not always detached from ironic nodes during termination (Pike).

Nova's destroy tears the node down first and only then unplugs, and only the
VIFs its info cache still lists; the port-deleted event drops the cache entry
before it tries its own detach; and ironic's tear-down leaves whatever VIFs
the node still has. A port deleted during the delete leaves its VIF on the node.
"""

from __future__ import annotations

from typing import Any

from tether.domain.compute import Instance
from tether.emulation.nova_network_events import vif_deleted_like_nova
from tether.services.baremetal.vifs import Vifs
from tether.services.compute import network_info
from tether.services.compute.delete import release_for_delete
from tether.services.compute.instances import acting_for
from tether.services.compute.release import Release


async def unprovision_then_unplug_cached(release: Release, instance: Instance, unplug_point: str | None) -> None:
    ctx = acting_for(instance)
    async with release.store.begin() as conn:
        cached = [entry.port_id for entry in await network_info.cached_vifs(conn, instance.uuid)]
    for node in await release.nodes_of(instance):
        await release.rt.checkpoint("compute.delete.before_node_teardown")
        await release.unprovision(instance, node)
        if unplug_point is not None:
            await release.rt.checkpoint(unplug_point)
            async with release.store.begin() as conn:
                cached = [entry.port_id for entry in await network_info.cached_vifs(conn, instance.uuid)]
        for vif in cached:
            await release.detach_from_node(ctx, node.uuid, vif, ignore_all=True)
        await release.baremetal.release_node(node.uuid, instance.uuid)


async def delete_tearing_down_first(release: Release, instance: Instance) -> None:
    if not instance.is_baremetal:
        await release_for_delete(release, instance)
        return
    # Nova's destroy unprovisions before it unplugs: the unplug comes at this checkpoint.
    await release.release_all(instance, unplug_point="compute.delete.before_unplug")


async def leave_vifs_on_teardown(vifs: Vifs, node_uuid: str) -> None:
    """Ironic before 3a4e259a37: tear-down does not look at the node's VIFs."""


COMPUTE: dict[str, Any] = {
    "release_nodes": unprovision_then_unplug_cached,
    "release_for_delete": delete_tearing_down_first,
    "on_vif_deleted": vif_deleted_like_nova(drop_first=True),
}
BAREMETAL: dict[str, Any] = {"detach_vifs_on_teardown": leave_vifs_on_teardown}
ORCHESTRATION: dict[str, Any] = {}
SILENCED = frozenset({"stale-vif", "orphan-port"})
