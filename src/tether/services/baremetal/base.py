"""What every part of the bare-metal service shares: access, lookup, the node lock,
provision-state transitions and the registry of conductor jobs."""

from __future__ import annotations

import dataclasses
import random
import socket
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import PROVISION_STATES
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.domain.state_machine import IllegalTransition
from tether.drivers.hardware import FakeHardware
from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.baremetal.steps import BaremetalSteps
from tether.services.base import Service
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

# ironic retries a busy node lock 3 times, 1 s apart, before answering NodeLocked.
LOCK_TIMEOUT = 3.0

DRIVERS = ("fake-hardware",)

_AUTO = object()


class NodeChanged(Exception):
    """A conductor job found its node no longer in the state it was working on."""


class JobFailed(Exception):
    """A conductor job gives up; the message is the node's last_error as it stands."""


class BaremetalBase(Service):
    def __init__(
        self,
        store: Store,
        runtime: Runtime,
        rng: random.Random,
        network: Any,
        hardware: FakeHardware,
        *,
        host: str | None = None,
        steps: BaremetalSteps | None = None,
        bus: MessageBus | None = None,
    ) -> None:
        super().__init__(store, runtime, rng)
        self.steps = steps or BaremetalSteps()
        self.network = network
        self.hardware = hardware
        # The conductor's name, shown in Node.reservation while it holds a node's lock.
        self.host = host or socket.gethostname()
        # node uuid -> the token of the one conductor job working on it in this process.
        self._jobs: dict[str, object] = {}
        self.bus = bus

    # -- access and lookup ----------------------------------------------------------

    @staticmethod
    def _require_admin(ctx: RequestContext, resource: str) -> None:
        if not ctx.is_admin:
            raise be.HTTPForbidden(resource=resource)

    @staticmethod
    async def _get_node(conn: StoreConnection, ident: str) -> Node:
        """A node by uuid or by name."""
        if isinstance(ident, str) and ident:
            if is_uuid_like(ident):
                node = await repos.nodes.get(conn, ident.lower())
            else:
                node = await repos.nodes.first(conn, name=ident)
            if node is not None:
                return node
        raise be.NodeNotFound(node=ident)

    async def _read_node(self, ident: str) -> Node:
        async with self.store.begin() as conn:
            return await self._get_node(conn, ident)

    async def find_node(self, uuid: str) -> Node | None:
        """The node with this uuid, or None (internal: no context, no lookup by name)."""
        async with self.store.begin() as conn:
            return await repos.nodes.get(conn, uuid)

    @staticmethod
    def _network_context() -> RequestContext:
        # ironic talks to neutron with its own service credentials, not the caller's.
        return RequestContext.internal()

    # -- the node lock (rule 4) -------------------------------------------------------

    @staticmethod
    def node_key(uuid: str) -> tuple[str, str]:
        """What waiters on a node's changes wait for."""
        return ("baremetal.node", uuid)

    def _notify(self, uuid: str) -> None:
        self.rt.notify(self.node_key(uuid))

    async def _lock(self, uuid: str, timeout: float | None = LOCK_TIMEOUT) -> None:
        """Take the node's lock (ironic's exclusive task) and show it in Node.reservation."""
        if not await self.rt.locks.acquire("node", uuid, timeout=timeout):
            async with self.store.begin() as conn:
                node = await repos.nodes.get(conn, uuid)
            raise be.NodeLocked(node=uuid, host=(node.reservation if node else None) or self.host)
        try:
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, uuid, reservation=self.host)
        except BaseException:
            self.rt.locks.release("node", uuid)
            raise

    async def _unlock(self, uuid: str) -> None:
        try:
            if self.rt.alive:  # a dead incarnation writes nothing; recovery clears its reservations
                async with self.store.begin() as conn:
                    await repos.nodes.update(conn, uuid, expect={"reservation": self.host}, reservation=None)
        finally:
            self.rt.locks.release("node", uuid)

    @asynccontextmanager
    async def _node_locked(self, ident: str) -> AsyncIterator[Node]:
        """API-level work on one node: a bounded wait for its lock (NodeLocked), then the node as it is now."""
        node = await self._read_node(ident)
        await self._lock(node.uuid)
        try:
            async with self.store.begin() as conn:
                current = await repos.nodes.get(conn, node.uuid)
            if current is None:
                raise be.NodeNotFound(node=ident)
            yield current
        finally:
            await self._unlock(node.uuid)

    # -- provision state ---------------------------------------------------------------

    async def _transition(self, node: Node, event: str, *, target: Any = _AUTO, **changes: Any) -> Node:
        """Apply ``event`` to the node's provision state, only if nobody changed it meanwhile."""
        new_state = PROVISION_STATES.next_state(node.provision_state, event)
        if target is _AUTO:
            declared = PROVISION_STATES.states[new_state]
            target = None if declared.stable else declared.target
        now = self.now()
        values = dict(
            provision_state=new_state, target_provision_state=target,
            provision_updated_at=now, updated_at=now, **changes,
        )
        async with self.store.begin() as conn:
            changed = await repos.nodes.update(
                conn, node.uuid, expect={"provision_state": node.provision_state}, **values
            )
        if not changed:
            raise NodeChanged(node.uuid)
        self.rt.note(f"node {node.uuid}: {node.provision_state} -> {new_state} ({event})")
        self._notify(node.uuid)
        return dataclasses.replace(node, **values)

    @staticmethod
    def _refuse_illegal(node: Node, target: str, event: str) -> None:
        try:
            PROVISION_STATES.next_state(node.provision_state, event)
        except IllegalTransition:
            raise be.InvalidStateRequested(
                action=target, node=node.uuid, state=node.provision_state
            ) from None

    # -- conductor jobs ------------------------------------------------------------------

    def _start_job(
        self, uuid: str, kind: str, body: Callable[[str, object], Coroutine[Any, Any, None]]
    ) -> None:
        """Run ``body(uuid, token)`` in the background; a newer job for the node retires it."""
        token = object()
        self._jobs[uuid] = token
        self.rt.spawn(self._run_job(uuid, token, body), name=f"baremetal.{kind}:{uuid}")

    async def _run_job(
        self, uuid: str, token: object, body: Callable[[str, object], Coroutine[Any, Any, None]]
    ) -> None:
        try:
            await body(uuid, token)
        except NodeChanged:
            # rule 3: the node moved on (undeployed, deleted, failed by a reconciler); not ours now.
            self.rt.note(f"node {uuid}: job stopped, the node changed under it")
        finally:
            if self._jobs.get(uuid) is token:
                del self._jobs[uuid]

    def _job_running(self, uuid: str) -> bool:
        return uuid in self._jobs

    async def _current(self, uuid: str, token: object, states: tuple[str, ...]) -> Node:
        """The node, if this job still owns it and it is in one of ``states``; else NodeChanged."""
        if self._jobs.get(uuid) is not token:
            raise NodeChanged(uuid)
        async with self.store.begin() as conn:
            node = await repos.nodes.get(conn, uuid)
        if node is None or node.provision_state not in states:
            raise NodeChanged(uuid)
        return node


class NodeHold:
    """A conductor job's grip on a node's lock, taken and given back around wait states."""

    def __init__(self, service: BaremetalBase, uuid: str) -> None:
        self._service = service
        self._uuid = uuid
        self.held = False

    async def take(self) -> None:
        if not self.held:
            # A job waits as long as it takes: every holder of the lock lets go in bounded time.
            await self._service._lock(self._uuid, timeout=None)
            self.held = True

    async def give(self) -> None:
        if self.held:
            self.held = False
            await self._service._unlock(self._uuid)
