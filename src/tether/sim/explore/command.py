"""What `tether explore` does, apart from parsing its options: run, report, and say how to replay."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.sim.explore.explorer import ExploreOptions, Replayed, explore, explore_many, replay
from tether.sim.explore.report import Exploration, Finding
from tether.sim.explore.schedule import ScheduleDiverged
from tether.sim.explore.trace import Trace, TraceError
from tether.sim.scenarios.model import Scenario

ALL = "all"
PROGRESS_EVERY = 1.0  # seconds of wall time between two progress lines


class ExploreUsageError(ValueError):
    """Options that do not fit together, a scenario that does not exist, a trace that does not replay."""


@dataclass(frozen=True)
class ExploreRequest:
    scenarios: tuple[Scenario, ...]
    options: ExploreOptions
    replay: Trace | None = None
    jobs: int = 1  # scenarios explored at once, each in its own process

    @classmethod
    def of(cls, scenario: str | None, *, every: bool, exhaustive: bool, random_runs: int | None, seed: int,
           max_switches: int | None, crashes: bool, bugs: tuple[str, ...], replay: str | None,
           jobs: int = 1) -> ExploreRequest:
        from tether.sim.scenarios.library import SCENARIOS

        if every or scenario == ALL:
            if replay is not None:
                raise ExploreUsageError("--replay takes one scenario, not all of them")
            chosen = tuple(SCENARIOS.values())
        elif scenario is None:
            raise ExploreUsageError("name a scenario (`tether scenario list` prints them), or use --all")
        elif scenario not in SCENARIOS:
            raise ExploreUsageError(f"unknown scenario {scenario!r}; `tether scenario list` prints them")
        else:
            chosen = (SCENARIOS[scenario],)
        if exhaustive and random_runs is not None:
            raise ExploreUsageError("--exhaustive and --random exclude each other")
        if random_runs is not None and random_runs < 1:
            raise ExploreUsageError("--random needs at least one schedule")
        if max_switches is not None and max_switches < 0:
            raise ExploreUsageError("--max-switches cannot be negative")
        if jobs < 1:
            raise ExploreUsageError("--jobs needs at least one process")
        trace = None
        if replay is not None:
            try:
                trace = Trace.parse(replay)
            except TraceError as error:
                raise ExploreUsageError(str(error)) from None
            if not trace.steps:
                raise ExploreUsageError("the trace to replay is empty")
        options = ExploreOptions(exhaustive=random_runs is None, runs=random_runs or 0, seed=seed,
                                 max_switches=max_switches, crashes=crashes, bugs=bugs)
        return cls(chosen, options, trace, jobs)


def run_request(request: ExploreRequest, *, as_json: bool, out: Callable[[str], None],
                progress: Callable[[str], None]) -> bool:
    """Run the request and print its report; True when some invariant was violated."""
    if request.replay is not None:
        (scenario,) = request.scenarios
        try:
            replayed = asyncio.run(replay(scenario, request.replay, request.options.bugs))
        except ScheduleDiverged as error:
            raise ExploreUsageError(f"the trace does not replay on {scenario.name}: {error}") from None
        _print_replay(scenario, replayed, as_json=as_json, out=out)
        return not replayed.clean
    reports = []
    if request.jobs > 1 and len(request.scenarios) > 1:
        names = [scenario.name for scenario in request.scenarios]
        for report in explore_many(names, request.options, request.jobs):
            progress(f"  {report.scenario}: {report.schedules} schedules, {report.crash_states} crash states, "
                     f"{len(report.violations)} violations, {report.seconds:.1f} s")
            reports.append(report)
        reports.sort(key=lambda report: names.index(report.scenario))
    else:
        for scenario in request.scenarios:
            options = ExploreOptions(**{**vars(request.options), "progress": _Progress(progress)})
            reports.append(asyncio.run(explore(scenario, options)))
    if as_json:
        document: Any = reports[0].as_dict() if len(reports) == 1 else {
            "scenarios": [report.as_dict() for report in reports],
            "schedules": sum(report.schedules for report in reports),
            "violations": sum(len(report.violations) for report in reports),
            "seconds": round(sum(report.seconds for report in reports), 3),
        }
        out(json.dumps(document, indent=2))
    else:
        for report in reports:
            _print_report(report, out)
        if len(reports) > 1:
            out(f"{len(reports)} scenarios, {sum(r.schedules for r in reports)} schedules, "
                f"{sum(r.crash_states for r in reports)} crash states, "
                f"{sum(r.seconds for r in reports):.2f} s")
    return any(report.violations for report in reports)


class _Progress:
    """A line on stderr at most once a second: how far the exploration has got."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.last = time.monotonic()

    def __call__(self, report: Exploration) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        self.emit(f"  {report.scenario}: {report.schedules} schedules, {report.crash_states} crash states, "
                  f"{len(report.violations)} violations so far")


def replay_command(scenario: str, bugs: tuple[str, ...], trace: str) -> str:
    words = ["tether", "explore", scenario]
    for bug in bugs:
        words += ["--emulate-bug", bug]
    return " ".join([*map(shlex.quote, words), "--replay", shlex.quote(trace)])


def _print_finding(kind: str, finding: Finding, report: Exploration, out: Callable[[str], None]) -> None:
    where = " after a crash" if finding.crash else ""
    out(f"{kind} {finding.invariant}{where} (in {finding.schedules} schedules): {finding.evidence}")
    out(f"  trace: {finding.trace}")
    out(f"  replay: {replay_command(report.scenario, report.bugs, finding.trace)}")


def _print_report(report: Exploration, out: Callable[[str], None]) -> None:
    for line in report.summary_lines():
        out(line)
    for finding in report.mended.values():
        _print_finding("MENDED (only by a reconciler)", finding, report, out)
    for finding in report.violations.values():
        _print_finding("VIOLATION", finding, report, out)
    out("  no violation" if report.clean else f"  {len(report.violations)} invariants violated")


def _print_replay(scenario: Scenario, replayed: Replayed, *, as_json: bool, out: Callable[[str], None]) -> None:
    if as_json:
        out(json.dumps({
            "scenario": scenario.name,
            "trace": replayed.trace,
            "violations": [{"invariant": name, "evidence": evidence} for name, evidence in replayed.violations],
            "mended": [{"invariant": name, "evidence": evidence} for name, evidence in replayed.mended],
        }, indent=2))
        return
    out(f"scenario {scenario.name}: replayed {len(replayed.trace.split())} steps")
    for invariant, evidence in replayed.mended:
        out(f"MENDED (only by a reconciler) {invariant}: {evidence}")
    for invariant, evidence in replayed.violations:
        out(f"VIOLATION {invariant}: {evidence}")
    out("  no violation" if replayed.clean else f"  {len(replayed.violations)} violations")
