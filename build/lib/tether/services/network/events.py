"""The events neutron sends nova (os-server-external-events), in the shape nova's API takes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.domain.network import Port

VIF_PLUGGED = "network-vif-plugged"
VIF_UNPLUGGED = "network-vif-unplugged"
VIF_DELETED = "network-vif-deleted"
NETWORK_CHANGED = "network-changed"

COMPLETED = "completed"
FAILED = "failed"

Event = dict[str, str]
Notify = Callable[[list[Event]], Any]


def event_for(port: Port, name: str, status: str | None = None) -> Event | None:
    """One event about ``port``, or None when neutron would not tell nova about it."""
    if not port.notifies_compute:
        return None
    event = {"server_uuid": port.device_id, "name": name, "tag": port.id}
    if status is not None:
        event["status"] = status
    return event


def changed_events(before: Port, after: Port) -> list[Event]:
    """network-changed for the port's device, and for the device it left if it moved.

    Neutron only tells the device the port has now.
    """
    # rule 1 (seed 004): the device a port left is told too, so it reconciles its guest against the truth
    events = [event_for(after, NETWORK_CHANGED)]
    if before.device_id != after.device_id:
        events.append(event_for(before, NETWORK_CHANGED))
    return [event for event in events if event is not None]
