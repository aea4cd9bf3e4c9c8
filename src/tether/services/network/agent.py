"""What the L2 agent reports: a guest device for a port appeared on, or left, a host.

The agent acts on the port as it finds it after the device event, so a port
deleted meanwhile is simply ignored (rule 4, seed 004: re-check after the side
effect).
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain import port_states
from tether.domain.events import VifPlugged, VifUnplugged
from tether.runtime.runtime import Runtime
from tether.services.network import events, rows
from tether.services.network.notifier import Notifier
from tether.services.network.port_lock import port_lock
from tether.store.database import Store


@dataclass(eq=False)
class Agent:
    store: Store
    rt: Runtime
    notifier: Notifier

    async def port_plugged(self, port_id: str) -> None:
        """ACTIVE and network-vif-plugged, if the port still exists and is bound."""
        await self.rt.checkpoint("network.agent.before_port_active")
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            port = await rows.port(conn, port_id, lock="update")
            if port is None or not port_states.can(port.binding_host_id, port.status, "plugged"):
                return
            _, status = port_states.next_state(port.binding_host_id, port.status, "plugged")
            await rows.update_port(conn, port, status=status, updated_at=self.rt.now())
        event = events.event_for(port, VifPlugged, events.COMPLETED)
        self.notifier.send([event] if event else [])

    async def port_unplugged(self, port_id: str) -> None:
        """DOWN and network-vif-unplugged; a port that is gone is ignored."""
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            port = await rows.port(conn, port_id, lock="update")
            if port is None:
                return
            _, status = port_states.next_state(port.binding_host_id, port.status, "unplugged")
            await rows.update_port(conn, port, status=status, updated_at=self.rt.now())
        event = events.event_for(port, VifUnplugged, events.COMPLETED)
        self.notifier.send([event] if event else [])
