"""Ports the network service makes for itself: a router's interfaces and gateway, a floating IP's address.

They are ordinary rows of the port table (its one source of truth for who holds which address), made
inside the caller's transaction under the network's row lock, as every port's addresses are.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from tether.domain import port_states
from tether.domain.ids import new_uuid
from tether.domain.network import DOWN, FLOATINGIP_OWNER, Port, vif_type_for
from tether.services.network import fixed_ips, rows

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

# the device owners whose ports only their router or floating IP may remove
L3_OWNERS = ("network:router_interface", "network:router_gateway", "network:floatingip")


# The host of the L3 agent that plugs routers' ports: part of this process, so a port it is given is
# plugged at once (ACTIVE), as neutron's L3 agent plugs a router's qr-/qg- devices.
L3_AGENT_HOST = "tether-network"


def plugged_by_l3_agent() -> dict[str, Any]:
    """The binding and status of a router's port once the L3 agent has plugged it."""
    _, status = port_states.next_state("", DOWN, "bind")
    _, status = port_states.next_state(L3_AGENT_HOST, status, "plugged")
    return {"binding_host_id": L3_AGENT_HOST, "binding_vif_type": vif_type_for("normal", L3_AGENT_HOST),
            "status": status}


async def make_port(conn: StoreConnection, rng: random.Random, now: float, *, network_id: str, project_id: str,
                    device_owner: str, device_id: str, requests: list[fixed_ips.Request] | None) -> Port:
    await rows.network(conn, network_id, "update")
    routed = device_owner != FLOATINGIP_OWNER
    port = Port(id=new_uuid(rng), name="", network_id=network_id, project_id=project_id,
                mac_address=await rows.fresh_mac(conn, rng, network_id), status=DOWN, device_id=device_id,
                device_owner=device_owner, created_at=now, updated_at=now,
                port_security_enabled=not routed)
    if routed:
        for name, value in plugged_by_l3_agent().items():
            setattr(port, name, value)
    await rows.insert_port(conn, port)
    await fixed_ips.Allocator(conn, network_id, await rows.subnets_of(conn, network_id)).allocate(port, requests)
    made = await rows.port(conn, port.id)
    assert made is not None
    return made
