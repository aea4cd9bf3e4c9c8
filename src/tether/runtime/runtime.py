"""What every service operation runs on: time, checkpoints, faults, locks, spawning, signals.

One ``Runtime`` is one incarnation of the control plane. How its operations
are run is its executor's business: plain asyncio for ``tether serve``
(checkpoints then only apply fault rules), or the deterministic scheduler of
``tether.sim`` (every checkpoint a scheduling point, time virtual).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any

from tether.runtime.bugs import Bugs
from tether.runtime.checkpoints import is_checkpoint, is_protection
from tether.runtime.clock import Clock, RealClock
from tether.runtime.errors import CheckpointInTransaction, ControlPlaneCrash, InjectedFault
from tether.runtime.executor import AsyncioExecutor, Executor
from tether.runtime.faults import FaultPlan
from tether.runtime.locks import Locks, MemoryLocks
from tether.runtime.transactions import in_transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JournalEntry:
    at: float
    actor: str
    text: str


class Runtime:
    def __init__(
        self,
        *,
        clock: Clock | None = None,
        executor: Executor | None = None,
        faults: FaultPlan | None = None,
        bugs: Bugs | None = None,
        on_crash: Callable[[ControlPlaneCrash], None] | None = None,
    ) -> None:
        self.executor: Executor = executor or AsyncioExecutor()
        self.clock: Clock = clock or RealClock()
        self.faults = faults or FaultPlan()
        self.bugs = bugs or Bugs()
        self.journal: list[JournalEntry] = []
        self._on_crash = on_crash
        self._dead: ControlPlaneCrash | None = None
        self.locks: Locks = MemoryLocks(self)

    # -- liveness -----------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._dead is None and self.executor.crashed() is None

    def ensure_alive(self) -> None:
        """Raise if this incarnation has crashed: dead code must not touch the store or drivers."""
        dead = self._dead or self.executor.crashed()
        if dead is not None:
            raise dead

    def crash(self, point: str) -> ControlPlaneCrash:
        crash = ControlPlaneCrash(point)
        self._dead = crash
        self.executor.crash(crash)
        self.note(f"control plane crashed at {point}")
        if self._on_crash is not None:
            self._on_crash(crash)
        return crash

    # -- checkpoints --------------------------------------------------------

    async def checkpoint(self, name: str) -> None:
        if not is_checkpoint(name):
            raise ValueError(f"undeclared checkpoint {name!r}")
        if in_transaction.get():
            raise CheckpointInTransaction(name)
        self.ensure_alive()
        rule = self.faults.fire(name) if self.faults.rules else None
        if rule is not None:
            self.note(f"fault {rule} fired")
            if rule.action == "crash":
                raise self.crash(name)
            if rule.action == "error":
                raise InjectedFault(name)
            await self._sleep(rule.seconds, name)
        await self.executor.yield_at(name)
        self.ensure_alive()

    def protection_on(self, name: str) -> bool:
        """False when a fault rule ``NAME=off`` switches this protection off (not a scheduling point)."""
        if not is_protection(name):
            raise ValueError(f"undeclared protection {name!r}")
        rule = self.faults.fire(name) if self.faults.rules else None
        if rule is not None and rule.action == "off":
            self.note(f"fault {rule} fired: protection {name} is off")
            return False
        return True

    # -- time and signals ---------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    def owner(self) -> object:
        return self.executor.owner()

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds, "sleep")

    async def _sleep(self, seconds: float, point: str) -> None:
        await self.executor.sleep(seconds, point)
        self.ensure_alive()

    async def wait(self, key: Hashable, timeout: float | None, point: str = "wait", *, guard: bool = False) -> bool:
        """Wait for ``notify(key)``; False after ``timeout`` seconds.

        A notification can arrive just before the wait begins, so callers wait
        in a loop that re-reads the truth each time (level-triggered).

        ``guard`` is the caller's promise that its loop is memoryless: each turn
        re-reads everything it decides on and carries nothing over to the next
        (only a deadline fixed before the loop). A turn that then only read and
        waited again changed nothing, so the race explorer need not reverse it
        with a later step that notifies ``key`` (that step wakes it anyway).
        """
        notified = await self.executor.wait(key, timeout, point, guard)
        self.ensure_alive()
        return notified

    def notify(self, key: Hashable) -> None:
        self.executor.notify(key)

    # -- background work ----------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str, daemon: bool = False) -> Any:
        """Run ``coro`` concurrently (a task, or an actor of the scheduler)."""
        if not self.alive:
            coro.close()
            return None
        return self.executor.spawn(coro, name, daemon)

    async def drain(self) -> None:
        """Wait until no spawned task is left (real-time mode; used by tests and shutdown)."""
        await self.executor.drain()

    async def cancel_background(self) -> None:
        await self.executor.cancel_background()

    # -- journal ------------------------------------------------------------

    def note(self, text: str) -> None:
        name = self.executor.actor_name() or "-"
        self.journal.append(JournalEntry(self.clock.now(), name, text))
        log.debug("%s: %s", name, text)
