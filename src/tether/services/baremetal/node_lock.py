"""The node lock (ironic's exclusive task, rule 4), shown in ``Node.reservation`` while it is held."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import KW_ONLY, dataclass

from tether.domain.baremetal import Node
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.runtime.runtime import Runtime
from tether.services.baremetal.lookup import NodeLookup
from tether.store import repos
from tether.store.database import Store, StoreConnection

# ironic retries a busy node lock 3 times, 1 s apart, before answering NodeLocked.
LOCK_TIMEOUT = 3.0


@dataclass(eq=False)
class NodeLock:
    store: Store
    rt: Runtime
    lookup: NodeLookup
    _: KW_ONLY
    host: str

    async def acquire(self, uuid: str, timeout: float | None = LOCK_TIMEOUT) -> None:
        """Take the node's lock (ironic's exclusive task) and show it in Node.reservation."""
        await self._reserve(uuid, timeout, read=False)

    async def _reserve(self, uuid: str, timeout: float | None, *, read: bool) -> Node | None:
        """``acquire``; with ``read``, the node as it is once held, read in the reservation's transaction."""
        if not await self.rt.locks.acquire("node", uuid, timeout=timeout):
            async with self.store.begin() as conn:
                node = await repos.nodes.get(conn, uuid)
            raise be.NodeLocked(node=uuid, host=(node.reservation if node else None) or self.host)
        try:
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, uuid, reservation=self.host)
                return await repos.nodes.get(conn, uuid) if read else None
        except BaseException:
            self.rt.locks.release("node", uuid)
            raise

    async def release(self, uuid: str) -> None:
        try:
            if self.rt.alive:  # a dead incarnation writes nothing; recovery clears its reservations
                async with self.store.begin() as conn:
                    await repos.nodes.update(conn, uuid, expect={"reservation": self.host}, reservation=None)
        finally:
            self.rt.locks.release("node", uuid)

    @asynccontextmanager
    async def locked(self, ident: str) -> AsyncIterator[Node]:
        """API-level work on one node: a bounded wait for its lock (NodeLocked), then the node as it is now."""
        # A uuid names the lock itself: the node is read once, when the lock is held (a name is looked up).
        uuid = ident.lower() if is_uuid_like(ident) else (await self.lookup.read(ident)).uuid
        current = await self._reserve(uuid, LOCK_TIMEOUT, read=True)
        try:
            if current is None:
                raise be.NodeNotFound(node=ident)
            yield current
        finally:
            await self.release(uuid)

    async def forget_dead_reservations(self, conn: StoreConnection) -> None:
        """After a restart: clear the reservations this host's dead incarnation left on nodes nobody holds."""
        stale = await repos.nodes.find(conn, reservation=self.host)
        for node in stale:
            if not self.rt.locks.is_locked("node", node.uuid):
                await repos.nodes.update(conn, node.uuid, reservation=None)


class NodeHold:
    """A conductor job's grip on a node's lock, taken and given back around wait states."""

    def __init__(self, lock: NodeLock, uuid: str) -> None:
        self._lock = lock
        self._uuid = uuid
        self.held = False

    async def take(self) -> None:
        if not self.held:
            # A job waits as long as it takes: every holder of the lock lets go in bounded time.
            await self._lock.acquire(self._uuid, timeout=None)
            self.held = True

    async def give(self) -> None:
        if self.held:
            self.held = False
            await self._lock.release(self._uuid)
