"""One schedule of a scenario: every step chosen by the explorer, every access recorded.

A schedule starts from the scenario's cloud as seeded and prepared once
(``SeededCloud``), runs the timeline's operations with all of them ready at
once, and asks a ``Decide`` function, before each step, which ready actor
goes next. It records each step's actor, point, ready set, epoch (how many
times the clock has moved on) and footprint. A decision may also stop the
schedule there, to crash it (the explorer then recovers from what was
captured at that point) or because it would only repeat an equivalent one.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from tether.cloud import Cloud, World
from tether.runtime.bugs import Bugs
from tether.runtime.clock import VirtualClock
from tether.runtime.errors import ControlPlaneCrash
from tether.runtime.faults import FaultPlan
from tether.services.context import RequestContext
from tether.sim.explore.durable import DurableState, capture, logical_digest, restore
from tether.sim.explore.footprint import NOTIFY, WAIT, WRITE, Footprint
from tether.sim.explore.recording import (
    ActorRandom,
    Recorder,
    RecordingClock,
    RecordingDict,
    RecordingHardware,
    RecordingHypervisor,
)
from tether.sim.explore.replies_key import replies_key
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import Scenario
from tether.sim.scenarios.runner import ScenarioResult, ScenarioRun
from tether.sim.scheduler import Actor, Deadlock, FifoStrategy, Scheduler, Step, scheduled_runtime
from tether.store.database import Database

CRASH = "!crash"  # a decision: the control plane dies here
# A state a crash leaves, told apart: logical digest, time, deletes requested, replies given (``replies_key``).
CrashKey = tuple[str, float, frozenset[str], tuple[object, ...]]
STOP = "!stop"  # a decision: nothing new lies beyond this point
OUT_OF_TIME = "!out-of-time"  # how a schedule ends when the exploration's time budget runs out in it
STEP_LIMIT = 2000  # a schedule this long is going round in circles
# Waiting users and builds wake on notifications; a look every few seconds besides is one
# more step to interleave with every write it could see, and every service notifies on change.
EXPLORER_POLL_SECONDS = 300.0


@dataclass
class Move:
    """One step of a schedule, as the explorer saw it."""

    actor: str
    point: str
    ready: tuple[str, ...]
    epoch: int
    footprint: Footprint = field(default_factory=Footprint)

    @property
    def token(self) -> str:
        return f"{self.actor}@{self.point}"


Decide = Callable[[int, tuple[str, ...], list[Move]], str]


class ObservedScheduler(Scheduler):
    """The deterministic scheduler, telling the recorder about signals, spawns and clock moves."""

    def __init__(self, clock: VirtualClock, strategy: Any, recorder: Recorder) -> None:
        super().__init__(clock, strategy)
        self.recorder = recorder
        self.woken: dict[str, Hashable] = {}
        self.epoch = 0

    def _unique_name(self, name: str) -> str:
        # The counter behind "name#2" is shared by everyone who spawns that name.
        self.recorder.touch("spawn-name", name, WRITE)
        unique = super()._unique_name(name)
        self.recorder.touch("actor", unique, WRITE)
        return unique

    def notify(self, key: Hashable) -> None:
        self.recorder.touch("signal", key, NOTIFY)
        super().notify(key)

    async def wait(self, actor: Actor, point: str, key: Hashable | None, timeout: float | None, *,
                   guard: bool = False) -> bool:
        if key is not None:
            self.recorder.touch("signal", key, WAIT)
            if guard:
                self.recorder.guard(key)
        # read by the actor's next step, when it runs again
        return self.recorder.observe(await super().wait(actor, point, key, timeout, guard=guard))  # type: ignore[no-any-return]

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, daemon: bool = False) -> Actor:
        actor = super().spawn(coro, name, daemon)
        self.recorder.spawned(actor.name)
        return actor

    def _make_ready(self, actor: Actor, notified: bool) -> None:
        if notified and actor.wake_key is not None:
            self.woken[actor.name] = actor.wake_key
        elif not notified:
            self.epoch += 1  # a timer fired: the clock moved on while nobody could run
        super()._make_ready(actor, notified)


class Director:
    """The strategy of an explored schedule: asks ``decide`` and files each step's footprint."""

    def __init__(self, decide: Decide, recorder: Recorder, on_node: Callable[[int], None] | None,
                 known: Callable[[int], Footprint | None] | None = None, deadline: float | None = None) -> None:
        """``on_node`` is told of each state between two steps, before the choice is made; ``known``
        gives the footprint of a step an earlier schedule took from the same state, if any. Past
        ``deadline`` (``time.perf_counter``) the schedule ends before its next step, unjudged."""
        self.decide = decide
        self.deadline = deadline
        self.known = known
        self.recorder = recorder
        self.on_node = on_node
        self.moves: list[Move] = []
        self.ended: str | None = None
        self.scheduler: ObservedScheduler | None = None
        self.capture: Callable[[], DurableState] | None = None
        self.where: Callable[[], str] = lambda: "start"
        self.crash_state: DurableState | None = None
        self.crashed_at: str | None = None
        self._started: set[str] = set()

    def finish_step(self) -> None:
        self.recorder.end_step()

    def choose(self, ready: list[Actor], trace: list[Step]) -> Actor | None:
        self.finish_step()
        assert self.scheduler is not None
        if self.on_node is not None:
            self.on_node(len(self.moves))
        names = tuple(sorted(actor.name for actor in ready))
        if len(self.moves) >= STEP_LIMIT:
            self.ended = "step-limit"
            return None
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.ended = OUT_OF_TIME  # a schedule that runs on and on must not hold the budget up
            return None
        choice = self.decide(len(self.moves), names, self.moves)
        if choice == CRASH and self.capture is not None:
            # taken now, before the dead incarnation's actors are cancelled: a crash runs no cleanup
            self.crash_state = self.capture()
            self.crashed_at = self.where()
        if choice in (CRASH, STOP):
            self.ended = choice
            return None
        actor = next((actor for actor in ready if actor.name == choice), None)
        if actor is None:
            raise ScheduleDiverged(f"step {len(self.moves)}: {choice!r} is not ready (ready: {', '.join(names)})")
        known = self.known(len(self.moves)) if self.known is not None else None
        move = Move(actor.name, actor.point, names, self.scheduler.epoch, known or Footprint())
        self.moves.append(move)
        # A step run again from the same state touches the same: its footprint is not recorded twice.
        self.recorder.begin_step(actor.name, move.footprint, recording=known is None)
        woken = self.scheduler.woken.pop(actor.name, None)
        started = actor.name not in self._started
        self._started.add(actor.name)
        if known is None:
            if woken is not None:
                move.footprint.touch("signal", woken, WAIT)
            if started:
                move.footprint.touch("actor", actor.name, WRITE)
        return actor


class ScheduleDiverged(RuntimeError):
    """A schedule did not repeat itself: the same choices met a different set of ready actors."""


@dataclass
class SeededCloud:
    """A scenario's cloud, seeded and prepared once; every schedule starts from a copy."""

    scenario: Scenario
    bugs: Bugs
    state: DurableState
    names: dict[str, str]
    admin: RequestContext
    start: float
    user_made: dict[str, str]

    @classmethod
    async def build(cls, scenario: Scenario, bugs: Bugs, database: Database) -> SeededCloud:
        recorder = Recorder()  # idle: seeding is not explored
        world = _world(scenario, database, recorder)
        run = ScenarioRun(scenario, database, bugs=bugs, faults=FaultPlan(), world=world, rng=ActorRandom("seed"))
        await run.setup()
        assert run.env is not None
        if run.crashed_at or run.errors:
            raise RuntimeError(f"scenario {scenario.name} could not be prepared: {run.errors or run.crashed_at}")
        return cls(scenario, bugs, capture(world, run.clock.now()), dict(run.env.names), run.env.admin, run.start,
                   dict(run.env.user_made))


def _world(scenario: Scenario, database: Database, recorder: Recorder) -> World:
    return World(database, RecordingHypervisor(recorder), RecordingHardware(
        recorder, deploy_seconds=scenario.deploy_seconds, clean_seconds=scenario.clean_seconds))


class _FromSeeded(ScenarioRun):
    """A run on a copy of a seeded cloud, with every shared in-memory table instrumented."""

    def __init__(self, seeded: SeededCloud, database: Database, recorder: Recorder, state: DurableState,
                 strategy: Any, *, allow_mended: bool = False) -> None:
        self.recorder = recorder
        recorder.new_schedule()
        self._first_strategy = strategy
        world = _world(seeded.scenario, database, recorder)
        restore(state, world)
        super().__init__(seeded.scenario, database, bugs=seeded.bugs, faults=FaultPlan(), world=world,
                         clock=RecordingClock(recorder, state.now), rng=ActorRandom("schedule"),
                         allow_mended=allow_mended)
        self.start = seeded.start
        self.env = Env(self.cloud, seeded.admin, names=RecordingDict(recorder, "env.name", seeded.names),
                       poll_seconds=EXPLORER_POLL_SECONDS, user_made=dict(seeded.user_made),
                       deleted_on_request=set(state.requested), unseen=recorder.unseen)
        self.mend_when_clean = False

    def _incarnation(self, faults: FaultPlan) -> Cloud:
        self.incarnations += 1
        assert isinstance(self.rng, ActorRandom)
        self.rng.incarnation = self.incarnations
        strategy = self._first_strategy if self.incarnations == 1 else FifoStrategy()
        scheduler = ObservedScheduler(self.clock, strategy, self.recorder)
        if isinstance(strategy, Director):
            strategy.scheduler = scheduler
        runtime = scheduled_runtime(scheduler, faults=faults, bugs=self.bugs)
        runtime.locks._held = RecordingDict(self.recorder, "lock")  # type: ignore[assignment]
        # The build's look at its node, like the users' (EXPLORER_POLL_SECONDS), waits for notifications.
        cloud = Cloud(self.world, runtime, self.rng, fast_passwords=True, node_poll_interval=EXPLORER_POLL_SECONDS)
        cloud.baremetal.jobs.tokens = RecordingDict(self.recorder, "bm.job")
        return cloud


@dataclass
class Played:
    """How one explored schedule went."""

    moves: list[Move]
    ended: str | None  # None: ran to the end; CRASH, STOP or "step-limit"
    result: ScenarioResult | None = None
    deadlock: str | None = None
    final_state: str | None = None
    crash_state: DurableState | None = None
    crashed_at: str | None = None


@dataclass(frozen=True)
class CrashPoint:
    """A state between two steps that a crash could leave, and the schedule prefix that reaches it."""

    index: int  # how many steps ran before the crash
    at: str  # the last actor and the checkpoint it had reached
    state: DurableState
    recovers_as: Hashable  # what recovery depends on: equal for two states it recovers alike


class ExploredRun(_FromSeeded):
    def __init__(self, seeded: SeededCloud, database: Database, recorder: Recorder, decide: Decide,
                 crash_states: set[CrashKey] | None = None, seen_states: int = 0,
                 known: Callable[[int], Footprint | None] | None = None, *, allow_mended: bool = False,
                 deadline: float | None = None) -> None:
        """With ``crash_states``, capture every state a crash could leave that is not in it yet.

        The first ``seen_states`` states (before the first step, and so on) are the same as an
        earlier schedule's, whose crash states are in ``crash_states`` already: they are not read.
        """
        self.director = Director(decide, recorder, self._node if crash_states is not None else None, known,
                                 deadline)
        self.crash_states = crash_states
        self.seen_states = seen_states
        self.crash_points: list[CrashPoint] = []
        self._last_epoch_captured: int | None = None
        self._digest: tuple[int, str] = (-1, "")  # after how many steps, the logical digest then
        super().__init__(seeded, database, recorder, seeded.state, self.director, allow_mended=allow_mended)
        self.director.capture = self._capture
        self.director.where = self._where

    def _node(self, index: int) -> None:
        """Between two steps: keep what a crash here would leave, unless an equal state was kept."""
        assert self.crash_states is not None and self.director.scheduler is not None
        if index < self.seen_states:
            return
        moves = self.director.moves
        epoch = self.director.scheduler.epoch
        if index > 0 and not moves[-1].footprint.durable and epoch == self._last_epoch_captured:
            return  # nothing a crash keeps has changed since the last capture
        self._last_epoch_captured = epoch
        assert self.env is not None
        # Two schedules that leave one store but told the users different things are judged apart
        # (recovery itself never reads what they were told: it runs once for both).
        durable = (self._logical_digest(), self.clock.now(), self._requested())
        key = (*durable, replies_key(self.env.history))
        if key in self.crash_states:
            return
        self.crash_states.add(key)
        self.crash_points.append(CrashPoint(index, self._where(), self._capture(), durable))

    def _capture(self) -> DurableState:
        assert self.env is not None
        return replace(capture(self.world, self.clock.now()), requested=self._requested(),
                       history=tuple(self.env.history))

    def _requested(self) -> frozenset[str]:
        """The deletes users asked for that the invariants judge by: of what users made, no more.

        A request to delete anything else (a server's own ports) changes no verdict, and telling
        states apart by it would only explore them twice."""
        assert self.env is not None
        return frozenset(self.env.deleted_on_request.intersection(self.env.user_made))

    def state_key(self) -> tuple[Hashable, int]:
        """Everything the rest of this schedule depends on, as a digest; and the clock's epoch.

        The store, the hypervisor and the hardware (as the logical digest sees
        them: numbers handed out in order of arrival count as a renaming, as the
        reduction counts them), the time, the tables the actors share in memory,
        and each actor: where it is, what it waits for, and the history of what
        it has read (``Recorder``), or how it ended.
        """
        scheduler = self.director.scheduler
        assert scheduler is not None and self.env is not None
        label = self.recorder.label
        histories = self.recorder.histories
        actors = sorted(
            (actor.name, actor.state, repr(actor.error) if actor.state == "done" else
             repr((actor.point, actor.wake_key, actor.wake_at, actor.notified, histories.get(actor.name))))
            for actor in scheduler.actors)
        locks = self.cloud.rt.locks
        memory = (
            sorted((repr(slot), label(owner)) for slot, owner in dict.items(locks._held)),
            sorted((label(owner), repr(slots)) for owner, slots in locks._by_owner.items()),
            sorted((node, label(token)) for node, token in dict.items(self.cloud.baremetal.jobs.tokens)),
            sorted(dict.items(self.env.names)), sorted(self.env.outcomes.items()), list(self.errors),
            sorted(self.env.user_made.items()), sorted(self._requested()),
            sorted(scheduler._names.items()), repr(sorted(self.world.hardware._failures.items())),
            replies_key(self.env.history),
        )
        text = repr((self._logical_digest(), self.clock.now(), actors, memory))
        return hashlib.blake2b(text.encode(), digest_size=16).digest(), scheduler.epoch

    def _logical_digest(self) -> str:
        # Only a step changes what a crash keeps (a timer firing only wakes actors): one digest
        # per node serves both the crash capture and the state's key.
        steps = len(self.director.moves)
        if self._digest[0] != steps:
            self._digest = (steps, logical_digest(self.world))
        return self._digest[1]

    def _where(self) -> str:
        moves = self.director.moves
        if not moves:
            return "start"
        assert self.director.scheduler is not None
        last = moves[-1].actor
        return f"{last}@{self.director.scheduler._actor_named(last).point}"

    async def _restart(self) -> None:
        if self.director.ended is not None:
            return  # the explorer stopped this schedule; recovery, if any, runs from a capture
        await super()._restart()

    async def play_schedule(self, *, judge: bool = True) -> Played:
        scheduler = self.scheduler
        deadlock = None
        try:
            await self.play(timing=False)
        except Deadlock as error:
            deadlock = str(error)
            scheduler.crash = ControlPlaneCrash("deadlock")
            await scheduler._cancel_all()
        except ScheduleDiverged:
            scheduler.crash = ControlPlaneCrash("diverged")  # let no actor run on, then say so
            await scheduler._cancel_all()
            raise
        self.director.finish_step()
        played = Played(self.director.moves, self.director.ended, deadlock=deadlock,
                        crash_state=self.director.crash_state, crashed_at=self.director.crashed_at)
        if self.director.ended is not None and self.director.ended != "step-limit":
            return played
        if self.crash_states is not None and self.director.ended is None:
            self._node(len(self.director.moves))
        if deadlock is not None or self.director.ended == "step-limit":
            # the stuck incarnation is let go; a fresh one (no recovery) reads what it left
            self.journals.append(self.cloud.rt.journal)
            self.cloud = self._incarnation(FaultPlan())
            assert self.env is not None
            self.env.cloud = self.cloud
        else:
            scheduler.strategy = FifoStrategy()
        played.final_state = logical_digest(self.world)
        if judge:
            played.result = await self.judge()
        return played


class RecoveryRun(_FromSeeded):
    """A control plane that starts on what a crash left behind, recovers, and is judged."""

    def __init__(self, seeded: SeededCloud, database: Database, recorder: Recorder, state: DurableState,
                 crashed_at: str, *, allow_mended: bool = False) -> None:
        super().__init__(seeded, database, recorder, state, FifoStrategy(), allow_mended=allow_mended)
        self.crashed_at = crashed_at
        self.state = state

    async def recover(self) -> ScenarioResult:
        assert self.env is not None
        # The replies given before the crash are judged against what recovery leaves.
        self.env.history = list(self.state.history)
        await self._restart()
        return await self.judge(expectations=False)
