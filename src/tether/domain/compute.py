"""Flavors, hypervisors, instances, their network info cache, actions and faults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.compute_states import BUILDING, NOSTATE, api_status


@dataclass
class Flavor:
    id: str
    name: str
    vcpus: int
    ram: int
    disk: int
    ephemeral: int = 0
    swap: int = 0
    is_public: bool = True
    # A bare-metal flavor asks for one node of this resource class instead of capacity.
    resource_class: str | None = None
    extra_specs: dict[str, str] = field(default_factory=dict)
    description: str | None = None
    # nova's bandwidth factor for the networks of its servers (None: nova's default, 1.0); Tether's
    # networks have no bandwidth to scale, as nova's own (neutron) deployments ignore it too
    rxtx_factor: float | None = None

    @property
    def is_baremetal(self) -> bool:
        return self.resource_class is not None


@dataclass
class Hypervisor:
    id: int
    hostname: str
    vcpus: int
    memory_mb: int
    local_gb: int
    state: str = "up"
    status: str = "enabled"
    # os-services: why an admin disabled it, and whether it was forced down (2.11)
    disabled_reason: str | None = None
    forced_down: bool = False


@dataclass
class Instance:
    uuid: str
    name: str
    project_id: str
    user_id: str
    flavor_id: str
    image_id: str | None
    vm_state: str = BUILDING
    task_state: str | None = None
    power_state: int = NOSTATE
    host: str | None = None
    node: str | None = None
    is_baremetal: bool = False
    # What the user asked for, kept so recovery can finish or undo a build.
    requested_networks: Any = None
    metadata: dict[str, str] = field(default_factory=dict)
    key_name: str | None = None
    # nova's multi-create: the request's reservation id and this server's place in it
    reservation_id: str | None = None
    launch_index: int = 0
    # When the current transient state must have ended (design rule 3).
    deadline: float | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    launched_at: float | None = None
    deleted: bool = False
    deleted_at: float | None = None
    # nova's lock: who locked it ("owner" or "admin"), and why (2.73)
    locked_by: str | None = None
    locked_reason: str | None = None
    description: str | None = None
    access_ip_v4: str | None = None
    access_ip_v6: str | None = None
    tags: list[str] = field(default_factory=list)
    # The flavor a resize came from, until it is confirmed or reverted.
    old_flavor_id: str | None = None
    # What the boot asked the guest to get: user data (base64, as sent), files to inject (nova's
    # personality: path and base64 contents), a config drive ("True"), and its disk config (AUTO/MANUAL).
    user_data: str | None = None
    injected_files: list[dict[str, str]] = field(default_factory=list)
    config_drive: str | None = None
    disk_config: str | None = None
    # The zone of the host it was placed on, and the zone the boot asked for (nova's pinned zone).
    availability_zone: str | None = None
    pinned_availability_zone: str | None = None
    # The boot's same_host / different_host hints: server UUIDs it must share a host with, or avoid.
    scheduler_hints: dict[str, list[str]] = field(default_factory=dict)
    # The guest's hostname as the user set it (2.90); None: derived from the name, as nova derives it.
    hostname: str | None = None

    @property
    def locked(self) -> bool:
        return self.locked_by is not None

    @property
    def status(self) -> str:
        return api_status(self.vm_state, self.task_state)


@dataclass
class VifEntry:
    """One row of an instance's network info cache."""

    instance_uuid: str
    port_id: str
    network_id: str
    address: str
    position: int = 0
    # The user brought this port: release it on delete, never delete it.
    preserve_on_delete: bool = False
    fixed_ips: list[dict[str, str]] = field(default_factory=list)
    tag: str | None = None


@dataclass
class InstanceAction:
    request_id: str
    instance_uuid: str
    action: str
    project_id: str
    user_id: str
    start_time: float
    updated_at: float
    message: str | None = None


@dataclass
class ActionEvent:
    request_id: str
    event: str
    start_time: float
    finish_time: float | None = None
    result: str | None = None
    traceback: str | None = None
    host: str | None = None
    id: int | None = None


@dataclass
class InstanceFault:
    instance_uuid: str
    code: int
    message: str
    details: str
    created_at: float
    id: int | None = None


@dataclass(frozen=True)
class GuestInterface:
    """A guest interface as a hypervisor reports it (``virsh domiflist``)."""

    host: str
    instance_uuid: str
    device: str  # "tap" + the first 11 characters of the port id
    mac: str
    port_id: str
