"""`tether repair`: the audit's analysis, then each finding's repair through the gates.

A dry run and --apply take the same path; only the last step differs. Before each action the
finding is read again from the cloud and acted on only if it still holds, and the journal has the
line that announces the action (with the resources as they were) before the action is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.audit.analysis import Analysis
from tether.audit.command import AuditRequest, collect_and_analyse, write, write_prometheus
from tether.audit.findings import Finding
from tether.audit.gates import Gates, held_back
from tether.audit.journal import Journal
from tether.exits import ExitCode, Failure

Confirm = Callable[[Finding], bool]


@dataclass(frozen=True)
class RepairRequest:
    audit: AuditRequest
    gates: Gates = field(default_factory=Gates)
    apply: bool = False
    journal: Path | None = None
    confirm: Confirm | None = None


@dataclass
class Outcome:
    finding: Finding
    status: str  # "would repair", "repaired", "skipped", "held back", "failed", "declined"
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, **self.finding.as_dict()}


@dataclass
class RepairRun:
    analysis: Analysis
    outcomes: list[Outcome] = field(default_factory=list)
    aborted: str | None = None
    applied: bool = False

    def count(self, status: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)


def repair(conn: Any, analysis: Analysis, request: RepairRequest) -> RepairRun:
    from tether.audit.actions import perform
    from tether.audit.reread import reread

    run = RepairRun(analysis, applied=request.apply)
    journal = Journal(request.journal if request.apply else None)
    snap = analysis.collection.snapshot
    planned = []
    for finding in analysis.findings:
        why = held_back(finding, snap, request.gates)
        if why is None:
            planned.append(finding)
        else:
            run.outcomes.append(Outcome(finding, "held back", why))
    if len(planned) > request.gates.max_actions and not request.gates.force:
        run.aborted = (f"{len(planned)} actions planned, more than --max-actions {request.gates.max_actions}: "
                       "nothing done (--force acts anyway)")
        run.outcomes += [Outcome(f, "held back", "over --max-actions") for f in planned]
        return run
    for finding in planned:
        if request.confirm is not None and not request.confirm(finding):
            run.outcomes.append(Outcome(finding, "declined"))
            continue
        try:
            fresh = reread(conn, finding)
        except Exception as error:  # a resource that cannot be read again is not acted on
            reason = f"cannot read it again: {type(error).__name__}: {error}"
            journal.write("skipped", finding, reason=reason)
            run.outcomes.append(Outcome(finding, "skipped", reason))
            continue
        before = fresh.before
        # The gates again, on what was just read: the resource may have moved since the analysis.
        why = "no longer holds" if fresh.finding is None else held_back(fresh.finding, fresh.snapshot, request.gates)
        if why is not None:
            journal.write("skipped", finding, before=before, reason=why)
            run.outcomes.append(Outcome(finding, "skipped", why))
            continue
        if not request.apply:
            run.outcomes.append(Outcome(finding, "would repair"))
            continue
        journal.write("acting", finding, before=before)
        try:
            perform(conn, finding.repair)
        except Exception as error:  # the API's refusal, in its words
            reason = f"{type(error).__name__}: {error}"
            journal.write("failed", finding, reason=reason)
            run.outcomes.append(Outcome(finding, "failed", reason))
            continue
        journal.write("repaired", finding)
        run.outcomes.append(Outcome(finding, "repaired"))
    return run


def outcome_code(run: RepairRun) -> ExitCode:
    if run.aborted or run.count("failed"):
        return ExitCode.ERROR
    if run.count("repaired"):
        return ExitCode.REPAIRED
    if run.analysis.findings:
        return ExitCode.VIOLATIONS
    return ExitCode.OK if run.analysis.complete else ExitCode.ERROR


def render_run(run: RepairRun, as_json: bool) -> str:
    import json

    from tether.audit.findings import age_text
    from tether.audit.report import SCHEMA

    if as_json:
        body = {"schema": SCHEMA, **run.analysis.as_dict(), "aborted": run.aborted,
                "outcomes": [outcome.as_dict() for outcome in run.outcomes]}
        return json.dumps(body, indent=2) + "\n"
    lines = []
    for o in run.outcomes:
        resources = " ".join(f"{k}={v}" for k, v in o.finding.resources.items())
        what = o.finding.repair.command or o.finding.repair.action
        tail = f" ({o.reason})" if o.reason else ""
        lines.append(f"{o.status.upper()} {o.finding.invariant} [{age_text(o.finding.age)}] {resources}: {what}{tail}")
    if run.aborted:
        lines.append(f"ABORTED {run.aborted}")
    counts = ", ".join(f"{status} {run.count(status)}" for status in
                       ("repaired", "would repair", "skipped", "held back", "failed", "declined") if run.count(status))
    lines.append(f"{len(run.analysis.findings)} findings" + (f": {counts}" if counts else ""))
    lines += [f"WARNING source {s.name} failed: {s.error}" for s in run.analysis.collection.sources if not s.ok]
    return "\n".join(lines) + "\n"


def run_repair(request: RepairRequest, console: Any, echo: Callable[[str], None], as_json: bool) -> ExitCode:
    conn, analysis = collect_and_analyse(request.audit, console)
    if request.apply and request.journal is not None:
        try:
            request.journal.parent.mkdir(parents=True, exist_ok=True)
            request.journal.touch()
        except OSError as error:
            raise Failure(ExitCode.ERROR, f"cannot write the journal {request.journal}: "
                                          f"{error.strerror or error}") from None
    run = repair(conn, analysis, request)
    write(render_run(run, as_json), request.audit.output, echo)
    if request.audit.prometheus is not None:
        from collections import Counter

        from tether.audit.metrics import RepairTally

        actions = Counter((outcome.finding.repair.action, outcome.status) for outcome in run.outcomes)
        write_prometheus(request.audit.prometheus, analysis, RepairTally(dict(actions), run.applied,
                                                                          run.aborted is not None))
    return outcome_code(run)
