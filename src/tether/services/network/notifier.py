"""Telling compute what changed: neutron's events for nova, published on the bus after the commit."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.events import ComputeNotified, ServerEvent
from tether.runtime.bus import MessageBus


@dataclass(eq=False)
class Notifier:
    bus: MessageBus | None

    def send(self, events: list[ServerEvent]) -> None:
        """Tell compute (the bus keeps a failing receiver from undoing what is done)."""
        if events and self.bus is not None:
            self.bus.publish(ComputeNotified(tuple(events)))
