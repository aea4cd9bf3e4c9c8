"""What one service tells the others, as typed events: published after the change they report
is committed, and delivered on the message bus to whoever subscribed where the cloud is assembled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class ServerEvent:
    """One of the events neutron sends nova about a port of a server (os-server-external-events)."""

    name: ClassVar[str]
    server_uuid: str
    port_id: str
    status: str | None = None

    def as_body(self) -> dict[str, str]:
        """The event as nova's API takes it."""
        body = {"server_uuid": self.server_uuid, "name": self.name, "tag": self.port_id}
        if self.status is not None:
            body["status"] = self.status
        return body


@dataclass(frozen=True)
class VifPlugged(ServerEvent):
    name: ClassVar[str] = "network-vif-plugged"


@dataclass(frozen=True)
class VifUnplugged(ServerEvent):
    name: ClassVar[str] = "network-vif-unplugged"


@dataclass(frozen=True)
class VifDeleted(ServerEvent):
    name: ClassVar[str] = "network-vif-deleted"


@dataclass(frozen=True)
class NetworkChanged(ServerEvent):
    name: ClassVar[str] = "network-changed"


@dataclass(frozen=True)
class ComputeNotified:
    """Events the network service sends compute in one call, as neutron's notifier batches them."""

    events: tuple[ServerEvent, ...]


@dataclass(frozen=True)
class InstanceReleased:
    """A node's tear-down or deletion forgot the instance it ran."""

    instance_uuid: str
    node_uuid: str


@dataclass(frozen=True)
class GuestDevicePlugged:
    """A guest interface appeared on a hypervisor: what the L2 agent sees."""

    port_id: str


@dataclass(frozen=True)
class GuestDeviceUnplugged:
    """A guest interface went away from a hypervisor."""

    port_id: str


@dataclass(frozen=True)
class InstanceStateChanged:
    """An instance moved through compute's state table (what an operator reads in the log)."""

    instance_uuid: str
    event: str
    before: tuple[str, str | None]  # vm_state, task_state
    after: tuple[str, str | None]


@dataclass(frozen=True)
class NodeStateChanged:
    """A bare-metal node moved through its provision state machine."""

    node_uuid: str
    event: str
    before: str
    after: str
