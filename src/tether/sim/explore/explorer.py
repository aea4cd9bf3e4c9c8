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
import gc
import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from multiprocessing.queues import SimpleQueue
from multiprocessing.synchronize import Event as EventType

from tether.runtime.bugs import Bugs
from tether.sim.explore.durable import DurableState
from tether.sim.explore.equivalence import interleavings
from tether.sim.explore.footprint import Footprint
from tether.sim.explore.recording import Recorder
from tether.sim.explore.report import (
    INTERRUPTED,
    LIVELOCK,
    MAX_SCHEDULES,
    MAX_SECONDS,
    Exploration,
    Tally,
    findings_of,
)
from tether.sim.explore.schedule import (
    CRASH,
    OUT_OF_TIME,
    STOP,
    CrashKey,
    CrashPoint,
    Decide,
    ExploredRun,
    Played,
    RecoveryRun,
    SeededCloud,
)
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
    allow_mended: bool = False  # a reconciler's mend the scenario does not expect is reported, not failed
    max_seconds: float | None = None  # stop a search (seeding not counted) after this long, mid-schedule if need be
    progress: Callable[[Exploration], None] | None = field(default=None, compare=False)
    # Asked before each schedule: True ends the exploration there, its report marked interrupted.
    stop: Callable[[], bool] | None = field(default=None, compare=False)


class _Session:
    """One scenario's seeded cloud, store and recorder, shared by all the runs of an exploration."""

    def __init__(self, scenario: Scenario, bugs: Bugs, *, allow_mended: bool = False) -> None:
        self.scenario = scenario
        self.bugs = bugs
        self.allow_mended = allow_mended
        self.recorder = Recorder()
        self.database = RecordingDatabase(self.recorder)
        self.seeded: SeededCloud | None = None
        self._recovered: dict[Hashable, ScenarioResult] = {}  # by what recovery depends on

    async def __aenter__(self) -> _Session:
        await self.database.create_schema()
        self.seeded = await SeededCloud.build(self.scenario, self.bugs, self.database)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.database.dispose()

    def run(self, decide: Decide, crash_states: set[CrashKey] | None = None,
            seen_states: int = 0, known: Callable[[int], Footprint | None] | None = None,
            deadline: float | None = None) -> ExploredRun:
        assert self.seeded is not None
        return ExploredRun(self.seeded, self.database, self.recorder, decide, crash_states, seen_states, known,
                           allow_mended=self.allow_mended, deadline=deadline)

    async def recover(self, played_state: DurableState, at: str) -> ScenarioResult:
        assert self.seeded is not None
        return await RecoveryRun(self.seeded, self.database, self.recorder, played_state, at,
                                 allow_mended=self.allow_mended).recover()

    async def recover_once(self, point: CrashPoint) -> ScenarioResult:
        """Recover from a crash, or judge its replies against how an equal state recovered."""
        known = self._recovered.get(point.recovers_as)
        if known is not None:
            return known.replies_judged(list(point.state.history), point.at)
        result = self._recovered[point.recovers_as] = await self.recover(point.state, point.at)
        return result


@contextmanager
def _collected_rarely() -> Iterator[None]:
    """Fewer garbage collections while a search runs, and what it left collected at the end.

    A search holds a growing heap of long-lived objects (the footprints of every
    node on the path, the summaries of states seen, the crash states), and each
    run of the control plane allocates thousands of short-lived ones: at
    Python's default thresholds the collector walks that heap again and again
    (a fifth of the time on the longest scenario). Each run's control plane is a
    graph of cycles, freed only by a collection, so they still come, less often;
    and the last ones are collected before the next scenario, which would
    otherwise walk them in its own collections.
    """
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 10)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.collect()


async def explore(scenario: Scenario, options: ExploreOptions) -> Exploration:
    started = time.perf_counter()
    bugs = Bugs(options.bugs)
    strategy = "exhaustive" if options.exhaustive else f"random {options.runs} seed {options.seed}"
    report = Exploration(scenario.name, strategy, max_switches=options.max_switches, crashes=options.crashes,
                         bugs=tuple(sorted(bugs.names)))
    with _collected_rarely():
        # The search's structures live in the call below, so they are garbage when it returns, and
        # the collection at the end of this block frees them instead of walking them.
        await _explore_into(report, scenario, bugs, options)
    report.seconds = time.perf_counter() - started
    return report


async def _explore_into(report: Exploration, scenario: Scenario, bugs: Bugs, options: ExploreOptions) -> None:
    if options.exhaustive:
        search: DepthFirst | RandomWalk = DepthFirst(reduction=options.reduction, max_switches=options.max_switches,
                                                 state_caching=options.state_caching)
    else:
        search = RandomWalk(runs=options.runs, seed=options.seed, max_switches=options.max_switches)
    crash_states: set[CrashKey] | None = set() if options.crashes else None
    async with _Session(scenario, bugs, allow_mended=options.allow_mended) as session:
        # the budget is the search's: seeding the cloud once takes what it takes
        deadline = None if options.max_seconds is None else time.perf_counter() + options.max_seconds
        await _search(session, search, report, options, crash_states, deadline)


async def _search(session: _Session, search: DepthFirst | RandomWalk, report: Exploration, options: ExploreOptions,
                  crash_states: set[CrashKey] | None, deadline: float | None) -> None:
    def out_of_time() -> bool:
        return deadline is not None and time.perf_counter() >= deadline

    while search.next_schedule():
        if options.stop is not None and options.stop():
            report.stop(INTERRUPTED)
            return
        if out_of_time():
            report.stop(MAX_SECONDS)
            return
        if isinstance(search, DepthFirst):
            run = session.run(search.decide, crash_states, search.shared_prefix, search.known_footprint, deadline)
            search.state_of = run.state_key
        else:
            run = session.run(search.decide, crash_states, deadline=deadline)
        played = await run.play_schedule()
        if played.ended == OUT_OF_TIME:
            report.stop(MAX_SECONDS)  # the schedule cut off is neither explored nor judged
            return
        search.finished(played.moves)
        _tally(report, played, counted=options.exhaustive and options.reduction)
        for point in run.crash_points:
            if out_of_time():
                report.stop(MAX_SECONDS)
                return
            result = await session.recover_once(point)
            report.crash_states += 1
            _judge(report, result, None, False, str(Trace.of(played.moves[: point.index], crash=True)), True)
        if options.progress is not None:
            options.progress(report)
        if options.max_schedules is not None and report.schedules >= options.max_schedules:
            if options.exhaustive and search.next_schedule():
                report.stop(MAX_SCHEDULES)
            return


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

    started = time.perf_counter()
    try:
        return asyncio.run(explore(SCENARIOS[scenario_name], options))
    except Exception as error:
        # One scenario's failure (one that cannot be prepared, a schedule that does not repeat
        # itself) is that scenario's report: the others' results are kept and printed.
        report = Exploration(scenario_name, "failed", complete=False, error=f"{type(error).__name__}: {error}",
                             bugs=tuple(sorted(options.bugs)), crashes=options.crashes)
        report.seconds = time.perf_counter() - started
        return report


def explore_many(names: list[str], options: ExploreOptions, jobs: int, *,
                 progress: Callable[[Tally], None] | None = None,
                 stop: Callable[[], bool] | None = None) -> Iterator[Exploration]:
    """Explore built-in scenarios, ``jobs`` at once in processes of their own; yield each report as it ends.

    ``progress`` hears how far each running scenario has got, a few times a second.
    ``stop`` is asked between schedules: once it says True, the running scenarios
    end after their current schedule and are yielded marked interrupted, and the
    ones not started yet are never started (and never yielded, like one stopped
    before its first schedule). Closing the iterator early (a second Ctrl-C)
    kills the worker processes there and then. ``options.progress`` and
    ``options.stop`` are not used: these two replace them.
    """
    if runs_here(names, jobs):
        yield from _explore_here(names, options, progress, stop)
    else:
        yield from _explore_in_workers(names, options, jobs, progress, stop)


def runs_here(names: list[str], jobs: int) -> bool:
    """Whether explore_many explores in the calling process (one job, or one scenario) or in workers."""
    return jobs <= 1 or len(names) <= 1


def _explore_here(names: list[str], options: ExploreOptions, progress: Callable[[Tally], None] | None,
                  stop: Callable[[], bool] | None) -> Iterator[Exploration]:
    """One scenario after another in this process, in the order given."""
    tell = None if progress is None else (lambda report: progress(report.tally()))
    for name in names:
        if stop is not None and stop():
            return
        report = _explore_in_process(name, replace(options, progress=tell, stop=stop))
        if _begun(report):
            yield report


def _begun(report: Exploration) -> bool:
    """Whether the scenario ran a schedule: one stopped before its first is reported as never started."""
    return not report.interrupted or report.schedules + report.pruned > 0


UPDATE_EVERY = 0.2  # seconds between two progress updates a worker sends
_WAIT = 0.1  # seconds the parent waits for a result before it reads the updates and the stop flag again


def _explore_in_workers(names: list[str], options: ExploreOptions, jobs: int,
                        progress: Callable[[Tally], None] | None,
                        stop: Callable[[], bool] | None) -> Iterator[Exploration]:
    from tether.sim.scenarios.library import SCENARIOS

    # The ones with the most concurrent operations start first: they take longest.
    order = sorted(names, key=lambda name: -len(SCENARIOS[name].timeline))
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no event loop or store inherited
    # Tallies are small: a SimpleQueue sends each within the call, with no feeder thread in the
    # worker to flush, or to hang on, when it is stopped.
    updates = context.SimpleQueue()
    stopping = context.Event()
    plain = replace(options, progress=None, stop=None)  # callables of this process do not cross to another
    with _sigint_ignored():  # the workers are spawned in submit(): they start deaf to Ctrl-C
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(order)), mp_context=context,
                                   initializer=_start_worker, initargs=(updates, stopping))
        names_of = {pool.submit(_explore_in_worker, name, plain): name for name in order}
    pending = set(names_of)
    ended = False
    try:
        while pending:
            done, pending = wait(pending, timeout=_WAIT, return_when=FIRST_COMPLETED)
            while not updates.empty():
                tally = updates.get()
                if progress is not None:
                    progress(tally)
            for future in done:
                report = None if future.cancelled() else _result(future, names_of[future], options)
                if report is not None and _begun(report):  # None: it was to start after the stop
                    yield report
            if stop is not None and not stopping.is_set() and stop():
                stopping.set()
                for future in pending:
                    future.cancel()  # the ones still queued here; the running ones end at their next schedule
        ended = True
    finally:
        if not ended:
            _terminate(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        updates.close()


def _result(future: Future[Exploration | None], name: str, options: ExploreOptions) -> Exploration | None:
    """The worker's report; if its process died, a report that says so (the others' are kept)."""
    error = future.exception()
    if error is None:
        return future.result()
    return Exploration(name, "failed", complete=False, error=f"the worker process failed: {error}",
                       bugs=tuple(sorted(options.bugs)), crashes=options.crashes)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored meanwhile: a process started now inherits that, and Python leaves it so.

    A terminal's Ctrl-C goes to every process in its foreground group, the workers
    included. Ignoring it from their first instruction on (rather than from an
    initializer, which runs after the imports) means none of them ever dies of it
    with a traceback; the parent alone decides how they stop.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_updates: SimpleQueue[Tally] | None = None
_stopping: EventType | None = None


def _start_worker(updates: SimpleQueue[Tally], stopping: EventType) -> None:
    global _updates, _stopping
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # in case the process was started some other way
    _updates, _stopping = updates, stopping


class _SendTally:
    """A worker's progress, sent to the parent at most every UPDATE_EVERY seconds."""

    def __init__(self, updates: SimpleQueue[Tally]) -> None:
        self.updates = updates
        self.last = 0.0

    def __call__(self, report: Exploration) -> None:
        now = time.monotonic()
        if now - self.last >= UPDATE_EVERY:
            self.last = now
            self.updates.put(report.tally())


def _explore_in_worker(scenario_name: str, options: ExploreOptions) -> Exploration | None:
    assert _updates is not None and _stopping is not None
    if _stopping.is_set():
        return None
    return _explore_in_process(scenario_name, replace(options, progress=_SendTally(_updates), stop=_stopping.is_set))


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Kill the workers now, mid-schedule.

    ProcessPoolExecutor can only wait for its workers before Python 3.14's
    ``terminate_workers``; until then its ``_processes`` are the way to them.
    """
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((pool._processes or {}).values()):
        process.terminate()


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


async def replay(scenario: Scenario, trace: Trace, bugs: tuple[str, ...] = (), *,
                 allow_mended: bool = False) -> Replayed:
    """Run exactly the schedule ``trace`` names (and its crash), and judge it as the explorer did."""
    async with _Session(scenario, Bugs(bugs), allow_mended=allow_mended) as session:
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
