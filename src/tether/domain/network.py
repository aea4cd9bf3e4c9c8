"""Networks, subnets and ports as neutron has them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.ids import is_uuid_like

# Port status, as neutron reports it.
DOWN = "DOWN"
BUILD = "BUILD"
ACTIVE = "ACTIVE"
PORT_STATUSES = (DOWN, BUILD, ACTIVE)

# Who created a port (design rule 2): what an owner created, it deletes;
# what a user brought, it only releases.
CREATED_BY_USER = "user"
CREATED_BY_COMPUTE = "compute"
CREATED_BY_ORCHESTRATION = "orchestration"

CREATORS = (CREATED_BY_USER, CREATED_BY_COMPUTE, CREATED_BY_ORCHESTRATION)

COMPUTE_OWNER_PREFIX = "compute:"
DEFAULT_COMPUTE_OWNER = "compute:nova"
BAREMETAL_HOST_PREFIX = "baremetal:"
# Ports the network service runs itself (DHCP, router interfaces, floating IPs).
NETWORK_OWNER_PREFIX = "network:"
ROUTER_INTERFACE_OWNER = "network:router_interface"
ROUTER_GATEWAY_OWNER = "network:router_gateway"
FLOATINGIP_OWNER = "network:floatingip"
# Neutron's AUTO_DELETE_PORT_OWNERS: the only ports that never keep a network or subnet alive.
AUTO_DELETED_OWNERS = ("network:dhcp", "network:distributed", "network:floatingip_agent_gateway")

VNIC_TYPES = ("normal", "baremetal", "direct", "macvtap", "direct-physical", "virtio-forwarder")

# binding:vif_type: "unbound" until a host is bound, then what the mechanism driver plugs.
VIF_TYPE_UNBOUND = "unbound"
VIF_TYPE_OVS = "ovs"
VIF_TYPE_OTHER = "other"

NETWORK_TYPES = ("flat", "vlan", "vxlan", "geneve", "gre", "local")


def vif_type_for(vnic_type: str, host_id: str) -> str:
    if not host_id:
        return VIF_TYPE_UNBOUND
    return VIF_TYPE_OTHER if vnic_type == "baremetal" else VIF_TYPE_OVS


@dataclass
class Network:
    id: str
    name: str
    project_id: str
    admin_state_up: bool = True
    shared: bool = False
    external: bool = False
    status: str = ACTIVE
    mtu: int = 1500
    provider_network_type: str | None = "flat"
    provider_physical_network: str | None = None
    provider_segmentation_id: int | None = None
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    # port-security: what a new port on the network gets when it does not say
    port_security_enabled: bool = True


@dataclass
class Subnet:
    id: str
    name: str
    network_id: str
    project_id: str
    ip_version: int
    cidr: str
    gateway_ip: str | None
    allocation_pools: list[dict[str, str]] = field(default_factory=list)
    enable_dhcp: bool = True
    dns_nameservers: list[str] = field(default_factory=list)
    ipv6_address_mode: str | None = None
    ipv6_ra_mode: str | None = None
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    # [{"destination": cidr, "nexthop": ip}], handed to DHCP clients as static routes
    host_routes: list[dict[str, str]] = field(default_factory=list)


@dataclass
class IpAllocation:
    subnet_id: str
    ip_address: str
    network_id: str
    port_id: str


@dataclass
class Port:
    id: str
    name: str
    network_id: str
    project_id: str
    mac_address: str
    admin_state_up: bool = True
    status: str = DOWN
    device_id: str = ""
    device_owner: str = ""
    binding_host_id: str = ""
    binding_vnic_type: str = "normal"
    binding_profile: dict[str, Any] = field(default_factory=dict)
    binding_vif_type: str = "unbound"
    created_by: str = CREATED_BY_USER
    # What created it, when that was not the user: "STACK_ID/RESOURCE" for a port a stack made.
    created_for: str = ""
    description: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    # security-group: the ids of the groups applied to the port (empty when port security is off)
    security_group_ids: list[str] = field(default_factory=list)
    port_security_enabled: bool = True
    # allowed-address-pairs: [{"ip_address", "mac_address"}], the MAC always filled in
    allowed_address_pairs: list[dict[str, str]] = field(default_factory=list)
    # extra_dhcp_opt: [{"opt_name", "opt_value", "ip_version"}] (ironic's PXE options among them)
    extra_dhcp_opts: list[dict[str, Any]] = field(default_factory=list)
    # Derived from the ip_allocations table (its one source of truth); not stored here.
    fixed_ips: list[dict[str, str]] = field(default_factory=list)

    @property
    def is_bound(self) -> bool:
        return bool(self.binding_host_id)

    @property
    def owned_by_compute(self) -> bool:
        return self.device_owner.startswith(COMPUTE_OWNER_PREFIX)

    @property
    def owned_by_network(self) -> bool:
        return self.device_owner.startswith(NETWORK_OWNER_PREFIX)

    @property
    def auto_deleted(self) -> bool:
        """Deleted with its network or subnet rather than keeping it alive (a router's or a floating IP's
        port does keep it: those are removed through the router or the floating IP)."""
        return self.device_owner in AUTO_DELETED_OWNERS

    @property
    def notifies_compute(self) -> bool:
        """Whether neutron would tell nova about this port (its notifier's own test)."""
        return self.owned_by_compute and is_uuid_like(self.device_id)
