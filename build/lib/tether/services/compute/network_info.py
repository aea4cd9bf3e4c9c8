"""The instance network info cache: a cache of what is attached, never the truth itself.

Rule 1 (seeds 000, 004-B/C): teardown and cleanup act on the union of this
cache and what the owners of the facts report (the hypervisor's guest
interfaces, the node's VIF list, the ports bound to the instance), and an
entry is dropped only after the thing it describes is really gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain.compute import VifEntry
from tether.domain.network import Port
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


async def cached_vifs(conn: StoreConnection, instance_uuid: str) -> list[VifEntry]:
    return await repos.instance_vifs.find(conn, order_by=("position", "port_id"), instance_uuid=instance_uuid)


async def add_vif(
    conn: StoreConnection, instance_uuid: str, port: Port, preserve_on_delete: bool, tag: str | None = None
) -> VifEntry:
    existing = await cached_vifs(conn, instance_uuid)
    for entry in existing:
        if entry.port_id == port.id:
            return entry
    entry = VifEntry(
        instance_uuid=instance_uuid, port_id=port.id, network_id=port.network_id,
        address=port.mac_address, position=max((e.position for e in existing), default=-1) + 1,
        preserve_on_delete=preserve_on_delete, fixed_ips=list(port.fixed_ips), tag=tag,
    )
    await repos.instance_vifs.add(conn, entry)
    return entry


async def drop_vif(conn: StoreConnection, instance_uuid: str, port_id: str) -> bool:
    return await repos.instance_vifs.delete_where(conn, instance_uuid=instance_uuid, port_id=port_id) > 0


async def refresh_vif(conn: StoreConnection, instance_uuid: str, port: Port) -> None:
    """Keep a cached entry's MAC and addresses in step with its port (a NIC may change the MAC)."""
    await repos.instance_vifs.update_where(
        conn, {"instance_uuid": instance_uuid, "port_id": port.id},
        address=port.mac_address, fixed_ips=list(port.fixed_ips), network_id=port.network_id,
    )
