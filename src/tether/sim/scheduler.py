"""A deterministic scheduler: one actor runs at a time, from checkpoint to checkpoint.

Every operation, spawned event handler and conductor job is an *actor*. An
actor runs only while it holds the turn and gives it back at each checkpoint,
when it sleeps, and when it waits for a lock or a signal. The strategy picks
who runs next from the actors that are ready, so the same strategy and seed
always give the same interleaving. Time is virtual: when nobody is ready the
clock jumps to the earliest timer.

Between two checkpoints an actor may await real I/O (a database round trip);
the others stay parked on their own events meanwhile, so that I/O can never
let another actor in.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
from collections.abc import Coroutine, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tether.runtime.clock import VirtualClock
from tether.runtime.errors import ControlPlaneCrash
from tether.runtime.executor import AsyncioExecutor
from tether.runtime.runtime import Runtime
from tether.runtime.transactions import in_transaction

_current: contextvars.ContextVar[Actor | None] = contextvars.ContextVar("actor", default=None)


@dataclass(eq=False)
class Actor:
    name: str
    daemon: bool
    coro: Coroutine[Any, Any, Any] | None
    state: str = "ready"  # ready | running | waiting | done
    point: str = "task.start"
    wake_key: Hashable | None = None
    wake_at: float | None = None
    notified: bool = False
    ready_seq: int = 0
    result: Any = None
    error: BaseException | None = None
    go: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None


@dataclass(frozen=True)
class Step:
    actor: str
    point: str
    at: float


class Deadlock(RuntimeError):
    """Every operation is waiting for something no other operation will give."""


def _fresh_task_context() -> None:
    # Spawned work starts outside any transaction of its parent's.
    in_transaction.set(False)


class Strategy(Protocol):
    def choose(self, ready: list[Actor], trace: list[Step]) -> Actor | None:
        """Pick the next actor to run from those that are ready (in a stable order).

        None crashes the control plane right here, between two steps: the
        explorer's way to crash at any checkpoint of any schedule.
        """


class FifoStrategy:
    """The actor that has been ready longest runs next: a fair, boring scheduler."""

    def choose(self, ready: list[Actor], trace: list[Step]) -> Actor:
        return min(ready, key=lambda actor: actor.ready_seq)


class RandomStrategy:
    """Seeded random choices, optionally bounded in how often the running actor changes."""

    def __init__(self, seed: int, max_switches: int | None = None) -> None:
        self._rng = random.Random(seed)
        self._max_switches = max_switches
        self._switches = 0

    def choose(self, ready: list[Actor], trace: list[Step]) -> Actor:
        last = trace[-1].actor if trace else None
        same = [actor for actor in ready if actor.name == last]
        if same and self._max_switches is not None and self._switches >= self._max_switches:
            return same[0]
        choice = self._rng.choice(ready)
        if last is not None and choice.name != last and same:
            self._switches += 1
        return choice


class ScheduleDiverged(RuntimeError):
    """A replayed choice names an actor that is not ready at that step."""


class ReplayStrategy:
    """Follow a recorded list of actor names, then fall back to FIFO."""

    def __init__(self, choices: list[str], fallback: Strategy | None = None) -> None:
        self._choices = list(choices)
        self._fallback = fallback or FifoStrategy()

    def choose(self, ready: list[Actor], trace: list[Step]) -> Actor:
        step = len(trace)
        if step < len(self._choices):
            wanted = self._choices[step]
            for actor in ready:
                if actor.name == wanted:
                    return actor
            names = ", ".join(actor.name for actor in ready)
            raise ScheduleDiverged(f"step {step}: {wanted!r} is not ready (ready: {names})")
        return self._fallback.choose(ready, trace)


class Scheduler:
    def __init__(self, clock: VirtualClock, strategy: Strategy | None = None) -> None:
        self.clock = clock
        self.strategy: Strategy = strategy or FifoStrategy()
        self.actors: list[Actor] = []
        self.trace: list[Step] = []
        self.crash: ControlPlaneCrash | None = None
        self._yielded = asyncio.Event()
        self._seq = 0
        self._names: dict[str, int] = {}

    # -- actors' side -------------------------------------------------------

    @staticmethod
    def current() -> Actor | None:
        return _current.get()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, daemon: bool = False) -> Actor:
        actor = Actor(name=self._unique_name(name), daemon=daemon, coro=coro)
        actor.ready_seq = self._next_seq()
        self.actors.append(actor)
        context = contextvars.copy_context()
        context.run(_current.set, actor)
        context.run(_fresh_task_context)
        actor.task = asyncio.get_running_loop().create_task(self._body(actor), context=context)
        return actor

    def _unique_name(self, name: str) -> str:
        count = self._names.get(name, 0) + 1
        self._names[name] = count
        return name if count == 1 else f"{name}#{count}"

    async def _body(self, actor: Actor) -> None:
        await actor.go.wait()
        actor.go.clear()
        actor.state = "running"
        coro, actor.coro = actor.coro, None
        if self.crash is not None:
            coro.close()  # type: ignore[union-attr]
            actor.state = "done"
            self._yielded.set()
            return
        try:
            actor.result = await coro  # type: ignore[misc]
        except ControlPlaneCrash as crash:
            self.crash = self.crash or crash
            actor.error = crash
        except asyncio.CancelledError:
            actor.error = None
        except Exception as error:  # the operation's own outcome, kept for the caller
            actor.error = error
        finally:
            actor.state = "done"
            self._yielded.set()

    async def yield_at(self, actor: Actor, point: str) -> None:
        actor.state, actor.point = "ready", point
        actor.ready_seq = self._next_seq()
        await self._park(actor)

    async def wait(self, actor: Actor, point: str, key: Hashable | None, timeout: float | None, *,
                   guard: bool = False) -> bool:
        """Wait until ``notify(key)`` or ``timeout`` virtual seconds; True when notified.

        ``guard``: see ``Runtime.wait``; it matters only to an observer of the steps.
        """
        actor.state, actor.point = "waiting", point
        actor.wake_key, actor.notified = key, False
        actor.wake_at = None if timeout is None else self.clock.now() + max(timeout, 0.0)
        await self._park(actor)
        return actor.notified

    def notify(self, key: Hashable) -> None:
        for actor in self.actors:
            if actor.state == "waiting" and actor.wake_key == key:
                self._make_ready(actor, notified=True)

    async def _park(self, actor: Actor) -> None:
        self._yielded.set()
        await actor.go.wait()
        actor.go.clear()
        actor.state = "running"
        if self.crash is not None:
            raise asyncio.CancelledError

    def _make_ready(self, actor: Actor, notified: bool) -> None:
        actor.state, actor.notified = "ready", notified
        actor.wake_key, actor.wake_at = None, None
        actor.ready_seq = self._next_seq()

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # -- the driver's side --------------------------------------------------

    def _live(self) -> bool:
        return any(actor.state != "done" and not actor.daemon for actor in self.actors)

    async def run(self) -> None:
        """Run until every non-daemon actor is done, or the control plane crashes."""
        while self.crash is None and self._live():
            ready = [actor for actor in self.actors if actor.state == "ready"]
            if not ready:
                timed = [a for a in self.actors if a.state == "waiting" and a.wake_at is not None]
                if not timed:
                    stuck = ", ".join(
                        f"{a.name} at {a.point}" for a in self.actors if a.state == "waiting"
                    )
                    raise Deadlock(f"every actor waits and no timer is set: {stuck}")
                moment = min(a.wake_at for a in timed)  # type: ignore[type-var]
                self.clock.advance_to(moment)
                for actor in timed:
                    if actor.wake_at is not None and actor.wake_at <= moment:
                        self._make_ready(actor, notified=False)
                continue
            actor = self.strategy.choose(ready, self.trace)
            if actor is None:
                last = self.trace[-1] if self.trace else None
                where = self._actor_named(last.actor).point if last else "task.start"
                self.crash = ControlPlaneCrash(where)
                break
            self.trace.append(Step(actor.name, actor.point, self.clock.now()))
            self._yielded.clear()
            actor.go.set()
            await self._yielded.wait()
        if self.crash is not None:
            await self._cancel_all()

    def _actor_named(self, name: str) -> Actor:
        return next(actor for actor in self.actors if actor.name == name)

    async def _cancel_all(self) -> None:
        # In a crash no code of the dead control plane may run again: parked
        # actors wake only to be cancelled (see _park), never to continue.
        for actor in self.actors:
            if actor.state != "done" and actor.task is not None:
                actor.go.set()
        pending = [a.task for a in self.actors if a.task is not None and not a.task.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def stop_daemons(self) -> None:
        for actor in self.actors:
            if actor.daemon and actor.task is not None and not actor.task.done():
                actor.task.cancel()
        pending = [a.task for a in self.actors if a.task is not None and not a.task.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


class SchedulerExecutor(AsyncioExecutor):
    """The kernel's executor under the scheduler: an actor's checkpoints, sleeps and waits are
    scheduling points in virtual time; code outside any actor (seeding, the verdict) runs on
    plain asyncio as in ``tether serve``."""

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__()
        self.scheduler = scheduler

    def owner(self) -> object:
        return Scheduler.current() or super().owner()

    def actor_name(self) -> str | None:
        actor = Scheduler.current()
        return actor.name if actor is not None else None

    def crashed(self) -> ControlPlaneCrash | None:
        return self.scheduler.crash

    def crash(self, crash: ControlPlaneCrash) -> None:
        if self.scheduler.crash is None:
            self.scheduler.crash = crash

    async def yield_at(self, point: str) -> None:
        actor = Scheduler.current()
        if actor is not None:
            await self.scheduler.yield_at(actor, point)

    async def sleep(self, seconds: float, point: str) -> None:
        actor = Scheduler.current()
        if actor is None:
            await super().sleep(seconds, point)
        else:
            await self.scheduler.wait(actor, point, None, seconds)

    async def wait(self, key: Hashable, timeout: float | None, point: str, guard: bool) -> bool:
        actor = Scheduler.current()
        if actor is None:
            return await super().wait(key, timeout, point, guard)
        return await self.scheduler.wait(actor, point, key, timeout, guard=guard)

    def notify(self, key: Hashable) -> None:
        self.scheduler.notify(key)
        super().notify(key)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, daemon: bool) -> None:
        self.scheduler.spawn(coro, name, daemon)
        return None

    async def drain(self) -> None:
        """Spawned work runs as actors, when the scheduler runs them: nothing to wait for here."""


def scheduled_runtime(scheduler: Scheduler, **options: Any) -> Runtime:
    """A runtime whose operations run under ``scheduler``, on its virtual clock."""
    return Runtime(executor=SchedulerExecutor(scheduler), clock=scheduler.clock, **options)
