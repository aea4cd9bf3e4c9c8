"""Bare-metal nodes, their NICs (ironic ports) and portgroups."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.baremetal_states import AVAILABLE, ENROLL, POWER_OFF

TENANT_VIF_KEY = "tenant_vif_port_id"


@dataclass
class Node:
    uuid: str
    name: str | None
    driver: str = "fake-hardware"
    provision_state: str = ENROLL
    target_provision_state: str | None = None
    power_state: str = POWER_OFF
    target_power_state: str | None = None
    maintenance: bool = False
    maintenance_reason: str | None = None
    instance_uuid: str | None = None
    instance_info: dict[str, Any] = field(default_factory=dict)
    properties: dict[str, Any] = field(default_factory=dict)
    driver_info: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    resource_class: str | None = None
    chassis_uuid: str | None = None
    last_error: str | None = None
    # The ironic conductor's exclusive lock: who holds it, or None.
    reservation: str | None = None
    provision_updated_at: float = 0.0
    created_at: float = 0.0
    updated_at: float = 0.0
    # The hardware interfaces (tether.domain.baremetal_drivers); None only on a node not yet defaulted.
    bios_interface: str | None = None
    boot_interface: str | None = None
    console_interface: str | None = None
    deploy_interface: str | None = None
    firmware_interface: str | None = None
    inspect_interface: str | None = None
    management_interface: str | None = None
    network_interface: str | None = None
    power_interface: str | None = None
    raid_interface: str | None = None
    rescue_interface: str | None = None
    storage_interface: str | None = None
    vendor_interface: str | None = None
    description: str | None = None
    owner: str | None = None
    lessee: str | None = None
    # A protected node cannot be undeployed, rebuilt or deleted (ironic's NodeProtected).
    protected: bool = False
    protected_reason: str | None = None
    # A retired node is never made available again: its cleaning ends in manageable.
    retired: bool = False
    retired_reason: str | None = None
    traits: list[str] = field(default_factory=list)
    console_enabled: bool = False
    # The allocation that picked this node (ironic's allocation_id), if any.
    allocation_uuid: str | None = None
    # The RAID layout the operator asked for (PUT .../states/raid); fake-hardware builds none.
    target_raid_config: dict[str, Any] = field(default_factory=dict)
    # Which shard of the deployment the node belongs to: a label its clients filter nodes by.
    shard: str | None = None

    @property
    def is_free(self) -> bool:
        return (
            self.provision_state == AVAILABLE
            and not self.maintenance
            and self.instance_uuid is None
        )


@dataclass
class NodePort:
    """A physical NIC of a node (an ironic port)."""

    uuid: str
    address: str
    node_uuid: str
    portgroup_uuid: str | None = None
    physical_network: str | None = None
    pxe_enabled: bool = True
    local_link_connection: dict[str, Any] = field(default_factory=dict)
    internal_info: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def vif(self) -> str | None:
        return self.internal_info.get(TENANT_VIF_KEY)


@dataclass
class Portgroup:
    uuid: str
    node_uuid: str
    name: str | None = None
    address: str | None = None
    mode: str | None = None
    standalone_ports_supported: bool = True
    internal_info: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0
    properties: dict[str, Any] = field(default_factory=dict)
    physical_network: str | None = None
    category: str | None = None

    @property
    def vif(self) -> str | None:
        return self.internal_info.get(TENANT_VIF_KEY)


@dataclass
class Chassis:
    uuid: str
    description: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


# ironic's allocation states.
ALLOCATING, ALLOCATION_ACTIVE, ALLOCATION_ERROR = "allocating", "active", "error"


@dataclass
class Allocation:
    """A request for a node of a resource class with some traits (ironic's allocation)."""

    uuid: str
    name: str | None = None
    node_uuid: str | None = None
    state: str = ALLOCATING
    last_error: str | None = None
    resource_class: str | None = None
    traits: list[str] = field(default_factory=list)
    candidate_nodes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class NodeHistoryEvent:
    """An error a node met, as ironic's conductor records it beside the node's last_error."""

    uuid: str
    node_uuid: str
    event: str
    event_type: str
    severity: str = "ERROR"
    conductor: str | None = None
    user: str | None = None
    created_at: float = 0.0


@dataclass
class VolumeConnector:
    """How a node reaches its remote volumes: an initiator's IQN, IP, MAC, WWNN or WWPN (ironic's)."""

    uuid: str
    node_uuid: str
    type: str
    connector_id: str
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class VolumeTarget:
    """A remote volume a node boots from or attaches, by its place in the node's boot order."""

    uuid: str
    node_uuid: str
    volume_type: str
    volume_id: str
    boot_index: int
    properties: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class DeployTemplate:
    """Deploy steps a node runs when its instance asks for the trait the template is named after."""

    uuid: str
    name: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass
class Runbook:
    """Named, ordered clean or service steps a node with the matching trait may run."""

    uuid: str
    name: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    public: bool = False
    disable_ramdisk: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
