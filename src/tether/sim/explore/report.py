"""What an exploration found: counts, and each finding with the trace that reproduces it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.sim.scenarios.runner import ScenarioResult

# Findings that are not one of the design's invariants but fail a schedule all the same.
NOT_TERMINAL = "not-terminal"  # an operation's resource still in a transient state at the end
OPERATION_ERROR = "operation-error"  # an operation raised something other than an API error
DEADLOCK = "deadlock"
LIVELOCK = "livelock"
UNMET = "unmet-expectation"  # the scenario's own expectation of the end state does not hold
# A reconciler mended what the scenario does not expect: the operations left it (a primary path
# that needs the backstop is broken), or, after a crash, the recovery of the durable intents did.
MENDED = "mended"
UNRECOVERED = "unrecovered"


# Why a search stopped before the end (``Exploration.stopped_by``).
MAX_SCHEDULES = "max-schedules"
MAX_SECONDS = "max-seconds"
INTERRUPTED = "interrupted"

# A scenario's verdict. INCOMPLETE is neither a pass nor a failure: nothing was violated in the
# schedules a budget let it explore, and the others were never run.
PASSED = "passed"
VIOLATED = "violated"
INCOMPLETE = "incomplete"
ERROR = "error"


def needed_mend(invariant: str, *, crash: bool) -> str:
    """The finding a mend the scenario did not expect makes: ``mended:stale-vif``, ``unrecovered:...``."""
    return f"{UNRECOVERED if crash else MENDED}:{invariant}"


@dataclass
class Finding:
    """One kind of failure, with the first schedule (shortest trace) that shows it."""

    invariant: str
    evidence: str
    trace: str
    crash: bool
    schedules: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "trace": self.trace, "evidence": self.evidence,
                "crash": self.crash, "schedules": self.schedules}


def findings_of(result: ScenarioResult | None, *, deadlock: str | None = None,
                livelock: bool = False) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(violations, mended) of one schedule, each as (invariant, evidence)."""
    violations: list[tuple[str, str]] = []
    mended: list[tuple[str, str]] = []
    if deadlock is not None:
        violations.append((DEADLOCK, deadlock))
    if livelock:
        violations.append((LIVELOCK, "the schedule did not end within the step limit"))
    if result is not None:
        violations += [(v.invariant, v.evidence) for v in result.violations]
        violations += [(NOT_TERMINAL, leftover) for leftover in result.leftovers]
        violations += [(OPERATION_ERROR, error) for error in result.errors]
        violations += [(UNMET, unmet) for unmet in result.unmet]
        violations += [(v.invariant, v.evidence) for v in result.inconsistent_replies]
        crash = result.crashed_at is not None
        violations += [(needed_mend(v.invariant, crash=crash), v.evidence) for v in result.unexpected_mends]
        mended += [(v.invariant, v.evidence) for v in result.mended]
    return violations, mended


@dataclass(frozen=True)
class Tally:
    """How far one scenario's exploration has got, small enough to send from a worker process often."""

    scenario: str
    schedules: int
    pruned: int
    crash_states: int
    violations: int


@dataclass
class Exploration:
    scenario: str
    strategy: str
    schedules: int = 0  # schedules run to the end
    pruned: int = 0  # prefixes cut short because every way on repeats an equivalent schedule
    equivalent: int | None = 0  # interleavings the explored schedules stand for (None: not counted)
    final_states: set[str] = field(default_factory=set)
    crash_states: int = 0  # distinct states a crash was tried in
    complete: bool = True  # False when a limit or an interruption stopped the search early
    interrupted: bool = False  # stopped part-way because the user asked (Ctrl-C)
    stopped_by: str | None = None  # MAX_SCHEDULES, MAX_SECONDS or INTERRUPTED, when the search stopped early
    error: str | None = None  # the exploration itself failed (the scenario could not be prepared, ...)
    violations: dict[str, Finding] = field(default_factory=dict)
    mended: dict[str, Finding] = field(default_factory=dict)
    seconds: float = 0.0
    max_switches: int | None = None
    crashes: bool = False
    bugs: tuple[str, ...] = ()

    @property
    def skipped(self) -> int | None:
        """Interleavings equivalent to an explored schedule, which the reduction did not run."""
        if self.equivalent is None:
            return None
        return self.equivalent - self.schedules

    @property
    def clean(self) -> bool:
        return not self.violations

    @property
    def verdict(self) -> str:
        """VIOLATED, ERROR, INCOMPLETE (nothing violated in what a budget let it explore) or PASSED."""
        if self.violations:
            return VIOLATED
        if self.error is not None:
            return ERROR
        return PASSED if self.complete else INCOMPLETE

    def stop(self, reason: str) -> None:
        """The search ends here, before every schedule was explored."""
        self.complete = False
        self.stopped_by = reason
        self.interrupted = reason == INTERRUPTED

    def note(self, kind: dict[str, Finding], invariant: str, evidence: str, trace: str, crash: bool) -> None:
        found = kind.get(invariant)
        if found is None:
            kind[invariant] = Finding(invariant, evidence, trace, crash)
            return
        found.schedules += 1
        if len(trace) < len(found.trace):
            found.evidence, found.trace, found.crash = evidence, trace, crash

    def tally(self) -> Tally:
        return Tally(self.scenario, self.schedules, self.pruned, self.crash_states, len(self.violations))

    def summary_lines(self) -> list[str]:
        """What a person reads first: how much was explored, and how long it took."""
        skipped = "not counted" if self.skipped is None else f"{self.skipped} equivalent interleavings skipped"
        lines = [
            f"scenario {self.scenario}: {self.strategy}"
            + (f", at most {self.max_switches} switches" if self.max_switches is not None else "")
            + (", crashes" if self.crashes else "")
            + (f", emulating {', '.join(self.bugs)}" if self.bugs else ""),
            f"  schedules explored: {self.schedules} ({skipped}; {self.pruned} cut short: "
            f"equivalent to one explored, or at a state explored before)",
            f"  distinct final states: {len(self.final_states)}",
        ]
        if self.crashes:
            lines.append(f"  crash states recovered: {self.crash_states}")
        if self.error is not None:
            lines.append(f"  ERROR: the exploration failed: {self.error}")
        elif self.interrupted:
            lines.append(f"  INCOMPLETE: interrupted after {self.schedules} schedules")
        elif not self.complete:
            limit = {MAX_SCHEDULES: "the schedule limit (--max-schedules)",
                     MAX_SECONDS: "the time limit (--max-seconds)"}.get(self.stopped_by or "", "a limit")
            lines.append(f"  INCOMPLETE: stopped at {limit} after {self.schedules} schedules")
        lines.append(f"  time: {self.seconds:.2f} s")
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "strategy": self.strategy,
            "schedules": self.schedules,
            "skipped": self.skipped,
            "pruned": self.pruned,
            "distinct_final_states": len(self.final_states),
            "crash_states": self.crash_states,
            "verdict": self.verdict,
            "complete": self.complete,
            "interrupted": self.interrupted,
            "stopped_by": self.stopped_by,
            "error": self.error,
            "max_switches": self.max_switches,
            "crashes": self.crashes,
            "bugs": list(self.bugs),
            "violations": [finding.as_dict() for finding in self.violations.values()],
            "mended": [finding.as_dict() for finding in self.mended.values()],
            "seconds": round(self.seconds, 3),
        }
