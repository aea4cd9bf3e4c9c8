"""Telling compute what changed: neutron's events for nova, published on the bus after the commit."""

from __future__ import annotations

from tether.domain.events import ComputeNotified, ServerEvent
from tether.runtime.bus import MessageBus


class Notifier:
    def __init__(self, bus: MessageBus | None) -> None:
        self._bus = bus

    def send(self, events: list[ServerEvent]) -> None:
        """Tell compute (the bus keeps a failing receiver from undoing what is done)."""
        if events and self._bus is not None:
            self._bus.publish(ComputeNotified(tuple(events)))
