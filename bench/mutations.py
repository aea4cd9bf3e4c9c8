"""Mutation testing of the modules that enforce the five rules, with cosmic-ray.

Each module is mutated by cosmic-ray (``pip install -e '.[mutation]'``), one
small change at a time (an operator swapped, a condition negated, a constant
changed, a ``break`` for a ``continue``), and its oracle runs against every
mutant: the tests that drive it (the scenarios, the explorer and the unit
tests of that rule, a subset chosen per module to keep the run bounded). A
mutant the oracle fails is killed; one it passes survived, and is printed
with its diff, to be killed with a test or shown to be equivalent.

The mutants are made in a copy of ``src`` and ``tests`` in a temporary
directory, imported from there (``PYTHONPATH``), so the work tree is never
changed, even by a run that is interrupted.

    python bench/mutations.py                       # every module below
    python bench/mutations.py --module runtime/locks.py --module domain/replies.py
    python bench/mutations.py --max-mutants 40      # a deterministic sample of each module's mutants
    python bench/mutations.py --operator exception  # only the mutants of these operators

Prints, per module, the mutants run, killed (incompetent ones, which do not
even import, count as killed), survived and the score, then every survivor:
where it is, the operator, and its diff. Target: 90% killed in every module.
"""

from __future__ import annotations

import argparse
import ast
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.90
PYTEST = ("-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-n", "0")


@dataclass(frozen=True)
class Oracle:
    """The tests that must fail on a mutant of one module."""

    tests: tuple[str, ...]
    keyword: str | None = None  # pytest -k: the fast part of those tests


# The modules that enforce the five rules, and the tests that are their oracle.
MODULES: dict[str, Oracle] = {
    # rule 4: the lock interface and its order
    "runtime/locks.py": Oracle(("tests/test_lock_order.py", "tests/test_scheduler.py"), "not turns_the"),
    # the invariants, and the replies judged against the states
    "domain/invariants.py": Oracle(("tests/test_invariants.py", "tests/test_user_resources_kept.py",
                                    "tests/test_explore_replies.py"),
                                   "not explorer and not scenario and not correct_build and not the_user_deletes"),
    "domain/replies.py": Oracle(("tests/test_replies.py", "tests/test_explore_replies.py"),
                                "not explorer and not scenario and not correct_build"),
    # rule 1 and the backstop: the reconcilers, each explored on its planted disagreement
    "reconcile/nodes.py": Oracle(("tests/test_explore_protections.py", "tests/test_reconcile_units.py"),
                                 "(each_reconciler_mends and (event-lost or names-deleted)) or reconcile_units"),
    "reconcile/ports.py": Oracle(("tests/test_explore_protections.py", "tests/test_reconcile_units.py"),
                                 "(each_reconciler_mends and (cache-entry-lost or mac-kept)) or reconcile_units"),
    # with their own decisions, which no planted disagreement reaches: a node's deadline, another's domain
    "reconcile/instances.py": Oracle(("tests/test_explore_protections.py", "tests/test_reconcile_units.py"),
                                     "(each_reconciler_mends and guest-device-lost) or reconcile_units"),
    "reconcile/transients.py": Oracle(("tests/test_explore_protections.py", "tests/test_reconcile_units.py"),
                                      "(each_reconciler_mends and past-deadline) or reconcile_units"),
    # rules 1 and 2: the VIF and port tear-down (each layer of seed 000's race explored alone), with their own
    # decisions, which that race never reaches: another's node or port, a tear-down that fails or never ends
    # (the unit tests first: with -x most mutants fail there within seconds)
    "services/compute/release.py": Oracle(("tests/test_release_units.py", "tests/test_explore_protections.py",
                                           "tests/test_scenarios.py"),
                                          "release_units or each_layer_holds or (passes_without and (terminate or "
                                          "reuse))"),
    "services/baremetal/teardown.py": Oracle(("tests/test_teardown_units.py", "tests/test_explore_protections.py"),
                                             "teardown_units or each_layer_holds"),
}


@dataclass
class Outcome:
    module: str
    killed: int = 0
    incompetent: int = 0
    survived: list[tuple[str, str]] | None = None  # (where and operator, diff)
    skipped: int = 0
    in_annotations: int = 0  # equivalent by construction, not run
    seconds: float = 0.0
    error: str | None = None

    @property
    def run(self) -> int:
        return self.killed + self.incompetent + len(self.survived or [])

    @property
    def score(self) -> float:
        return (self.killed + self.incompetent) / self.run if self.run else 1.0


# cosmic-ray's exception replacer writes ``except CosmicRayTestingException``, a name only its own
# process defines: in the oracle's, any exception that reached the clause would fail as a NameError,
# a kill whatever the mutant does. The name is given to the oracle's process, so such a mutant is
# judged by what it does: the clause catches nothing any more.
_EXCEPTION_NAME = """\
import builtins

from cosmic_ray.exceptions import CosmicRayTestingException

builtins.CosmicRayTestingException = CosmicRayTestingException
"""


def _copy_tree(into: Path) -> None:
    for part in ("src", "tests", "pyproject.toml"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, into / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, into / part)
    (into / "conftest.py").write_text(_EXCEPTION_NAME)  # the rootdir's: loaded before any test module


def _command(oracle: Oracle) -> list[str]:
    command = [sys.executable, "-m", "pytest", *PYTEST, *oracle.tests]
    if oracle.keyword:
        command += ["-k", oracle.keyword]
    return command


def _config(module: str, command: list[str], timeout: float) -> str:
    # cosmic-ray splits the command with shlex; a TOML literal string keeps shlex's quotes as they are
    return "\n".join([
        "[cosmic-ray]",
        f'module-path = "src/tether/{module}"',
        f"timeout = {timeout:.0f}",
        "excluded-modules = []",
        f"test-command = '''{shlex.join(command)} '''",  # the space: a quote may end the command
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
    ])


def mutate(module: str, oracle: Oracle, work: Path, max_mutants: int | None,
           operators: list[str] | None = None) -> Outcome:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    outcome = Outcome(module, survived=[])
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "NO_COLOR": "1"}
    command = _command(oracle)
    # the oracle must pass on the code as it is, and its time bounds a mutant's
    baseline_started = time.perf_counter()
    baseline = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    baseline_seconds = time.perf_counter() - baseline_started
    if baseline.returncode != 0:
        outcome.error = f"the oracle fails without a mutant:\n{baseline.stdout[-2000:]}"
        return outcome
    name = module.replace("/", "_").removesuffix(".py")
    config, session = work / f"{name}.toml", work / f"{name}.sqlite"
    config.write_text(_config(module, command, max(60.0, 4 * baseline_seconds)))
    subprocess.run([_cosmic_ray(), "init", str(config), str(session)], cwd=work, env=env, check=True,
                   capture_output=True)
    with use_db(str(session), WorkDB.Mode.open) as db:
        # Annotations are never evaluated (``from __future__ import annotations``): a mutant there is
        # equivalent by construction, and costs an oracle run to say so.
        spans = _annotations(work / "src" / "tether" / module)
        for item in list(db.work_items):
            if any(_inside(item.mutations[0].start_pos, span) for span in spans):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
                outcome.in_annotations += 1
    if operators:
        with use_db(str(session), WorkDB.Mode.open) as db:
            for item in list(db.pending_work_items):
                if not any(name in item.mutations[0].operator_name for name in operators):
                    db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
                    outcome.skipped += 1
    if max_mutants is not None:
        with use_db(str(session), WorkDB.Mode.open) as db:
            items = sorted(db.pending_work_items, key=lambda item: item.job_id)
            keep = {item.job_id for item in items[:: max(1, -(-len(items) // max_mutants))]}
            for item in items:
                if item.job_id not in keep:
                    db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
                    outcome.skipped += 1
    subprocess.run([_cosmic_ray(), "exec", str(config), str(session)], cwd=work, env=env, check=True,
                   capture_output=True)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.SURVIVED:
                mutation = item.mutations[0]
                where = f"{module}:{mutation.start_pos[0]} {mutation.operator_name} #{mutation.occurrence}"
                outcome.survived.append((where, result.diff or ""))  # type: ignore[union-attr]
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                outcome.incompetent += 1
            else:
                outcome.killed += 1
    outcome.seconds = time.perf_counter() - started
    return outcome


Span = tuple[tuple[int, int], tuple[int, int]]


def _annotations(path: Path) -> list[Span]:
    """Where the module's annotations are, as ((line, column), (end line, end column))."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for annotation in found:
            if annotation is not None and annotation.end_lineno is not None and annotation.end_col_offset is not None:
                spans.append(((annotation.lineno, annotation.col_offset),
                              (annotation.end_lineno, annotation.end_col_offset)))
    return spans


def _inside(position: tuple[int, int], span: Span) -> bool:
    return span[0] <= tuple(position) < span[1]


def _cosmic_ray() -> str | None:
    """The cosmic-ray beside this interpreter (a virtualenv's, not on PATH), else on PATH."""
    beside = Path(sys.executable).parent / "cosmic-ray"
    return str(beside) if beside.exists() else shutil.which("cosmic-ray")


def _diff_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="Only these (under src/tether).")
    parser.add_argument("--max-mutants", type=int, default=None, help="A deterministic sample of each module's.")
    parser.add_argument("--operator", action="append", help="Only the mutants of operators whose name holds this.")
    args = parser.parse_args()
    if _cosmic_ray() is None:
        print("cosmic-ray is not installed: pip install -e '.[mutation]'", file=sys.stderr)
        return 2
    names = args.module or list(MODULES)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="tether-mutations-") as temporary:
        work = Path(temporary)
        _copy_tree(work)
        print(f"{'module':<34} {'mutants':>7} {'killed':>7} {'survived':>8} {'score':>7} {'s':>7}", flush=True)
        for name in names:
            outcome = mutate(name, MODULES[name], work, args.max_mutants, args.operator)
            outcomes.append(outcome)
            if outcome.error:
                print(f"{name:<34} ERROR {outcome.error}", flush=True)
                continue
            sampled = f" (subset; {outcome.skipped} skipped)" if outcome.skipped else ""
            sampled += f" ({outcome.in_annotations} in annotations, not run)" if outcome.in_annotations else ""
            print(f"{name:<34} {outcome.run:>7} {outcome.killed + outcome.incompetent:>7} "
                  f"{len(outcome.survived or []):>8} {outcome.score:>7.1%} {outcome.seconds:>7.0f}{sampled}",
                  flush=True)
    run = sum(outcome.run for outcome in outcomes)
    killed = sum(outcome.killed + outcome.incompetent for outcome in outcomes)
    print(f"{'total':<34} {run:>7} {killed:>7} {run - killed:>8} {killed / run if run else 1.0:>7.1%}")
    for outcome in outcomes:
        for where, diff in outcome.survived or []:
            print(f"SURVIVED {where}")
            for line in _diff_lines(diff):
                print(f"    {line}")
    below = [outcome.module for outcome in outcomes if outcome.error or outcome.score < TARGET]
    if below:
        print(f"below the {TARGET:.0%} target: {', '.join(below)}")
    return 3 if below else 0


if __name__ == "__main__":
    sys.exit(main())
