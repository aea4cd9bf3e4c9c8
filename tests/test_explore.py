"""The race explorer: counts checked by hand, bugs found and replayed, determinism, footprints.

Each exploration here is small (a purpose-built scenario, a bound on
switches or on schedules); exploring every built-in scenario exhaustively
is the job of ``bench/explore.py``.
"""

from __future__ import annotations

from math import comb

import pytest

from tether.seeding import DemoShape
from tether.sim.explore import ExploreOptions, Trace, explore, replay
from tether.sim.explore.footprint import Footprint, independent
from tether.sim.explore.recording import Recorder
from tether.sim.explore.store_footprint import RecordingDatabase
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.model import Scenario, Timed
from tether.store import intents


def _checkpoints(count: int):  # type: ignore[no-untyped-def]
    async def act(env: Env) -> None:
        for _ in range(count):
            await env.cloud.rt.checkpoint("compute.build.after_schedule")

    return act


async def _nothing_expected(env: Env) -> list[str]:
    return []


def two_actors(a: int, b: int) -> Scenario:
    """Two actors that pass ``a`` and ``b`` checkpoints and touch nothing shared."""
    return Scenario(name=f"two-actors-{a}-{b}", seed="-", summary="independent steps",
                    shape=DemoShape(nodes=0, hypervisors=1),
                    timeline=(Timed(0.0, "first", _checkpoints(a)), Timed(0.0, "second", _checkpoints(b))),
                    expect=_nothing_expected)


async def test_exhaustive_count_matches_the_hand_count_and_the_reduction_runs_one() -> None:
    a, b = 2, 3
    # Each actor takes one step from its start and one from each checkpoint: a+1 and b+1 steps.
    by_hand = comb((a + 1) + (b + 1), a + 1)
    plain = await explore(two_actors(a, b), ExploreOptions(exhaustive=True, reduction=False))
    assert plain.schedules == by_hand == 35
    assert plain.skipped == 0
    reduced = await explore(two_actors(a, b), ExploreOptions(exhaustive=True))
    assert reduced.schedules == 1
    assert reduced.skipped == by_hand - 1
    assert reduced.clean and plain.clean
    assert "34 equivalent interleavings skipped" in "\n".join(reduced.summary_lines())


async def test_max_switches_bounds_the_schedules() -> None:
    # With no switch away from a runnable actor, each actor runs to its end once started: 2 orders.
    bounded = await explore(two_actors(2, 3), ExploreOptions(exhaustive=True, reduction=False, max_switches=0))
    assert bounded.schedules == 2
    one = await explore(two_actors(2, 3), ExploreOptions(exhaustive=True, reduction=False, max_switches=1))
    assert 2 < one.schedules < 35


async def test_the_reduction_reaches_every_final_state_that_plain_enumeration_reaches() -> None:
    scenario = SCENARIOS["port-deleted-during-attach"]
    bug = (scenario.bug or "",)
    plain = await explore(scenario, ExploreOptions(exhaustive=True, reduction=False, bugs=bug))
    reduced = await explore(scenario, ExploreOptions(exhaustive=True, bugs=bug))
    assert reduced.schedules < plain.schedules
    assert len(plain.final_states) > 1
    assert reduced.final_states == plain.final_states
    # the bug leaves a zombie, the scenario's own expectation (no device for the deleted port) is unmet,
    # and upstream's attach answers 200 for a port deleted during it
    assert set(reduced.violations) == set(plain.violations) == {"zombie-interface", "unmet-expectation",
                                                                 "inconsistent-reply"}


async def test_footprints_tell_disjoint_rows_from_shared_ones() -> None:
    recorder = Recorder()
    database = RecordingDatabase(recorder)
    await database.create_schema()
    try:
        async def step(body) -> Footprint:  # type: ignore[no-untyped-def]
            recorder.current = footprint = Footprint()
            async with database.begin() as conn:
                await body(conn)
            recorder.current = None
            return footprint

        add_a = await step(lambda conn: intents.record(conn, "a", "build", "i-a", {}, 0.0))
        add_b = await step(lambda conn: intents.record(conn, "b", "build", "i-b", {}, 0.0))
        forget_a = await step(lambda conn: intents.forget(conn, "a"))
        list_all = await step(lambda conn: intents.pending(conn))
        list_delete = await step(lambda conn: intents.pending(conn, "delete"))
    finally:
        await database.dispose()
    assert independent(add_a, add_b)  # two new rows, different keys
    assert not independent(add_a, forget_a)  # the same row
    assert independent(add_b, forget_a)
    assert not independent(add_b, list_all)  # a read of the whole table sees every new row
    assert independent(add_a, list_delete)  # a read that no written row can match
    assert independent(list_all, list_delete)  # reads commute


BUGGED = sorted(name for name, scenario in SCENARIOS.items() if scenario.bug)


@pytest.mark.parametrize("name", BUGGED)
async def test_each_emulated_bug_is_found_and_its_trace_replays_to_the_same_violation(name: str) -> None:
    scenario = SCENARIOS[name]
    assert scenario.bug and scenario.invariant
    # Iterative bounding, as CHESS does it: no preemption first, then one.
    for switches in (0, 1):
        found = await explore(scenario, ExploreOptions(exhaustive=True, max_switches=switches, max_schedules=10,
                                                       bugs=(scenario.bug,)))
        if scenario.invariant in found.violations:
            break
    assert scenario.invariant in found.violations, sorted(found.violations)
    finding = found.violations[scenario.invariant]
    replayed = await replay(scenario, Trace.parse(finding.trace), (scenario.bug,))
    assert replayed.trace == finding.trace
    assert scenario.invariant in {invariant for invariant, _ in replayed.violations}


async def test_same_seed_gives_the_same_schedules_and_replay_the_same_result() -> None:
    scenario = SCENARIOS["port-deleted-during-attach"]
    bug = (scenario.bug or "",)
    options = ExploreOptions(exhaustive=False, runs=6, seed=11, bugs=bug)
    first, second = await explore(scenario, options), await explore(scenario, options)
    assert first.final_states == second.final_states
    assert {k: f.trace for k, f in first.violations.items()} == {k: f.trace for k, f in second.violations.items()}
    assert (first.schedules, first.crash_states) == (second.schedules, second.crash_states)
    other = await explore(scenario, ExploreOptions(exhaustive=False, runs=6, seed=12, bugs=bug))
    assert other.schedules == 6
    finding = next(iter(first.violations.values()))
    once = await replay(scenario, Trace.parse(finding.trace), bug)
    again = await replay(scenario, Trace.parse(finding.trace), bug)
    assert (once.trace, once.violations, once.mended, once.final_state) == (
        again.trace, again.violations, again.mended, again.final_state)
    assert once.final_state is not None


async def test_a_crash_trace_replays_through_recovery() -> None:
    scenario = SCENARIOS["port-deleted-cache-refresh-first"]
    report = await explore(scenario, ExploreOptions(exhaustive=True, max_switches=0, crashes=True))
    assert report.crash_states > 0
    assert report.clean, [f.as_dict() for f in report.violations.values()]
    assert not report.mended, [f.as_dict() for f in report.mended.values()]
    prefix = Trace.parse("user@task.start user@network.port_delete.before_notify")
    crashed = await replay(scenario, Trace(prefix.steps, crash=True))
    assert crashed.trace.endswith(" crash")
    assert crashed.clean and not crashed.mended
    assert crashed.result is not None and crashed.result.crashed_at is not None


@pytest.mark.parametrize("name", ["port-deleted-during-attach", "port-deleted-cache-refresh-first"])
async def test_smallest_scenarios_explored_exhaustively_with_crashes_are_clean(name: str) -> None:
    report = await explore(SCENARIOS[name], ExploreOptions(exhaustive=True, crashes=True))
    assert report.complete
    assert report.schedules >= 1 and report.crash_states >= 1
    assert report.clean, [f.as_dict() for f in report.violations.values()]
    assert not report.mended, [f.as_dict() for f in report.mended.values()]
