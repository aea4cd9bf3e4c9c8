"""Seed 004: nova may leak a guest interface if the port is deleted during an attach.

Upstream's attach binds the port, records it in the info cache and only then
plugs the guest device, with no re-check of the port afterwards and no lock
shared with the port-deleted event, which (like cache refreshes) trusts the
cache instead of the hypervisor. A port deleted in between leaves a zombie
interface in the guest.
"""

from __future__ import annotations

from typing import Any

from tether.domain.compute import Instance, VifEntry
from tether.domain.network import Port
from tether.emulation.nova_network_events import refresh_like_nova, vif_deleted_like_nova
from tether.services.compute import network_info
from tether.services.compute.attach import Attach


async def cache_then_plug(attach: Attach, instance: Instance, port: Port, preserve: bool, tag: str | None) -> VifEntry:
    await attach.rt.checkpoint("compute.attach_interface.before_cache_update")
    async with attach.store.begin() as conn:
        entry = await network_info.add_vif(conn, instance.uuid, port, preserve, tag)
    await attach.rt.checkpoint("compute.attach_interface.before_driver_attach")
    await attach.plugging.plug(instance, port)
    return entry


COMPUTE: dict[str, Any] = {
    "plug_and_record": cache_then_plug,
    "on_vif_deleted": vif_deleted_like_nova(drop_first=False),
    "on_refresh": refresh_like_nova,
}
BAREMETAL: dict[str, Any] = {}
ORCHESTRATION: dict[str, Any] = {}
SILENCED = frozenset({"zombie-interface", "orphan-port"})
