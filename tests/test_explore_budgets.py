"""Bounded search: per-scenario budgets end a scenario INCOMPLETE (neither pass nor fail, exit 4),
in the middle of a schedule if need be, and no scenario's end loses another's finished result."""

from __future__ import annotations

import json
import time

import pytest

from tether.seeding import DemoShape
from tether.sim.explore import ExploreOptions, explore, explore_many
from tether.sim.explore.report import ERROR, INCOMPLETE, MAX_SCHEDULES, MAX_SECONDS, PASSED
from tether.sim.scenarios import library
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.model import Scenario, Timed

from .test_cli import refused, tether

QUICK = "port-deleted-during-attach"  # explored in full in well under a second
LONG = "delete-races-interface-attach-detach"  # a minute or more in full


async def _nothing_expected(env: Env) -> list[str]:
    return []


STEPS_TAKEN: list[str] = []


async def _retries_without_a_deadline(env: Env) -> None:
    """The planted mistake: a wait with no deadline that never sees what it waits for (rule 3)."""
    while True:
        STEPS_TAKEN.append("step")
        time.sleep(0.05)  # each step takes real time: 2000 of them (the step limit) would take 100 s
        await env.cloud.rt.checkpoint("compute.build.after_schedule")


SPINNING = Scenario(name="spins-without-a-deadline", seed="-", summary="an operation that never ends",
                    shape=DemoShape(nodes=0, hypervisors=1),
                    timeline=(Timed(0.0, "spinner", _retries_without_a_deadline),),
                    expect=_nothing_expected)


async def test_a_time_budget_stops_a_schedule_that_runs_on_and_on() -> None:
    STEPS_TAKEN.clear()
    report = await explore(SPINNING, ExploreOptions(max_seconds=0.2))
    assert STEPS_TAKEN  # the schedule began, and it never ends by itself: the budget cut it off
    assert report.verdict == INCOMPLETE and report.stopped_by == MAX_SECONDS
    assert report.schedules == 0 and not report.violations  # the schedule cut off is not judged
    assert "INCOMPLETE: stopped at the time limit" in "\n".join(report.summary_lines())


async def test_a_schedule_budget_is_incomplete_and_a_search_that_ends_within_it_is_not() -> None:
    short = await explore(library.SCENARIOS[QUICK], ExploreOptions(max_schedules=2))
    assert short.schedules == 2 and short.verdict == INCOMPLETE and short.stopped_by == MAX_SCHEDULES
    whole = await explore(library.SCENARIOS[QUICK], ExploreOptions(max_schedules=1000))
    assert whole.complete and whole.verdict == PASSED and whole.stopped_by is None


async def _cannot_be_prepared(env: Env) -> None:
    raise RuntimeError("the preparation fails")


def test_a_scenario_that_cannot_be_explored_loses_nothing_of_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = Scenario(name="cannot-be-prepared", seed="-", summary="its preparation raises",
                      shape=DemoShape(nodes=0, hypervisors=1), prepare=_cannot_be_prepared,
                      timeline=(), expect=_nothing_expected)
    monkeypatch.setitem(library.SCENARIOS, broken.name, broken)
    reports = {report.scenario: report
               for report in explore_many([broken.name, QUICK], ExploreOptions(), jobs=1)}
    assert reports[broken.name].verdict == ERROR and "the preparation fails" in (reports[broken.name].error or "")
    assert reports[QUICK].verdict == PASSED and reports[QUICK].schedules >= 1


def test_json_keeps_every_finished_scenario_when_one_runs_out_of_time() -> None:
    result = tether("explore", LONG, QUICK, "--max-seconds", "3", "--jobs", "2", "--json")
    assert result.returncode == 4, (result.stdout, result.stderr)
    document = json.loads(result.stdout)
    verdicts = {report["scenario"]: report["verdict"] for report in document["scenarios"]}
    assert verdicts == {LONG: "incomplete", QUICK: "passed"}
    assert document["verdict"] == "incomplete" and document["complete"] is False
    assert document["incomplete"] == [LONG] and document["resume"] == [LONG]
    (long_report,) = [report for report in document["scenarios"] if report["scenario"] == LONG]
    assert long_report["stopped_by"] == "max-seconds" and long_report["schedules"] >= 1


def test_the_budgets_are_in_the_help_and_refused_when_they_make_no_sense() -> None:
    shown = tether("explore", "--help")
    assert "--max-schedules" in shown.stdout and "--max-seconds" in shown.stdout
    assert "4  nothing violated, but a budget stopped a scenario early" in shown.stdout
    for args, words in [(("--max-seconds", "0"), ("--max-seconds",)), (("--max-schedules", "0"), ("--max-schedules",)),
                        (("--replay", "user@task.start", "--max-seconds", "1"), ("--replay runs one schedule",))]:
        result = tether("explore", QUICK, *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        refused(result, *words)
