"""Explore a scenario: run its schedules, crash them, judge each, and report what failed.

The scenario's cloud is seeded and prepared once, in an in-memory SQLite
store; every schedule and every crash recovery starts from a copy. After each
schedule the invariants are checked on what the operations left and again
after the reconcilers have settled (``ScenarioRun.judge``); with ``crashes``,
every distinct state between two steps is also handed to a new control plane
that recovers from it and is judged the same way.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace

from tether.runtime.bugs import Bugs
from tether.sim.explore.durable import DurableState
from tether.sim.explore.equivalence import interleavings
from tether.sim.explore.footprint import Footprint
from tether.sim.explore.recording import Recorder
from tether.sim.explore.report import LIVELOCK, Exploration, findings_of
from tether.sim.explore.schedule import CRASH, STOP, Decide, ExploredRun, Played, RecoveryRun, SeededCloud
from tether.sim.explore.search import DepthFirst, RandomWalk, Replay
from tether.sim.explore.store_footprint import RecordingDatabase
from tether.sim.explore.trace import Trace
from tether.sim.scenarios.model import Scenario
from tether.sim.scenarios.runner import ScenarioResult


@dataclass
class ExploreOptions:
    exhaustive: bool = True
    runs: int = 100  # random schedules, without ``exhaustive``
    seed: int = 0
    max_switches: int | None = None
    crashes: bool = False
    bugs: tuple[str, ...] = ()
    reduction: bool = True
    state_caching: bool = True  # with the reduction and no bound on switches: cut at states seen before
    max_schedules: int | None = None  # stop an exhaustive search after this many (report it incomplete)
    progress: Callable[[Exploration], None] | None = field(default=None, compare=False)


class _Session:
    """One scenario's seeded cloud, store and recorder, shared by all the runs of an exploration."""

    def __init__(self, scenario: Scenario, bugs: Bugs) -> None:
        self.scenario = scenario
        self.bugs = bugs
        self.recorder = Recorder()
        self.database = RecordingDatabase(self.recorder)
        self.seeded: SeededCloud | None = None

    async def __aenter__(self) -> _Session:
        await self.database.create_schema()
        self.seeded = await SeededCloud.build(self.scenario, self.bugs, self.database)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.database.dispose()

    def run(self, decide: Decide, crash_states: set[tuple[str, float]] | None = None,
            seen_states: int = 0, known: Callable[[int], Footprint | None] | None = None) -> ExploredRun:
        assert self.seeded is not None
        return ExploredRun(self.seeded, self.database, self.recorder, decide, crash_states, seen_states, known)

    async def recover(self, played_state: DurableState, at: str) -> ScenarioResult:
        assert self.seeded is not None
        return await RecoveryRun(self.seeded, self.database, self.recorder, played_state, at).recover()


async def explore(scenario: Scenario, options: ExploreOptions) -> Exploration:
    started = time.perf_counter()
    bugs = Bugs(options.bugs)
    strategy = "exhaustive" if options.exhaustive else f"random {options.runs} seed {options.seed}"
    report = Exploration(scenario.name, strategy, max_switches=options.max_switches, crashes=options.crashes,
                         bugs=tuple(sorted(bugs.names)))
    if options.exhaustive:
        search: DepthFirst | RandomWalk = DepthFirst(reduction=options.reduction, max_switches=options.max_switches,
                                                 state_caching=options.state_caching)
    else:
        search = RandomWalk(runs=options.runs, seed=options.seed, max_switches=options.max_switches)
    crash_states: set[tuple[str, float]] | None = set() if options.crashes else None
    async with _Session(scenario, bugs) as session:
        while search.next_schedule():
            if isinstance(search, DepthFirst):
                run = session.run(search.decide, crash_states, search.shared_prefix, search.known_footprint)
                search.state_of = run.state_key
            else:
                run = session.run(search.decide, crash_states)
            played = await run.play_schedule()
            search.finished(played.moves)
            _tally(report, played, counted=options.exhaustive and options.reduction)
            for point in run.crash_points:
                result = await session.recover(point.state, point.at)
                report.crash_states += 1
                _judge(report, result, None, False, str(Trace.of(played.moves[: point.index], crash=True)), True)
            if options.progress is not None:
                options.progress(report)
            if options.max_schedules is not None and report.schedules >= options.max_schedules:
                report.complete = not (options.exhaustive and search.next_schedule())
                break
    report.seconds = time.perf_counter() - started
    return report


def _tally(report: Exploration, played: Played, *, counted: bool) -> None:
    if played.ended == STOP:
        report.pruned += 1
        return
    report.schedules += 1
    if played.final_state is not None:
        report.final_states.add(played.final_state)
    if counted and report.equivalent is not None:
        count = interleavings(played.moves)
        report.equivalent = None if count is None else report.equivalent + count
    elif not counted and report.equivalent is not None:
        report.equivalent += 1
    _judge(report, played.result, played.deadlock, played.ended == "step-limit", str(Trace.of(played.moves)),
           False)


def _judge(report: Exploration, result: ScenarioResult | None, deadlock: str | None, livelock: bool,
           trace: str, crash: bool) -> None:
    violations, mended = findings_of(result, deadlock=deadlock, livelock=livelock)
    for invariant, evidence in violations:
        report.note(report.violations, invariant, evidence, trace, crash)
    for invariant, evidence in mended:
        report.note(report.mended, invariant, evidence, trace, crash)


def _explore_in_process(scenario_name: str, options: ExploreOptions) -> Exploration:
    from tether.sim.scenarios.library import SCENARIOS

    return asyncio.run(explore(SCENARIOS[scenario_name], options))


def explore_many(names: list[str], options: ExploreOptions, jobs: int) -> Iterator[Exploration]:
    """Explore built-in scenarios in ``jobs`` processes at once; reports as each one ends.

    Explorations share nothing, so they spread over the cores. The ones with
    the most concurrent operations start first: they take longest.
    """
    from tether.sim.scenarios.library import SCENARIOS

    options = replace(options, progress=None)
    order = sorted(names, key=lambda name: -len(SCENARIOS[name].timeline))
    if jobs <= 1:
        for name in order:
            yield _explore_in_process(name, options)
        return
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no event loop or store inherited
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending = [pool.submit(_explore_in_process, name, options) for name in order]
        for future in as_completed(pending):
            yield future.result()


@dataclass
class Replayed:
    trace: str
    violations: list[tuple[str, str]]
    mended: list[tuple[str, str]]
    result: ScenarioResult | None
    final_state: str | None = None  # what the operations left (None after a crash), as a digest

    @property
    def clean(self) -> bool:
        return not self.violations


async def replay(scenario: Scenario, trace: Trace, bugs: tuple[str, ...] = ()) -> Replayed:
    """Run exactly the schedule ``trace`` names (and its crash), and judge it as the explorer did."""
    async with _Session(scenario, Bugs(bugs)) as session:
        search = Replay(trace)
        search.next_schedule()
        run = session.run(search.decide)
        played = await run.play_schedule()
        search.finished(played.moves)
        if played.ended == CRASH:
            assert played.crash_state is not None and played.crashed_at is not None
            result: ScenarioResult | None = await session.recover(played.crash_state, played.crashed_at)
            deadlock, livelock = None, False
        else:
            result, deadlock, livelock = played.result, played.deadlock, played.ended == "step-limit"
    violations, mended = findings_of(result, deadlock=deadlock, livelock=livelock)
    return Replayed(str(Trace.of(played.moves, crash=played.ended == CRASH)), violations, mended, result,
                    played.final_state)


__all__ = ["LIVELOCK", "ExploreOptions", "Replayed", "explore", "explore_many", "replay"]
