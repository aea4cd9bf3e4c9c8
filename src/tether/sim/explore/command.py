"""What `tether explore` does, apart from parsing its options: run, report, and say how to replay."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

from rich.console import Console
from rich.text import Text

from tether.exits import INTERRUPTED, ExitCode
from tether.sim.explore.explorer import ExploreOptions, Replayed, explore_many, replay, runs_here
from tether.sim.explore.progress import Board, ProgressBar
from tether.sim.explore.report import (
    ERROR,
    INCOMPLETE,
    PASSED,
    VIOLATED,
    Exploration,
    Finding,
    needed_mend,
)
from tether.sim.explore.schedule import ScheduleDiverged
from tether.sim.explore.trace import CRASH_WORD, Trace, TraceError
from tether.sim.scenarios.model import Scenario

ALL = "all"


class ExploreUsageError(ValueError):
    """Options that do not fit together, a scenario that does not exist, a trace that does not replay."""


@dataclass(frozen=True)
class ExploreRequest:
    scenarios: tuple[Scenario, ...]
    options: ExploreOptions
    replay: Trace | None = None
    jobs: int = 1  # scenarios explored at once, each in its own process

    @classmethod
    def of(cls, names: Sequence[str], *, every: bool, exhaustive: bool, random_runs: int | None, seed: int,
           max_switches: int | None, crashes: bool, bugs: tuple[str, ...], replay: str | None,
           jobs: int = 1, allow_mended: bool = False, max_schedules: int | None = None,
           max_seconds: float | None = None) -> ExploreRequest:
        from tether.sim.scenarios.library import SCENARIOS

        if every or ALL in names:
            if replay is not None:
                raise ExploreUsageError("--replay takes one scenario, not all of them")
            chosen = tuple(SCENARIOS.values())
        elif not names:
            raise ExploreUsageError("name a scenario (`tether scenario list` prints them), or use --all")
        else:
            for name in names:
                if name not in SCENARIOS:
                    raise ExploreUsageError(f"unknown scenario {name!r}; `tether scenario list` prints them")
            chosen = tuple(SCENARIOS[name] for name in dict.fromkeys(names))
            if replay is not None and len(chosen) > 1:
                raise ExploreUsageError("--replay takes one scenario")
        if exhaustive and random_runs is not None:
            raise ExploreUsageError("--exhaustive and --random exclude each other")
        if random_runs is not None and random_runs < 1:
            raise ExploreUsageError("--random needs at least one schedule")
        if max_switches is not None and max_switches < 0:
            raise ExploreUsageError("--max-switches cannot be negative")
        if jobs < 1:
            raise ExploreUsageError("--jobs needs at least one process")
        if max_schedules is not None and max_schedules < 1:
            raise ExploreUsageError("--max-schedules needs at least one schedule")
        if max_seconds is not None and not max_seconds > 0:
            raise ExploreUsageError("--max-seconds needs a time above zero")
        if replay is not None and (max_schedules is not None or max_seconds is not None):
            raise ExploreUsageError("--replay runs one schedule: --max-schedules and --max-seconds do not apply")
        trace = None
        if replay is not None:
            try:
                trace = Trace.parse(replay)
            except TraceError as error:
                raise ExploreUsageError(str(error)) from None
            if not trace.steps:
                raise ExploreUsageError("the trace to replay is empty")
        options = ExploreOptions(exhaustive=random_runs is None, runs=random_runs or 0, seed=seed,
                                 max_switches=max_switches, crashes=crashes, bugs=bugs, allow_mended=allow_mended,
                                 max_schedules=max_schedules, max_seconds=max_seconds)
        return cls(chosen, options, trace, jobs)


@dataclass(frozen=True)
class Outcome:
    violated: bool  # some schedule failed in what was explored
    interrupted: bool = False  # Ctrl-C stopped the run before every scenario was explored in full
    incomplete: bool = False  # a budget stopped some scenario before every schedule was explored
    failed: bool = False  # some scenario could not be explored at all

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return INTERRUPTED
        if self.violated:
            return ExitCode.VIOLATIONS
        if self.failed:
            return ExitCode.INTERNAL
        return ExitCode.INCOMPLETE if self.incomplete else ExitCode.OK


def run_request(request: ExploreRequest, *, as_json: bool, out: Console, err: Console) -> Outcome:
    """Run the request, printing each scenario's report on ``out`` as soon as it is done.

    A bar shows the progress on whichever of ``out`` and ``err`` is a terminal
    (``out`` first, so that the reports print above it), or nowhere.
    """
    if request.replay is not None:
        (scenario,) = request.scenarios
        try:
            replayed = asyncio.run(replay(scenario, request.replay, request.options.bugs,
                                          allow_mended=request.options.allow_mended))
        except ScheduleDiverged as error:
            raise ExploreUsageError(f"the trace does not replay on {scenario.name}: {error}") from None
        _print_replay(scenario, replayed, as_json=as_json, out=out)
        return Outcome(violated=not replayed.clean)
    run = _Run(request, as_json=as_json, out=out, err=err)
    with _Interrupt(run.stopping, run.stop_now) as interrupt, run.bar:
        stream = explore_many(run.names, request.options, request.jobs, progress=run.board.update,
                              stop=interrupt.requested)
        abandoned = None
        try:
            for report in stream:
                run.finished(report)
        except KeyboardInterrupt:  # stop_now, with workers: they are killed as the stream closes
            stream.close()
            abandoned = run.abandoned()
    if abandoned is not None:
        return run.end(interrupted=True, abandoned=abandoned)
    return run.end(interrupted=interrupt.asked)


class _Run:
    """One run of `tether explore` over scenarios: what it has printed, and what it prints at the end."""

    def __init__(self, request: ExploreRequest, *, as_json: bool, out: Console, err: Console) -> None:
        self.names = [scenario.name for scenario in request.scenarios]
        self.as_json = as_json
        self.out, self.err = out, err
        self.board = Board(len(self.names), None if request.options.exhaustive else request.options.runs)
        self.bar = ProgressBar(out if out.is_terminal else err, self.board)
        self.reports: list[Exploration] = []
        self.started = time.perf_counter()
        self.here = runs_here(self.names, request.jobs)  # explored in this process, not in workers

    def finished(self, report: Exploration) -> None:
        self.board.finished(report)
        self.bar.refresh()
        self.reports.append(report)
        if not self.as_json:
            _print_report(report, self.out)

    def stopping(self) -> None:
        """Say, once, that the first Ctrl-C was heard: on the bar if there is one, else in a line."""
        self.board.stopping = True
        if self.bar.console is None:
            _say(self.err, "interrupted: stopping after the current schedule (Ctrl-C again to stop now)")

    def stop_now(self) -> None:
        """The second Ctrl-C: stop at once, and print what finished.

        With workers, this process is only waiting for them: a KeyboardInterrupt
        unwinds to ``run_request``, and closing the stream kills them. A scenario
        explored in this process, though, is abandoned in the middle of a step, and
        unwinding asyncio's loop and the store from there can hang on a task that
        waits for a step that will never come: the summary is printed from here,
        and the process exits without unwinding anything.
        """
        if not self.here:
            raise KeyboardInterrupt
        self.bar.__exit__(None, None, None)
        self.end(interrupted=True, abandoned=self.abandoned())
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(INTERRUPTED)

    def abandoned(self) -> list[str]:
        """The scenarios under way when the second Ctrl-C came, whose findings are lost."""
        explored = self._explored()
        return [name for name in self.board.running if name not in explored]

    def _explored(self) -> set[str]:
        return {report.scenario for report in self.reports}

    def end(self, *, interrupted: bool, abandoned: Sequence[str] = ()) -> Outcome:
        """Print the JSON document or the summary; what the run comes to."""
        reports = sorted(self.reports, key=lambda report: self.names.index(report.scenario))
        explored = self._explored()
        # A Ctrl-C that came when every scenario had been explored in full has lost nothing.
        interrupted = interrupted and (len(reports) < len(self.names) or any(r.interrupted for r in reports))
        not_started = [name for name in self.names if name not in explored and name not in abandoned]
        outcome = Outcome(violated=any(report.violations for report in reports), interrupted=interrupted,
                          incomplete=any(report.verdict == INCOMPLETE for report in reports),
                          failed=any(report.verdict == ERROR for report in reports))
        # What a run with a larger budget (or none) has left to explore.
        resume = [name for name in self.names if name not in explored or name in
                  {report.scenario for report in reports if report.verdict in (INCOMPLETE, ERROR)}]
        if self.as_json:
            document: Any = reports[0].as_dict() if len(self.names) == 1 and reports else {
                "scenarios": [report.as_dict() for report in reports],
                "verdict": _verdict(outcome),
                "schedules": sum(report.schedules for report in reports),
                "violations": sum(len(report.violations) for report in reports),
                "seconds": round(sum(report.seconds for report in reports), 3),
                "complete": not interrupted and all(report.complete for report in reports),
                "interrupted": interrupted,
                "incomplete": [report.scenario for report in reports if report.verdict == INCOMPLETE],
                "failed": [report.scenario for report in reports if report.verdict == ERROR],
                "abandoned": list(abandoned),
                "not_started": not_started,
                "resume": resume,
            }
            _say(self.out, json.dumps(document, indent=2))
        elif len(self.names) > 1 or interrupted:
            seconds = time.perf_counter() - self.started
            if resume and (outcome.incomplete or outcome.failed or interrupted):
                _say(self.out, f"to explore what is left: {shlex.join(['tether', 'explore', *resume])} "
                               "(with the same options, and a larger budget)")
            # the summary comes last, where a script (or a person) reads the run's end
            _say(self.out, _summary(len(self.names), reports, abandoned, not_started, interrupted, seconds))
        return outcome


def _verdict(outcome: Outcome) -> str:
    if outcome.violated:
        return VIOLATED
    if outcome.failed:
        return ERROR
    return INCOMPLETE if outcome.incomplete or outcome.interrupted else PASSED


class _Interrupt:
    """Ctrl-C while exploring: the first stops the run after the schedules running, the second stops it now.

    The first only sets a flag, which the explorer reads between two schedules
    (``requested``): every scenario then ends cleanly and what it found is
    printed. The second calls ``on_second`` from the handler, for a schedule that
    does not end.
    """

    def __init__(self, on_first: Callable[[], None], on_second: Callable[[], None]) -> None:
        self.on_first = on_first
        self.on_second = on_second
        self.asked = False
        self._told = False
        self._previous: Any = None

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():  # only there can a handler be set
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.asked:
            self.on_second()
        self.asked = True

    def requested(self) -> bool:
        # Told here, between two schedules on the main thread, rather than in the signal handler,
        # which may run in the middle of a line being printed.
        if self.asked and not self._told:
            self._told = True
            self.on_first()
        return self.asked

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _summary(scenarios: int, reports: list[Exploration], abandoned: Sequence[str], not_started: list[str],
             interrupted: bool, seconds: float) -> Text:
    violated = [report.scenario for report in reports if report.violations]
    counts = (f"{sum(r.schedules for r in reports)} schedules, {sum(r.crash_states for r in reports)} crash states; "
              + (f"violations in {len(violated)}: {', '.join(violated)}" if violated else "no violation")
              + f"; {seconds:.1f} s")
    if not interrupted:
        short = [report.scenario for report in reports if report.verdict == INCOMPLETE]
        failed = [report.scenario for report in reports if report.verdict == ERROR]
        if not short and not failed:
            return Text.assemble(f"all {scenarios} scenarios explored: ", counts)
        said = []
        if short:
            said.append(f"{len(short)} stopped by a budget ({', '.join(short)})")
        if failed:
            said.append(f"{len(failed)} could not be explored ({', '.join(failed)})")
        return Text.assemble(("INCOMPLETE", "bold yellow"), ": ", ", ".join(said), "; ", counts)
    part = [report.scenario for report in reports if report.interrupted]
    said = [f"{len(reports) - len(part)} of {scenarios} scenarios explored"]
    if part:
        said.append(f"{len(part)} stopped part-way ({', '.join(part)})")
    if abandoned:
        said.append(f"{len(abandoned)} stopped at once, nothing kept ({', '.join(abandoned)})")
    if not_started:
        said.append(f"{len(not_started)} not started ({', '.join(not_started)})")
    return Text.assemble(("INCOMPLETE (interrupted)", "bold yellow"), ": ", ", ".join(said), "; ", counts)


def replay_command(scenario: str, bugs: tuple[str, ...], trace: str) -> str:
    words = ["tether", "explore", scenario]
    for bug in bugs:
        words += ["--emulate-bug", bug]
    return " ".join([*map(shlex.quote, words), "--replay", shlex.quote(trace)])


def trace_lines(trace: str) -> list[str]:
    """A trace one step a line: its number, the actor that ran, and the checkpoint it ran from."""
    parsed = Trace.parse(trace)
    width = max((len(actor) for actor, _ in parsed.steps), default=0)
    lines = [f"{number:>4}  {actor:<{width}}  {point}" for number, (actor, point) in enumerate(parsed.steps, 1)]
    if parsed.crash:
        lines.append(f"{'':>4}  {CRASH_WORD}: the control plane dies here, and a new one recovers from what it left")
    return lines


def _say(console: Console, text: str | Text) -> None:
    # Printed as given: never wrapped (a replay line must paste back whole, and evidence holds ids to copy),
    # and no [markup] or :emoji: read into evidence, actors or JSON.
    console.print(text, soft_wrap=True, markup=False, highlight=False, emoji=False)


def _print_trace(trace: str, out: Console) -> None:
    steps = Trace.parse(trace).steps
    _say(out, f"  trace, {len(steps)} steps (actor, checkpoint):")
    for line in trace_lines(trace):
        _say(out, f"  {line}")


def _print_finding(kind: Text, finding: Finding, report: Exploration, out: Console) -> None:
    where = " after a crash" if finding.crash else ""
    found = f" {finding.invariant}{where} (in {finding.schedules} schedules): {finding.evidence}"
    _say(out, Text.assemble(kind, found))
    _print_trace(finding.trace, out)
    _say(out, f"  replay: {replay_command(report.scenario, report.bugs, finding.trace)}")


def _print_report(report: Exploration, out: Console) -> None:
    for line in report.summary_lines():
        _say(out, Text(line, style="bold yellow") if line.lstrip().startswith("INCOMPLETE") else line)
    failed = set(report.violations)
    for finding in report.mended.values():
        if {needed_mend(finding.invariant, crash=crash) for crash in (False, True)} & failed:
            continue  # printed below, as the violation it is
        _print_finding(Text("MENDED (only by a reconciler)", style="yellow"), finding, report, out)
    for finding in report.violations.values():
        _print_finding(Text("VIOLATION", style="bold red"), finding, report, out)
    if not report.clean:
        _say(out, Text(f"  {len(report.violations)} invariants violated", style="red"))
    elif report.error is not None:
        _say(out, Text("  not explored", style="red"))
    else:
        _say(out, Text("  no violation" + ("" if report.complete else " in the schedules explored"), style="green"))


def _print_replay(scenario: Scenario, replayed: Replayed, *, as_json: bool, out: Console) -> None:
    if as_json:
        _say(out, json.dumps({
            "scenario": scenario.name,
            "trace": replayed.trace,
            "violations": [{"invariant": name, "evidence": evidence} for name, evidence in replayed.violations],
            "mended": [{"invariant": name, "evidence": evidence} for name, evidence in replayed.mended],
        }, indent=2))
        return
    _say(out, f"scenario {scenario.name}: replayed {len(Trace.parse(replayed.trace).steps)} steps")
    for line in trace_lines(replayed.trace):
        _say(out, f"  {line}")
    for invariant, evidence in replayed.mended:
        _say(out, Text.assemble(("MENDED (only by a reconciler)", "yellow"), f" {invariant}: {evidence}"))
    for invariant, evidence in replayed.violations:
        _say(out, Text.assemble(("VIOLATION", "bold red"), f" {invariant}: {evidence}"))
    _say(out, Text("  no violation", style="green") if replayed.clean
         else Text(f"  {len(replayed.violations)} violations", style="red"))
