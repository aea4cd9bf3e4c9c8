"""The events neutron sends nova (os-server-external-events) about a port, if it sends any."""

from __future__ import annotations

from tether.domain.events import NetworkChanged, ServerEvent
from tether.domain.network import Port

COMPLETED = "completed"
FAILED = "failed"


def event_for(port: Port, kind: type[ServerEvent], status: str | None = None) -> ServerEvent | None:
    """One event about ``port``, or None when neutron would not tell nova about it."""
    if not port.notifies_compute:
        return None
    return kind(server_uuid=port.device_id or "", port_id=port.id, status=status)


def changed_events(before: Port, after: Port) -> list[ServerEvent]:
    """network-changed for the port's device, and for the device it left if it moved.

    Neutron only tells the device the port has now.
    """
    # rule 1 (seed 004): the device a port left is told too, so it reconciles its guest against the truth
    events = [event_for(after, NetworkChanged)]
    if before.device_id != after.device_id:
        events.append(event_for(before, NetworkChanged))
    return [event for event in events if event is not None]
