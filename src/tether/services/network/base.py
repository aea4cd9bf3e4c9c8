"""What every part of the network service shares: its notifier, the port lock, network look-ups."""

from __future__ import annotations

import logging
import random
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from tether.domain.errors.network import NetworkNotFound, NotAuthorized, PortNotFound
from tether.domain.network import Network
from tether.runtime.runtime import Runtime
from tether.services.base import Service
from tether.services.context import RequestContext
from tether.services.network import policy, rows
from tether.services.network.events import Event, Notify
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

log = logging.getLogger(__name__)


class NetworkServiceBase(Service):
    def __init__(
        self, store: Store, runtime: Runtime, rng: random.Random, notify: Notify | None = None
    ) -> None:
        super().__init__(store, runtime, rng)
        self._notify = notify

    def _port_lock(self, port_id: object) -> AbstractAsyncContextManager[None]:
        """The port's own lock, the last in rule 4's order (instance, node, port)."""
        if not isinstance(port_id, str):
            raise PortNotFound(port_id=port_id)
        return self.rt.locks.hold("port", port_id)

    def _send(self, events: list[Event]) -> None:
        """Tell compute, after the commit; a failing receiver must not undo what is done."""
        if not events or self._notify is None:
            return
        try:
            self._notify(events)
        except Exception:
            log.exception("could not deliver %s", events)

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
