"""`tether explore` as a user runs it: a violation, its trace, and the replay of it; reports as each
scenario ends, and Ctrl-C."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tether.sim.explore import Trace

from .test_cli import TETHER, refused, tether

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
    (("explore", SCENARIO, "port-deleted-during-boot", "--replay", "user@task.start"), ("--replay takes one",)),
])
def test_explore_refuses_what_it_cannot_do_without_a_traceback(args: tuple[str, ...], words: tuple[str, ...]) -> None:
    result = tether(*args)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    refused(result, *words)


# -- what a person sees: traces one step a line, reports as they come, Ctrl-C ------------------------------

QUICK = "port-deleted-during-attach"  # explored with crashes in a fraction of a second
SLOW = "interface-attach-detach-port-delete"  # a second or more with crashes
SLOWER = "delete-races-undeploy-and-node-delete"
REPORT_ENDS = ("  no violation", "in the schedules explored", "invariants violated")  # a report's last line


def test_a_violations_trace_is_one_step_a_line_above_the_replay_line_that_reproduces_it() -> None:
    found = tether("explore", SCENARIO, "--emulate-bug", BUG, "--max-switches", "1")
    assert found.returncode == 3, (found.stdout, found.stderr)
    shown = found.stdout.splitlines()
    at = next(i for i, line in enumerate(shown) if line.startswith("VIOLATION zombie-interface"))
    header = shown[at + 1].split()
    assert header[0] == "trace," and header[2] == "steps", shown[at + 1]
    count = int(header[1])
    steps = [line.split() for line in shown[at + 2: at + 2 + count]]
    assert [int(step[0]) for step in steps] == list(range(1, count + 1))
    assert all(len(step) == 3 for step in steps), steps  # number, actor, checkpoint
    replay_line = shown[at + 2 + count]
    assert replay_line.startswith("  replay: tether explore "), replay_line
    words = shlex.split(replay_line.removeprefix("  replay: "))
    trace = Trace.parse(words[words.index("--replay") + 1])
    assert [list(step) for step in trace.steps] == [step[1:] for step in steps]

    replayed = tether(*words[1:])
    assert replayed.returncode == 3, (replayed.stdout, replayed.stderr)
    assert "VIOLATION zombie-interface" in replayed.stdout
    assert [line.split()[1:] for line in replayed.stdout.splitlines()[1: 1 + count]] == [list(s) for s in trace.steps]


def _start(*args: str) -> subprocess.Popen[str]:
    # A session of its own, as a terminal's job: Ctrl-C is sent to its whole process group, and
    # whatever it leaves behind can be found by its session id.
    return subprocess.Popen([str(TETHER), "explore", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "NO_COLOR": "1"}, start_new_session=True)


def _read_first_report(process: subprocess.Popen[str]) -> list[str]:
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.rstrip("\n").endswith(REPORT_ENDS):
            return lines
    raise AssertionError(f"the run ended without a report: {lines}")


def _session_left(session: int) -> list[str]:
    """Processes still in the session, a few seconds on: every worker should be gone."""
    deadline = time.monotonic() + 10
    while True:
        left = []
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text()
            except (OSError, ValueError):
                continue
            if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[3]) == session:
                left.append(f"{entry.name} {stat.split()[1]}")
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def test_each_scenarios_report_is_printed_as_soon_as_it_is_done() -> None:
    process = _start(QUICK, SLOW, "--crashes", "--jobs", "1")
    try:
        first = _read_first_report(process)
        running = process.poll() is None
        rest, errors = process.communicate(timeout=300)
    finally:
        process.kill()
    assert running, "the first report came only when the whole run had ended"
    assert first[0].startswith(f"scenario {QUICK}:") and f"scenario {SLOW}:" in rest, (first, rest)
    assert process.returncode == 0, (first, rest, errors)
    assert rest.splitlines()[-1].startswith("all 2 scenarios explored: "), rest
    assert errors == ""  # no bar, no progress lines: neither stream is a terminal


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_cleanly_prints_what_finished_and_says_the_run_is_incomplete(jobs: str) -> None:
    process = _start(QUICK, SLOW, SLOWER, "--crashes", "--jobs", jobs)
    try:
        first = _read_first_report(process)
        os.killpg(process.pid, signal.SIGINT)
        rest, errors = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, (first, rest, errors)
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors, errors
    assert "interrupted: stopping after the current schedule" in errors
    shown = "\n".join(first) + "\n" + rest
    finished = first[0].removeprefix("scenario ").split(":")[0]
    assert finished in (QUICK, SLOW, SLOWER) and first[-1].endswith(REPORT_ENDS)
    summary = rest.splitlines()[-1]
    assert summary.startswith("INCOMPLETE (interrupted): "), shown
    explored = int(summary.split(": ", 1)[1].split()[0])
    assert 1 <= explored < 3 and "of 3 scenarios explored" in summary, summary
    assert ("stopped part-way" in summary) == ("INCOMPLETE: interrupted after" in shown), shown
    assert _session_left(process.pid) == []


def test_json_of_several_scenarios_is_one_object_with_nothing_else_on_stdout() -> None:
    result = tether("explore", QUICK, "port-deleted-during-boot", "--max-switches", "1", "--jobs", "2", "--json")
    assert result.returncode == 0, (result.stdout, result.stderr)
    document = json.loads(result.stdout)
    assert [report["scenario"] for report in document["scenarios"]] == [QUICK, "port-deleted-during-boot"]
    assert document["complete"] is True and document["interrupted"] is False
    assert document["not_started"] == [] and document["abandoned"] == []
    assert all(report["complete"] and not report["interrupted"] for report in document["scenarios"])
