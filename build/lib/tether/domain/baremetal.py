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
