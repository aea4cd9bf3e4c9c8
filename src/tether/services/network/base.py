"""What every part of the network service shares: its notifier, the port lock, network look-ups."""

from __future__ import annotations

import random
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from tether.domain.errors.network import NetworkNotFound, NotAuthorized, PortNotFound
from tether.domain.events import ComputeNotified, ServerEvent
from tether.domain.network import Network
from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.base import Service
from tether.services.context import RequestContext
from tether.services.network import policy, rows
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

class NetworkServiceBase(Service):
    def __init__(self, store: Store, runtime: Runtime, rng: random.Random, bus: MessageBus | None = None) -> None:
        super().__init__(store, runtime, rng)
        self._bus = bus

    def _port_lock(self, port_id: object) -> AbstractAsyncContextManager[None]:
        """The port's own lock, the last in rule 4's order (instance, node, port)."""
        if not isinstance(port_id, str):
            raise PortNotFound(port_id=port_id)
        return self.rt.locks.hold("port", port_id)

    def _send(self, events: list[ServerEvent]) -> None:
        """Tell compute, after the commit (the bus keeps a failing receiver from undoing it)."""
        if events and self._bus is not None:
            self._bus.publish(ComputeNotified(tuple(events)))

    async def _visible_network(
        self, conn: StoreConnection, ctx: RequestContext, network_id: str, lock: str | None = None
    ) -> Network:
        network = await rows.network(conn, network_id, lock)
        if network is None or not policy.can_see_network(ctx, network):
            raise NetworkNotFound(net_id=network_id)
        return network

    async def _owned_network(
        self, conn: StoreConnection, ctx: RequestContext, network_id: str, lock: str | None = None
    ) -> Network:
        network = await self._visible_network(conn, ctx, network_id, lock)
        if not policy.owns_network(ctx, network):
            raise NotAuthorized()
        return network
