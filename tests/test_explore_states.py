"""What lets the explorer go through every scenario quickly, and why it still finds what it found before.

States seen before are cut short, keyed by what each actor has read (its
history); a memoryless loop's idle turn is not reversed with the step that
wakes it; scenarios spread over processes.
"""

from __future__ import annotations

import pytest

from tether.sim.explore import ExploreOptions, explore, explore_many
from tether.sim.explore.footprint import NOTIFY, WAIT, Footprint, independent
from tether.sim.explore.recording import Recorder
from tether.sim.explore.schedule import Move
from tether.sim.explore.search import _stutters_before
from tether.sim.scenarios.library import SCENARIOS

ZOMBIE = "zombie-interface-on-attach-race"


@pytest.mark.parametrize(("name", "bugs"), [("port-deleted-during-boot", ()),
                                            ("port-deleted-cache-refresh-first", (ZOMBIE,)),
                                            ("port-deleted-during-attach", (ZOMBIE,))])
async def test_cutting_at_states_seen_before_keeps_every_final_state_and_finding(
        name: str, bugs: tuple[str, ...]) -> None:
    scenario = SCENARIOS[name]
    plain = await explore(scenario, ExploreOptions(exhaustive=True, crashes=True, bugs=bugs, state_caching=False))
    cached = await explore(scenario, ExploreOptions(exhaustive=True, crashes=True, bugs=bugs))
    assert cached.final_states == plain.final_states
    assert set(cached.violations) == set(plain.violations)
    assert set(cached.mended) == set(plain.mended)
    assert cached.crash_states >= plain.crash_states
    assert bool(bugs) == bool(cached.violations)


async def test_states_seen_before_are_cut_short() -> None:
    scenario = SCENARIOS["port-deleted-during-boot"]
    plain = await explore(scenario, ExploreOptions(exhaustive=True, state_caching=False))
    cached = await explore(scenario, ExploreOptions(exhaustive=True))
    assert plain.pruned == 0 < cached.pruned
    assert cached.schedules < plain.schedules


def _move(actor: str, footprint: Footprint) -> Move:
    return Move(actor, "p", (actor,), 0, footprint)


def _idle_turn(key: tuple[str, str]) -> Footprint:
    """A memoryless loop's turn: it read the instance and went back to waiting."""
    turn = Footprint()
    turn.read_rows("instances", (("uuid", frozenset({"i-1"})),))
    turn.touch("signal", key, WAIT)
    turn.guard = key
    return turn


def test_an_idle_turn_is_not_reversed_with_the_step_that_wakes_its_loop() -> None:
    key = ("instance", "i-1")
    turn = _idle_turn(key)
    wake = Footprint()
    wake.write_rows("instances", [{"uuid": "i-1", "vm_state": "deleted"}], [])
    wake.touch("signal", key, NOTIFY)
    assert not independent(turn, wake)  # they do race
    assert turn.stutter == key
    assert _stutters_before(_move("waiter", turn), _move("writer", wake))
    # the other order is reversed as usual: before the write, the turn may see what lets it go on
    assert not _stutters_before(_move("writer", wake), _move("waiter", turn))
    silent = Footprint()
    silent.write_rows("instances", [{"uuid": "i-1", "vm_state": "deleted"}], [])
    assert not _stutters_before(_move("waiter", turn), _move("writer", silent))  # nobody wakes the loop


def test_a_turn_that_changed_something_is_no_idle_turn() -> None:
    turn = _idle_turn(("instance", "i-1"))
    turn.write_rows("instances", [{"uuid": "i-1"}], [])
    assert turn.stutter is None
    unguarded = _idle_turn(("instance", "i-1"))
    unguarded.guard = None
    assert unguarded.stutter is None


def _history(*reads: object, idle: bool = False, second_step: bool = True) -> bytes | None:
    recorder = Recorder()
    recorder.begin_step("a", Footprint())
    recorder.observe("started")
    recorder.end_step()
    if second_step:
        recorder.begin_step("a", _idle_turn(("k", "1")) if idle else Footprint())
        for value in reads:
            recorder.observe(value)
        recorder.end_step()
    return recorder.histories.get("a")


def test_histories_tell_what_an_actor_read_and_leave_out_idle_turns() -> None:
    assert _history(1, "x") == _history(1, "x")
    assert _history(1, "x") != _history(1, "y")
    assert _history(1, "x") != _history("x", 1)
    assert _history() != _history(second_step=False)  # a step moves the actor on, even reading nothing
    assert _history(1, "x", idle=True) == _history(idle=True) == _history(second_step=False)
    # random request ids do not count, as in the store's digest
    assert _history("req-5d0f3c1e-1111-4222-8333-444455556666") == _history("req-0a0b0c0d-aaaa-4bbb-8ccc-dddddddddddd")


def test_objects_without_a_value_are_named_by_who_made_them() -> None:
    def made_by(actor: str, before: object) -> str:
        recorder = Recorder()
        recorder.begin_step(actor, Footprint())
        recorder.observe(before)
        token = object()
        recorder.name_made(token)
        return recorder.label(token)

    assert made_by("job", 1) == made_by("job", 1)
    assert made_by("job", 1) != made_by("job", 2)
    assert made_by("job", 1) != made_by("other", 1)
    recorder = Recorder()
    first, second = object(), object()
    assert recorder.label(first) == recorder.label(first) != recorder.label(second)


def test_scenarios_spread_over_processes_give_the_reports_one_process_gives() -> None:
    names = ["port-deleted-during-attach", "port-deleted-cache-refresh-first"]
    options = ExploreOptions(exhaustive=True, crashes=True)
    together = {report.scenario: report for report in explore_many(names, options, jobs=2)}
    assert sorted(together) == sorted(names)
    for name in names:
        alone = next(explore_many([name], options, jobs=1))
        assert (together[name].schedules, together[name].pruned, together[name].crash_states) == \
            (alone.schedules, alone.pruned, alone.crash_states)
        assert together[name].final_states == alone.final_states


async def test_the_digest_read_again_only_where_writes_went_equals_a_full_read_at_every_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's digest keeps each table's and reads again only the tables written since; a write it
    failed to see would merge two different states. At every state of an exploration with crashes
    (snapshots put back), the kept digests must equal a full read of every table."""
    from tether.sim.explore import durable
    from tether.sim.explore.schedule import ExploredRun

    looked = []
    incremental = ExploredRun._logical_digest

    def compared(run: ExploredRun) -> str:
        digest = incremental(run)
        full = durable._all_tables(durable._sqlite3(run.world.database), durable._digest_tables())
        assert run.world.database.table_digests == full  # type: ignore[attr-defined]
        looked.append(digest)
        return digest

    monkeypatch.setattr(ExploredRun, "_logical_digest", compared)
    report = await explore(SCENARIOS["delete-races-undeploy-and-node-delete"],
                           ExploreOptions(exhaustive=True, crashes=True))
    assert report.clean and report.crash_states > 0
    assert len(set(looked)) > 10  # states differed, and were told apart
