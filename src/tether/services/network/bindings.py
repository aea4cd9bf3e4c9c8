"""Internal operations compute and bare metal use to bind, release and re-MAC ports (no policy).

Each takes the port's lock (rule 4: instance, then node, then port; the
callers hold the first two) and reads the port inside its own transaction, so
it acts on the port as it is, not as the caller last saw it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tether.domain import port_states
from tether.domain.errors.network import PortInUse, PortNotFound
from tether.domain.network import VIF_TYPE_UNBOUND, VNIC_TYPES, Port, vif_type_for
from tether.runtime.runtime import Runtime
from tether.services.network import fixed_ips, rows, validation
from tether.services.network.port_lock import port_lock
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection



def unbound(port: Port) -> dict[str, Any]:
    """The columns that unbind ``port``."""
    _, status = port_states.next_state(port.binding_host_id, port.status, "unbind")
    return {"binding_host_id": "", "binding_profile": {}, "binding_vif_type": VIF_TYPE_UNBOUND, "status": status}


@dataclass(eq=False)
class Bindings:
    store: Store
    rt: Runtime
    rng: random.Random

    async def bind_port(
        self,
        port_id: str,
        *,
        device_id: str,
        device_owner: str,
        host_id: str,
        vnic_type: str | None = None,
        profile: dict[str, Any] | None = None,
    ) -> Port:
        """Give the port to ``device_id`` on ``host_id``; PortInUse if another device has it."""
        validation.string("device_id", device_id)
        validation.string("device_owner", device_owner)
        validation.string("binding:host_id", host_id)
        if vnic_type is not None:
            validation.one_of("binding:vnic_type", vnic_type, VNIC_TYPES)
        if profile is not None:
            profile = validation.dictionary("binding:profile", profile)
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            port = await _existing(conn, port_id)
            if port.device_id and port.device_id != device_id:
                raise PortInUse(port_id=port.id, net_id=port.network_id, device_id=port.device_id)
            vnic = vnic_type or port.binding_vnic_type
            values: dict[str, Any] = {
                "device_id": device_id, "device_owner": device_owner, "binding_host_id": host_id,
                "binding_vnic_type": vnic, "binding_vif_type": vif_type_for(vnic, host_id),
            }
            if profile is not None:
                values["binding_profile"] = profile
            if host_id != port.binding_host_id:
                # plugged somewhere else now: ACTIVE again only once that host's agent sees it
                _, values["status"] = port_states.next_state(port.binding_host_id, port.status, "bind")
            if port_states.is_wired(vnic, host_id, values.get("binding_profile", port.binding_profile)):
                _, values["status"] = port_states.next_state(host_id, values.get("status", port.status), "wired")
            return await self._change(conn, port, values)

    async def unbind_port(self, port_id: str, *, reset_mac: bool, release_owner: str | None = None) -> Port | None:
        """Ironic's ``unbind_neutron_port``: clear the binding, then (``reset_mac``) take a fresh MAC.

        A port whose ``device_owner`` is ``release_owner`` (the owner the binder itself set) loses its
        device too. None when the port is gone: unbinding what no longer exists is done.
        """
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            return await self._unbind(conn, port_id, reset_mac, {}, release_owner)

    async def release_port(self, port_id: str, *, reset_mac: bool) -> Port | None:
        """Hand a port the user brought back to the user: unbound, no device (rule 2, seed 001)."""
        cleared = {"device_id": "", "device_owner": ""}
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            return await self._unbind(conn, port_id, reset_mac, cleared)

    async def set_mac_address(self, port_id: str, mac: str) -> Port:
        """Ironic's ``update_port_address``: a bound port is unbound first, as neutron insists."""
        mac = validation.mac_address(mac)
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            port = await _existing(conn, port_id)
            if mac == port.mac_address:
                return port
            values = unbound(port) if port.is_bound else {}
            values["mac_address"] = mac
            return await self._change(conn, port, values)

    # -- helpers ------------------------------------------------------------------

    async def _unbind(
        self, conn: StoreConnection, port_id: str, reset_mac: bool, extra: dict[str, Any],
        release_owner: str | None = None,
    ) -> Port | None:
        port = await rows.port(conn, port_id, lock="update")
        if port is None:
            return None
        values = {**unbound(port), **extra}
        if release_owner is not None and port.device_owner == release_owner:
            values.update(device_id="", device_owner="")
        # rule 2 (seed 001): a released port must not keep the MAC a bare-metal NIC imposed
        if reset_mac:
            values["mac_address"] = await rows.fresh_mac(conn, self.rng, port.network_id)
        return await self._change(conn, port, values)

    async def _change(self, conn: StoreConnection, port: Port, values: dict[str, Any]) -> Port:
        values = {**values, "updated_at": self.rt.now()}
        await rows.update_port(conn, port, **values)
        # The row now holds exactly these values: the port is made from them, not read back (a
        # bare-metal deploy binds, re-MACs and unbinds a port on every cycle).
        changed = replace(port, **values, fixed_ips=list(port.fixed_ips))
        if changed.mac_address != port.mac_address:
            subnets = await rows.subnets_of(conn, port.network_id)
            await fixed_ips.Allocator(conn, port.network_id, subnets).readdress(changed)
            (changed,) = await rows.with_fixed_ips(conn, [changed])
        return changed


async def _existing(conn: StoreConnection, port_id: str) -> Port:
    port = await rows.port(conn, port_id, lock="update")
    if port is None:
        raise PortNotFound(port_id=port_id)
    return port
