"""`tether explore` as a user runs it: a violation, its one-line trace, and the replay of that line."""

from __future__ import annotations

import json

import pytest

from .test_cli import refused, tether

SCENARIO = "port-deleted-during-attach"
BUG = "zombie-interface-on-attach-race"


def test_explore_finds_the_bug_prints_a_trace_and_replay_reproduces_it() -> None:
    found = tether("explore", SCENARIO, "--emulate-bug", BUG, "--max-switches", "1", "--json")
    assert found.returncode == 3, (found.stdout, found.stderr)
    report = json.loads(found.stdout)
    assert {"scenario", "schedules", "violations", "mended", "seconds"} <= set(report)
    assert report["scenario"] == SCENARIO and report["schedules"] >= 1
    (violation,) = [v for v in report["violations"] if v["invariant"] == "zombie-interface"]
    trace = violation["trace"]
    assert "\n" not in trace and "@" in trace

    replayed = tether("explore", SCENARIO, "--emulate-bug", BUG, "--replay", trace)
    assert replayed.returncode == 3, (replayed.stdout, replayed.stderr)
    assert "VIOLATION zombie-interface" in replayed.stdout
    assert "Traceback" not in replayed.stderr


def test_explore_without_the_bug_is_clean_and_says_how_much_it_explored() -> None:
    clean = tether("explore", SCENARIO, "--max-switches", "1", "--crashes")
    assert clean.returncode == 0, (clean.stdout, clean.stderr)
    assert "schedules explored:" in clean.stdout
    assert "distinct final states:" in clean.stdout
    assert "crash states recovered:" in clean.stdout
    assert "no violation" in clean.stdout


@pytest.mark.parametrize(("args", "words"), [
    (("explore", "no-such-scenario"), ("unknown scenario", "no-such-scenario")),
    (("explore", SCENARIO, "--replay", "user@task.start ghost@nowhere"), ("does not replay", "ghost")),
    (("explore", SCENARIO, "--replay", "not-a-step"), ("Invalid step",)),
    (("explore", SCENARIO, "--emulate-bug", "no-such-bug"), ("Unknown bug",)),
    (("explore", SCENARIO, "--exhaustive", "--random", "3"), ("exclude each other",)),
    (("explore", "all", "--jobs", "0"), ("--jobs", "at least one")),
])
def test_explore_refuses_what_it_cannot_do_without_a_traceback(args: tuple[str, ...], words: tuple[str, ...]) -> None:
    result = tether(*args)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    refused(result, *words)
