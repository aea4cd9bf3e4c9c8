"""What every service operation runs on: time, checkpoints, faults, spawning, signals.

One ``Runtime`` is one incarnation of the control plane. Under a ``Scheduler``
(scenarios, the explorer) every checkpoint is a scheduling point and time is
virtual; without one (``tether serve``) operations run freely on asyncio and
checkpoints only apply fault rules.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import defaultdict
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.sim.bugs import Bugs
from tether.sim.checkpoints import is_checkpoint
from tether.sim.clock import Clock, RealClock
from tether.sim.errors import CheckpointInTransaction, ControlPlaneCrash, InjectedFault
from tether.sim.faults import FaultPlan
from tether.sim.locks import LockTable

if TYPE_CHECKING:
    # Only scenarios and the explorer run under a scheduler: a live cloud need not import it.
    from tether.sim.scheduler import Scheduler

log = logging.getLogger(__name__)

in_transaction: contextvars.ContextVar[bool] = contextvars.ContextVar("in_tx", default=False)


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
        scheduler: Scheduler | None = None,
        faults: FaultPlan | None = None,
        bugs: Bugs | None = None,
        on_crash: Callable[[ControlPlaneCrash], None] | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.clock: Clock = scheduler.clock if scheduler else (clock or RealClock())
        self.faults = faults or FaultPlan()
        self.bugs = bugs or Bugs()
        self.journal: list[JournalEntry] = []
        self._on_crash = on_crash
        self._dead: ControlPlaneCrash | None = None
        self._waiters: dict[Hashable, set[asyncio.Future[bool]]] = defaultdict(set)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.locks = LockTable(self)

    # -- liveness -----------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._dead is None and (self.scheduler is None or self.scheduler.crash is None)

    def ensure_alive(self) -> None:
        """Raise if this incarnation has crashed: dead code must not touch the store or drivers."""
        if self._dead is not None:
            raise self._dead
        if self.scheduler is not None and self.scheduler.crash is not None:
            raise self.scheduler.crash

    def crash(self, point: str) -> ControlPlaneCrash:
        crash = ControlPlaneCrash(point)
        self._dead = crash
        if self.scheduler is not None and self.scheduler.crash is None:
            self.scheduler.crash = crash
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
        actor = self._actor()
        if actor is not None:
            await self.scheduler.yield_at(actor, name)  # type: ignore[union-attr]
        self.ensure_alive()

    # -- time and signals ---------------------------------------------------

    def now(self) -> float:
        return self.clock.now()

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds, "sleep")

    async def _sleep(self, seconds: float, point: str) -> None:
        actor = self._actor()
        if actor is not None:
            await self.scheduler.wait(actor, point, None, seconds)  # type: ignore[union-attr]
        else:
            await asyncio.sleep(seconds)
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
        actor = self._actor()
        if actor is not None:
            notified = await self.scheduler.wait(actor, point, key, timeout, guard=guard)  # type: ignore[union-attr]
            self.ensure_alive()
            return notified
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters[key].add(future)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return False
        finally:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(future)
                if not waiters:
                    del self._waiters[key]
            self.ensure_alive()

    def notify(self, key: Hashable) -> None:
        if self.scheduler is not None:
            self.scheduler.notify(key)
        for future in self._waiters.get(key, ()):
            if not future.done():
                future.set_result(True)

    # -- background work ----------------------------------------------------

    def spawn(
        self, coro: Coroutine[Any, Any, Any], *, name: str, daemon: bool = False
    ) -> asyncio.Task[Any] | None:
        """Run ``coro`` concurrently: an actor under the scheduler, a task otherwise."""
        if not self.alive:
            coro.close()
            return None
        if self.scheduler is not None:
            self.scheduler.spawn(coro, name, daemon)
            return None
        context = contextvars.copy_context()
        context.run(in_transaction.set, False)
        task = asyncio.get_running_loop().create_task(coro, name=name, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, ControlPlaneCrash):
            return
        if error is not None:
            log.error("background task %s failed", task.get_name(), exc_info=error)

    async def drain(self) -> None:
        """Wait until no spawned task is left (real-time mode; used by tests and shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def cancel_background(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.drain()

    # -- journal ------------------------------------------------------------

    def note(self, text: str) -> None:
        actor = self._actor()
        name = actor.name if actor is not None else "-"
        self.journal.append(JournalEntry(self.clock.now(), name, text))
        log.debug("%s: %s", name, text)

    def _actor(self):  # type: ignore[no-untyped-def]
        if self.scheduler is None:
            return None
        return self.scheduler.current()
