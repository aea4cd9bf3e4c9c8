"""Run a scenario on the real services, deterministically, and judge the end state.

The cloud is seeded with fault rules off; then the timeline's actors start
and the seed's own timing (and any user fault rules) apply. A crash ends the
incarnation: a new one starts on the same store and hardware and recovers.
Invariants are checked once on what the operations left, and again after
the reconcilers have run until nothing changes.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.engine import make_url

from tether.audit.local import collect
from tether.cloud import Cloud, World
from tether.domain.invariants import Snapshot, Violation, check_all, transient_leftovers
from tether.domain.replies import Event, Facts, Observed, check_replies, facts_of
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.reconcile.runner import mend
from tether.runtime.bugs import Bugs
from tether.runtime.clock import VirtualClock
from tether.runtime.faults import FaultPlan
from tether.seeding import seed_demo_cloud, wait_for_nodes
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import Scenario, Timed
from tether.sim.scheduler import FifoStrategy, Scheduler, SchedulerExecutor, Strategy, scheduled_runtime
from tether.store.database import Database

T = TypeVar("T")
MAX_RECONCILE_PASSES = 10


@dataclass
class ScenarioResult:
    scenario: str
    violations: list[Violation]
    left_by_operations: list[Violation]
    mended: list[Violation]
    unmet: list[str]
    leftovers: list[str]
    steps: list[dict[str, Any]]
    crashed_at: str | None = None
    errors: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    # Mends the scenario did not declare: the operations (or, after a crash, the recovery) left
    # them for the backstop, which fails the run unless mends are allowed.
    unexpected_mends: list[Violation] = field(default_factory=list)
    # Replies the states contradict: an operation answered something that was not so.
    inconsistent_replies: list[Violation] = field(default_factory=list)
    # What the operations left, as the replies are judged against it.
    left_facts: Facts | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return not (self.violations or self.unmet or self.leftovers or self.errors or self.unexpected_mends
                    or self.inconsistent_replies)

    def replies_judged(self, history: list[Event], crashed_at: str | None) -> ScenarioResult:
        """The same end state, judged against another history of replies.

        Nothing but this judgement reads the history, so two crashes that left one
        durable state but told users different things recover alike.
        """
        assert self.left_facts is not None
        lies = check_replies([*history, Observed(self.left_facts)])
        return replace(self, inconsistent_replies=lies, crashed_at=crashed_at)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "passed": self.passed,
            "violations": [v.as_dict() for v in self.violations],
            "mended": [v.as_dict() for v in self.mended],
            "unexpected_mends": [v.as_dict() for v in self.unexpected_mends],
            "inconsistent_replies": [v.as_dict() for v in self.inconsistent_replies],
            "unmet": self.unmet,
            "leftovers": self.leftovers,
            "crashed_at": self.crashed_at,
            "errors": self.errors,
            "steps": self.steps,
        }


class ScenarioRun:
    def __init__(
        self,
        scenario: Scenario,
        database: Database,
        *,
        bugs: Bugs,
        faults: FaultPlan,
        seed: int = 0,
        strategy_factory: Callable[[], Strategy] = FifoStrategy,
        world: World | None = None,
        clock: VirtualClock | None = None,
        rng: random.Random | None = None,
        allow_mended: bool = False,
    ) -> None:
        """``world``, ``clock`` and ``rng`` let the explorer start from a cloud it seeded once.

        With ``allow_mended`` a mend the scenario does not expect is reported but fails nothing.
        """
        self.scenario = scenario
        self.allow_mended = allow_mended
        self.database = database
        self.bugs = bugs
        self.faults = faults
        self.timing = FaultPlan.parse(list(scenario.faults))
        self.rng = rng or random.Random(seed)
        self.strategy_factory = strategy_factory
        self.clock = clock or VirtualClock()
        self.start = self.clock.now()
        self.journals: list[list[Any]] = []
        self.world = world or World(database, FakeHypervisor(), FakeHardware(
            deploy_seconds=scenario.deploy_seconds, clean_seconds=scenario.clean_seconds))
        self.incarnations = 0
        self.cloud = self._incarnation(FaultPlan())
        self.env: Env | None = None
        self.crashed_at: str | None = None
        self.errors: list[str] = []
        self.trace: list[str] = []
        # The scenario tests run the reconcilers even on a clean state, as a live cloud would.
        self.mend_when_clean = True

    @property
    def scheduler(self) -> Scheduler:
        """The scheduler of the incarnation running now."""
        executor = self.cloud.rt.executor
        assert isinstance(executor, SchedulerExecutor)
        return executor.scheduler

    def _incarnation(self, faults: FaultPlan) -> Cloud:
        self.incarnations += 1
        runtime = scheduled_runtime(Scheduler(self.clock, self.strategy_factory()), faults=faults, bugs=self.bugs)
        return Cloud(self.world, runtime, self.rng, fast_passwords=True)

    async def _drive(self, actors: list[tuple[str, Awaitable[Any]]]) -> None:
        scheduler = self.scheduler
        first_actor, first_step = len(scheduler.actors), len(scheduler.trace)
        for name, coro in actors:
            self.cloud.rt.spawn(coro, name=name)  # type: ignore[arg-type]
        await scheduler.run()
        self.trace += [f"{step.actor}@{step.point}" for step in scheduler.trace[first_step:]]
        for actor in scheduler.actors[first_actor:]:
            if actor.error is not None and scheduler.crash is None:
                self.errors.append(f"{actor.name}: {type(actor.error).__name__}: {actor.error}")
        if scheduler.crash is not None and self.crashed_at is None:
            self.crashed_at = scheduler.crash.point
            await self._restart()

    async def _restart(self) -> None:
        self.journals.append(self.cloud.rt.journal)
        # what the scenario switched off stays off in the recovery: it shows the other layer alone
        self.cloud = self._incarnation(FaultPlan.parse(self.scenario.layer_rules()))
        if self.env is not None:
            self.env.cloud = self.cloud
        await self._drive([("recovery", self.cloud.recover())])

    async def _value(self, coro: Awaitable[T]) -> T:
        box: list[T] = []

        async def keep() -> None:
            box.append(await coro)

        await self._drive([("observer", keep())])
        return box[0]

    async def run(self) -> ScenarioResult:
        await self.setup()
        await self.play()
        return await self.judge()

    async def setup(self) -> None:
        """Seed the demo cloud and run the scenario's preparation."""
        seeded = await self._value(self._seed())
        self.env = Env(self.cloud, seeded.admin, names=dict(seeded.names))
        # the demo cloud's network and image are the admin user's own
        self.env.user_made.update({seeded.names["private"]: "network", seeded.names["cirros"]: "image"})
        # The user's rules apply from here on; the seed's own timing only to the timeline.
        self.cloud.rt.faults = self.faults
        if self.scenario.prepare is not None:
            await self._drive([("prepare", self.scenario.prepare(self.env))])

    async def play(self, *, timing: bool = True) -> None:
        """Run the timeline's actors concurrently.

        Without ``timing`` every actor starts at once and the seed's own sleeps
        are left out: the explorer reaches the seed's interleaving, and every
        other one, through its choices instead.
        """
        if self.crashed_at is not None:
            return
        timed = self.timing.rules if timing else []
        self.cloud.rt.faults = FaultPlan(self.faults.rules + timed + FaultPlan.parse(self.scenario.layer_rules()).rules)
        await self._drive([(actor.name, self._at(actor, timing)) for actor in self.scenario.timeline])

    async def judge(self, *, expectations: bool = True) -> ScenarioResult:
        """Check the invariants on what the operations left, let the reconcilers settle, check again."""
        assert self.env is not None
        scenario = self.scenario
        left_snapshot = await self._collect()
        left = check_all(left_snapshot)
        if left or self.mend_when_clean:
            mended = await self._reconcile()
            final = await self._collect()
        else:  # the reconcilers act only on violations, so there is nothing for them to do
            mended, final = [], left_snapshot
        violations = check_all(final)
        unmet = [] if self.crashed_at or not expectations else await self._value(scenario.expect(self.env))
        leftovers = transient_leftovers(final)
        unexpected = [] if self.allow_mended else [
            violation for violation in mended
            if not scenario.mend_expected(violation.invariant, crashed=self.crashed_at is not None)]
        # judged on what the operations left: a reconciler's mend makes no false reply true
        left_facts = facts_of(left_snapshot)
        lies = check_replies([*self.env.history, Observed(left_facts)])
        journal = [entry for incarnation in [*self.journals, self.cloud.rt.journal] for entry in incarnation]
        steps = sorted(
            [{**record.as_dict(), "at": round(record.at - self.start, 3)} for record in self.env.steps]
            + [{"at": round(entry.at - self.start, 3), "actor": entry.actor, "text": entry.text}
               for entry in journal if _notable(entry.text)],
            key=lambda step: step["at"])
        return ScenarioResult(scenario.name, violations, left, mended, unmet, leftovers, steps,
                              self.crashed_at, self.errors, self.trace, unexpected, lies, left_facts)

    async def _collect(self) -> Snapshot:
        """The whole system as it is, with the users' history the invariants judge it against."""
        assert self.env is not None
        snapshot = await self._value(collect(self.cloud))
        snapshot.user_made = dict(self.env.user_made)
        snapshot.deleted_on_request = set(self.env.deleted_on_request)
        return snapshot

    async def _seed(self) -> Any:
        seeded = await seed_demo_cloud(self.cloud, self.scenario.shape)
        await wait_for_nodes(self.cloud, seeded)
        return seeded

    async def _at(self, timed: Timed, timing: bool = True) -> None:
        assert self.env is not None
        if timing and timed.at > 0:
            await self.cloud.rt.sleep(timed.at)
        await timed.action(self.env)

    async def _reconcile(self) -> list[Violation]:
        mended: list[Violation] = []
        for _ in range(MAX_RECONCILE_PASSES):
            found = check_all(await self._collect())
            result = await self._value(mend(self.cloud, found))
            self.errors += [f"reconciler on {v.invariant}: {why}" for v, why in result.failed]
            mended += result.mended
            if not result.mended:
                break
        return mended


def _notable(text: str) -> bool:
    return any(word in text for word in ("fault", "crash", "failed", "reconciler", "ignored", "disappeared",
                                         "ACTIVE", "deleted", "scheduled"))


async def run_scenario(
    scenario: Scenario,
    *,
    bugs: list[str] | tuple[str, ...] = (),
    faults: list[str] | tuple[str, ...] = (),
    db_url: str | None = None,
    seed: int = 0,
    strategy_factory: Callable[[], Strategy] = FifoStrategy,
    allow_mended: bool = False,
) -> ScenarioResult:
    """Run ``scenario`` on a fresh store (SQLite in a temporary directory, or a new schema at ``db_url``)."""
    plan = FaultPlan.parse(list(faults))
    async with fresh_database(db_url) as database:
        run = ScenarioRun(scenario, database, bugs=Bugs(bugs), faults=plan, seed=seed,
                          strategy_factory=strategy_factory, allow_mended=allow_mended)
        return await run.run()


class fresh_database:
    """A new, empty store: a SQLite file in a temporary directory, or a new PostgreSQL schema."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._schema: str | None = None
        self.database: Database | None = None

    async def __aenter__(self) -> Database:
        if self.url is None or self.url.startswith("sqlite"):
            # A scenario's store lives as long as the run; memory is enough and much faster.
            database = Database(self.url or "sqlite:///:memory:")
            path = Path(make_url(database.url).database or ":memory:")
            if str(path) != ":memory:" and path.exists() and path.stat().st_size > 0:
                # never seed a scenario on top of what an earlier run (or anything else) left there
                await database.dispose()
                raise FileExistsError(f"{path} already exists; a scenario needs a fresh store, so name a new file")
            self.database = database
        else:
            import asyncpg

            from tether.store.database import async_url

            self._schema = f"scenario_{uuid.uuid4().hex[:12]}"
            dsn = async_url(self.url).replace("postgresql+asyncpg://", "postgresql://")
            admin = await asyncpg.connect(dsn)
            try:
                await admin.execute(f'CREATE SCHEMA "{self._schema}"')
            finally:
                await admin.close()
            self.database = Database(self.url, schema=self._schema, pool_size=2)
        await self.database.create_schema()
        return self.database

    async def __aexit__(self, *exc: object) -> None:
        assert self.database is not None
        await self.database.dispose()
        if self._schema is not None:
            import asyncpg

            from tether.store.database import async_url

            dsn = async_url(self.url or "").replace("postgresql+asyncpg://", "postgresql://")
            admin = await asyncpg.connect(dsn)
            try:
                await admin.execute(f'DROP SCHEMA "{self._schema}" CASCADE')
            finally:
                await admin.close()
