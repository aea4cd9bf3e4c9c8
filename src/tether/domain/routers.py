"""Routers and floating IPs as neutron's L3 extensions have them.

A router's interfaces and its gateway are ports (``network:router_interface``
and ``network:router_gateway``, ``device_id`` the router), exactly as neutron
keeps them, so the port table stays the one source of truth for who holds
which address. A floating IP holds its address through a
``network:floatingip`` port on the external network.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ACTIVE = "ACTIVE"
DOWN = "DOWN"
# neutron's max_routes default: static routes a router may carry
MAX_ROUTES = 30


@dataclass
class Router:
    id: str
    name: str
    project_id: str
    admin_state_up: bool = True
    status: str = ACTIVE
    # the external network of the gateway; its port holds the external fixed IPs
    gateway_network_id: str | None = None
    enable_snat: bool = True
    # extraroute: [{"destination": cidr, "nexthop": ip}]
    routes: list[dict[str, str]] = field(default_factory=list)
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class FloatingIp:
    id: str
    project_id: str
    floating_network_id: str
    floating_ip_address: str
    # the network:floatingip port on the external network that holds the address
    floating_port_id: str
    port_id: str | None = None
    fixed_ip_address: str | None = None
    router_id: str | None = None
    status: str = DOWN
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def associated(self) -> bool:
        return self.port_id is not None
