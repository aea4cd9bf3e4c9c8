"""The `tether` command: serve | scenario | explore | check | audit | repair | faults | bugs."""

from __future__ import annotations

import asyncio
import json
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from tether.config import DEFAULT_DATA_DIR, DataDir
from tether.exits import AUDIT_EXITS, CHECK_EXITS, EXPLORE_EXITS, REPAIR_EXITS, SERVE_EXITS, Failure, exit_codes_help
from tether.logs import LogLevel, LogSettings
from tether.runtime.bugs import Bug
from tether.runtime.checkpoints import CHECKPOINTS, PROTECTIONS, checkpoint_names

if TYPE_CHECKING:
    from rich.console import Console

    from tether.failures import Opening

app = typer.Typer(help="Tether: an OpenStack-compatible control plane that does not leak.", no_args_is_help=True)
faults_app = typer.Typer(help="Fault injection at named checkpoints.", no_args_is_help=True)
bugs_app = typer.Typer(help="Upstream OpenStack bugs Tether can emulate.", no_args_is_help=True)
scenario_app = typer.Typer(help="The scenario library: each seed's race, reproduced exactly.", no_args_is_help=True)
app.add_typer(faults_app, name="faults")
app.add_typer(bugs_app, name="bugs")
app.add_typer(scenario_app, name="scenario")

VIOLATIONS_FOUND = 3
ALLOW_MENDED_HELP = ("Report a reconciler's mend that the scenario does not expect without failing on it "
                     "(for exploring your own changes; off by default).")


# rich is imported when something is printed with it: `tether serve` prints nothing through it
# and should not pay for importing it.
@cache
def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr)


@faults_app.command("list")
def faults_list(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say what each point means.")] = False,
) -> None:
    """Print every checkpoint name, one a line, then every protection (``NAME=off`` switches it off)."""
    for name in checkpoint_names():
        typer.echo(f"{name}\t{CHECKPOINTS[name]}" if verbose else name)
    for name in sorted(PROTECTIONS):
        typer.echo(f"{name}=off\t{PROTECTIONS[name]}" if verbose else f"{name}=off")


@bugs_app.command("list")
def bugs_list(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    # The table now always says what -v used to add; the flag stays so that scripts passing it still run.
    _verbose: Annotated[bool, typer.Option("--verbose", "-v", hidden=True)] = False,
) -> None:
    """Print every upstream bug that can be emulated: its name, seed, upstream report and what it does."""
    bugs = sorted(Bug, key=lambda bug: bug.upstream.seed)
    if as_json:
        typer.echo(json.dumps({"bugs": [_bug_as_dict(bug) for bug in bugs]}, indent=2))
        return
    from rich.table import Table

    table = Table(show_lines=True)
    # Names and seeds are what people copy (into --emulate-bug, into a path): never broken over lines.
    # Links are folded rather than cut short with an ellipsis, however narrow the terminal.
    table.add_column("name", no_wrap=True)
    table.add_column("seed", no_wrap=True)
    table.add_column("upstream", overflow="fold")
    table.add_column("what emulating it does", overflow="fold")
    for bug in bugs:
        upstream = bug.upstream
        # The report's title is what finds it upstream where the seed quotes no number.
        references = upstream.references or ("(the seed quotes no bug or review number)",)
        table.add_row(bug.value, upstream.seed, "\n".join([f"{upstream.project}: {upstream.title}", *references]),
                      bug.description)
    console = _console()
    if not console.is_terminal:
        # Into a pipe or a file the table is as wide as its text, not 80 columns: nothing folded for grep.
        from rich.console import Console

        console = Console(width=console.measure(table, options=console.options.update_width(1000)).maximum)
    console.print(table)


def _bug_as_dict(bug: Bug) -> dict[str, object]:
    upstream = bug.upstream
    return {"name": bug.value, "seed": upstream.seed, "project": upstream.project, "title": upstream.title,
            "references": list(upstream.references), "description": bug.description}


@scenario_app.command("list")
def scenario_list() -> None:
    """Print every built-in scenario."""
    from tether.sim.scenarios.library import SCENARIOS

    for scenario in SCENARIOS.values():
        typer.echo(f"{scenario.name}\tseed {scenario.seed}\t{scenario.summary}")


@scenario_app.command("run")
def scenario_run(
    name: str,
    emulate_bug: Annotated[list[str] | None, typer.Option("--emulate-bug", help="Behave like upstream.")] = None,
    fault: Annotated[list[str] | None, typer.Option("--fault", help="POINT=ACTION[*N]")] = None,
    db: Annotated[str | None, typer.Option("--db", help="sqlite:///path or postgresql://user@host:port/db")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    allow_mended: Annotated[bool, typer.Option("--allow-mended", help=ALLOW_MENDED_HELP)] = False,
) -> None:
    """Run a scenario on a fresh store; exit 0 when it passes, 3 when it does not.

    It fails when an invariant is violated, an expectation of the scenario is unmet, an operation
    errs, something is left in a transient state, or a reconciler had to mend what the scenario
    does not declare (after a crash: what the recovery should have restored).
    """
    from tether.domain.errors import TetherError
    from tether.runtime.bugs import UnknownBug
    from tether.runtime.faults import FaultRuleError
    from tether.sim.scenarios.library import SCENARIOS
    from tether.sim.scenarios.runner import run_scenario
    from tether.store.database import DatabaseUrlError

    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise typer.BadParameter(f"unknown scenario {name!r}; `tether scenario list` prints them", param_hint="NAME")
    try:
        result = asyncio.run(run_scenario(scenario, bugs=emulate_bug or (), faults=fault or (), db_url=db,
                                          allow_mended=allow_mended))
    except (UnknownBug, FaultRuleError, DatabaseUrlError) as error:
        raise typer.BadParameter(str(error)) from None
    except (*_store_errors(), TetherError) as error:
        _fail(error)
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        _print_scenario(result)
    raise typer.Exit(0 if result.passed else VIOLATIONS_FOUND)


def _print_scenario(result) -> None:  # type: ignore[no-untyped-def]
    console = _console()
    console.print(f"[bold]scenario[/bold] {result.scenario}")
    for step in result.steps:
        typer.echo(f"  t={step['at']:>7.1f}  {step['actor']:<28} {step['text']}")
    if result.crashed_at:
        console.print(f"[yellow]crashed at {result.crashed_at}; recovered on restart[/yellow]")
    for violation in result.mended:
        if violation in result.unexpected_mends:
            who = "the recovery left it" if result.crashed_at else "the operations left it"
            console.print(f"[red]MENDED[/red] by a reconciler ({who}, the scenario does not expect it) "
                          f"{violation.invariant}: {violation.evidence}")
        else:
            console.print(f"[yellow]mended by a reconciler[/yellow] {violation.invariant}: {violation.evidence}")
    for violation in result.violations:
        console.print(f"[red]VIOLATION[/red] {violation.invariant}: {violation.evidence}")
    for unmet in result.unmet:
        console.print(f"[red]UNMET[/red] {unmet}")
    for lie in result.inconsistent_replies:
        console.print(f"[red]INCONSISTENT REPLY[/red] {lie.evidence}")
    for leftover in result.leftovers:
        console.print(f"[red]STILL TRANSIENT[/red] {leftover}")
    for error in result.errors:
        console.print(f"[red]ERROR[/red] {error}")
    console.print("[green]PASSED[/green]" if result.passed else "[red]FAILED[/red]")


@app.command(help="Explore scenarios' interleavings (and crashes), printing each scenario's report as it ends.\n\n"
             "A schedule fails on a violated invariant, an unmet expectation of the scenario, an operation's "
             "error, a transient state left, or a reconciler's mend the scenario does not expect. With "
             "--max-schedules or --max-seconds (each scenario's budget) a scenario stopped early is INCOMPLETE: "
             "neither a pass nor a failure, with an exit code of its own. Ctrl-C stops after the schedules "
             "running and prints what was found; a second Ctrl-C stops at once.\n\n"
             + exit_codes_help(EXPLORE_EXITS))
def explore(
    scenarios: Annotated[list[str] | None, typer.Argument(help="Built-in scenarios, or `all` for every one.",
                                                          metavar="SCENARIO|all")] = None,
    every: Annotated[bool, typer.Option("--all", help="Explore every built-in scenario.")] = False,
    exhaustive: Annotated[bool, typer.Option("--exhaustive", help="Every schedule, once per class of "
                                             "equivalent ones (the default).")] = False,
    random_runs: Annotated[int | None, typer.Option("--random", metavar="N", help="N seeded random schedules.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random schedules.")] = 0,
    max_switches: Annotated[int | None, typer.Option("--max-switches", metavar="K",
                                                     help="At most K switches away from a runnable operation.")] = None,
    crashes: Annotated[bool, typer.Option("--crashes", help="Also crash the control plane between any two "
                                          "steps and recover.")] = False,
    emulate_bug: Annotated[list[str] | None, typer.Option("--emulate-bug", help="Behave like upstream.")] = None,
    replay_trace: Annotated[str | None, typer.Option("--replay", metavar="TRACE",
                                                     help="Run exactly this schedule, as printed by explore.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, at the end.")] = False,
    jobs: Annotated[int, typer.Option("--jobs", metavar="J", help="Explore J scenarios at once, "
                                      "each in a process of its own.")] = 1,
    allow_mended: Annotated[bool, typer.Option("--allow-mended", help=ALLOW_MENDED_HELP)] = False,
    max_schedules: Annotated[int | None, typer.Option("--max-schedules", metavar="N", help="Stop each "
                                                      "scenario after N schedules (then INCOMPLETE).")] = None,
    max_seconds: Annotated[float | None, typer.Option("--max-seconds", metavar="S", help="Stop each scenario "
                                                      "S seconds after its cloud is seeded, mid-schedule "
                                                      "if need be (then INCOMPLETE).")] = None,
) -> None:
    from tether.runtime.bugs import Bugs, UnknownBug
    from tether.sim.explore.command import ExploreRequest, ExploreUsageError, run_request

    bugs = tuple(emulate_bug or ())
    try:
        Bugs(bugs)
        request = ExploreRequest.of(scenarios or (), every=every, exhaustive=exhaustive, random_runs=random_runs,
                                    seed=seed, max_switches=max_switches, crashes=crashes, bugs=bugs,
                                    replay=replay_trace, jobs=jobs, allow_mended=allow_mended,
                                    max_schedules=max_schedules, max_seconds=max_seconds)
        outcome = run_request(request, as_json=as_json, out=_console(), err=_console(stderr=True))
    except (UnknownBug, ExploreUsageError) as error:
        _fail(error)
    raise typer.Exit(outcome.exit_code)


@app.command(help="Run a whole OpenStack-compatible cloud in this process.\n\n" + exit_codes_help(SERVE_EXITS))
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for every service (0: any free one, named in the banner).")] = 6080,
    data_dir: Annotated[Path, typer.Option("--data-dir", help="Where the cloud keeps its state.")] = DEFAULT_DATA_DIR,
    db: Annotated[str | None, typer.Option("--db", help="Database URL (default: SQLite in the data dir).")] = None,
    fault: Annotated[list[str] | None, typer.Option("--fault", help="POINT=ACTION[*N]")] = None,
    emulate_bug: Annotated[list[str] | None, typer.Option("--emulate-bug", help="Behave like upstream.")] = None,
    deploy_seconds: Annotated[float, typer.Option(help="Fake hardware: deploy until the ramdisk calls back.")] = 5.0,
    clean_seconds: Annotated[float, typer.Option(help="Fake hardware: how long cleaning takes (a new machine's "
                                                      "first clean has nothing to wipe and takes none).")] = 2.0,
    reconcile_interval: Annotated[float, typer.Option(help="Seconds between reconciler passes.")] = 10.0,
    admin_password: Annotated[str | None, typer.Option(
        envvar="TETHER_ADMIN_PASSWORD", show_default=False,
        help="The admin user's password: set at the first start, and reset to this on a later one, as "
             "keystone-manage bootstrap does. [default: admin, on loopback]")] = None,
    demo_password: Annotated[str | None, typer.Option(
        envvar="TETHER_DEMO_PASSWORD", show_default=False,
        help="The demo user's, likewise. [default: demo, on loopback]")] = None,
    generate_passwords: Annotated[bool, typer.Option(
        "--generate-passwords", help="Give each seeded user still on its default password a strong random "
                                     "one, written only to the data dir's clouds.yaml (mode 0600).")] = False,
    insecure_default_passwords: Annotated[bool, typer.Option(
        "--insecure-default-passwords", help="Serve a non-loopback address with the default passwords anyway "
                                             "(refused without it: anyone reaching the port would be admin).")
    ] = False,
    tls_cert: Annotated[Path | None, typer.Option(
        "--tls-cert", help="Serve HTTPS with this PEM certificate (chain); the catalog and clouds.yaml then "
                           "say https, and clouds.yaml names it as cacert unless a public authority signed it.")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="The certificate's PEM private key.")] = None,
    lockout_failure_attempts: Annotated[int, typer.Option(
        "--lockout-failure-attempts", min=0,
        help="Wrong passwords in a row that lock a user out, as keystone's option of that name (0: never).")] = 6,
    lockout_duration: Annotated[int, typer.Option(
        "--lockout-duration", min=1, help="Seconds a locked-out user stays locked.")] = 300,
    token_expiration: Annotated[int, typer.Option(
        "--token-expiration", min=1, help="Seconds a token lives, as keystone's token expiration.")] = 3600,
    credential_cache_seconds: Annotated[float, typer.Option(
        "--credential-cache-seconds", min=0,
        help="Seconds a password (or application credential secret) that argon2 accepted is recognised "
             "again without hashing it, for services that log in per call (0: hash every login).")] = 60.0,
    log_level: Annotated[LogLevel | None, typer.Option(
        "--log-level", case_sensitive=False,
        help="What is logged: info adds a line per request and per instance or node state change. "
             "[default: info into --log-file, warning on the terminal]")] = None,
    log_file: Annotated[Path | None, typer.Option(
        "--log-file", help="Also log there (appended; reopened when logrotate moves it). The terminal "
                           "then shows only warnings.")] = None,
    debug: Annotated[bool, typer.Option("--debug", help="On a failure, print its traceback too.")] = False,
) -> None:
    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("--tls-cert and --tls-key go together: give both, or neither")
    if db is None and not DataDir(data_dir.expanduser()).database_file.exists():
        # A new cloud: its passwords are settled (or refused) before anything is made, and hashed early.
        from tether.exposure import seed_passwords
        from tether.services.identity.passwords import hash_early

        try:
            passwords = seed_passwords({"admin": admin_password, "demo": demo_password}, host,
                                       generate=generate_passwords, insecure=insecure_default_passwords)
        except Failure as failure:
            _refuse(failure)
        admin_password, demo_password = passwords["admin"], passwords["demo"]
        hash_early(*passwords.values())
    # pydantic looks for its plugins among the entry points of every installed distribution
    # when the first model is made (~30 ms of start-up); the server uses none. Whoever wants
    # one says so: PYDANTIC_DISABLE_PLUGINS="" (or a list of the ones to leave out).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from tether.runtime.bugs import Bugs, UnknownBug
    from tether.runtime.faults import FaultPlan, FaultRuleError
    from tether.server import ServeOptions, run

    try:
        FaultPlan.parse(fault or [])
        Bugs(emulate_bug or [])
    except (FaultRuleError, UnknownBug) as error:
        raise typer.BadParameter(str(error)) from None
    if db:
        from tether.store.database import DatabaseUrlError, async_url

        try:
            async_url(db)
        except DatabaseUrlError as error:
            raise typer.BadParameter(str(error)) from None
    from tether.domain.identity import Lockout
    from tether.tls import TlsFiles

    options = ServeOptions(host=host, port=port, data_dir=data_dir.expanduser(), db=db, faults=fault or [],
                           bugs=emulate_bug or [], deploy_seconds=deploy_seconds, clean_seconds=clean_seconds,
                           reconcile_interval=reconcile_interval,
                           admin_password=admin_password, demo_password=demo_password,
                           generate_passwords=generate_passwords,
                           insecure_default_passwords=insecure_default_passwords,
                           tls=TlsFiles(tls_cert.expanduser(), tls_key.expanduser()) if tls_cert and tls_key else None,
                           token_ttl=float(token_expiration), credential_cache_seconds=credential_cache_seconds,
                           lockout=Lockout(lockout_failure_attempts, float(lockout_duration)),
                           log=LogSettings(level=log_level.value if log_level else None,
                                           file=log_file.expanduser() if log_file else None))
    try:
        run(options)
    except Exception as error:
        _exit_with(error, options.opening, debug)


@app.command(help="Read the whole system and print every invariant violation; exit 3 if there is any. It "
                  "only reads: it runs beside the server, and on a read-only copy or a backup of its data "
                  "dir.\n\n" + exit_codes_help(CHECK_EXITS))
def check(
    data_dir: Annotated[Path, typer.Option("--data-dir", help="The cloud's data directory.")] = DEFAULT_DATA_DIR,
    db: Annotated[str | None, typer.Option("--db", help="Database URL (default: the data directory's SQLite).")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="On a failure, print its traceback too.")] = False,
) -> None:
    from tether.local_cloud import check_local_cloud
    from tether.store.database import DatabaseUrlError, async_url

    try:
        if db:
            async_url(db)
    except DatabaseUrlError as error:
        raise typer.BadParameter(str(error), param_hint="--db") from None
    try:
        violations = asyncio.run(check_local_cloud(data_dir, db))
    except Exception as error:
        from tether.failures import Opening

        _exit_with(error, Opening("tether check", data_dir, db or DataDir(data_dir).database_url), debug)
    if as_json:
        typer.echo(json.dumps({"violations": [v.as_dict() for v in violations]}, indent=2))
    elif not violations:
        _console().print("[green]no violations[/green]")
    else:
        from rich.text import Text

        console = _console()
        for violation in violations:
            resources = " ".join(f"{key}={value}" for key, value in violation.resources.items())
            # One line each, never wrapped or cut short: operators copy the ids from here.
            line = Text.assemble(("VIOLATION", "red"), f" {violation.invariant}: {violation.evidence} ({resources})")
            console.print(line, soft_wrap=True)
    raise typer.Exit(VIOLATIONS_FOUND if violations else 0)


OsCloud = Annotated[str | None, typer.Option("--os-cloud", envvar="OS_CLOUD", metavar="NAME", show_default=False,
                                             help="The cloud in clouds.yaml (default: the OS_* environment).")]
Only = Annotated[str | None, typer.Option("--only", metavar="ID,...", help="Only these invariants.")]
Project = Annotated[str | None, typer.Option("--project", metavar="P",
                                             help="Only findings that involve this project's servers or ports.")]
GuestInterfaces = Annotated[bool, typer.Option("--guest-interfaces", help="Also read each running VM's guest "
                                               "interfaces (server diagnostics: one call per VM).")]
Prometheus = Annotated[Path | None, typer.Option("--prometheus", metavar="FILE", help="Also write the findings by "
                                                 "invariant (and the actions taken) in Prometheus' text format, for "
                                                 "node_exporter's textfile collector.")]


def _ids(only: str | None) -> list[str] | None:
    return [name.strip() for name in only.split(",") if name.strip()] if only else None


@app.command(help="Find the seeds' leaks in any OpenStack cloud, through its public APIs (openstacksdk, "
                  "clouds.yaml or the OS_* environment). It only reads.\n\n" + exit_codes_help(AUDIT_EXITS))
def audit(
    ctx: typer.Context,
    os_cloud: OsCloud = None,
    only: Only = None,
    project: Project = None,
    form: Annotated[str, typer.Option("--format", help="table, json, markdown or html (one self-contained "
                                      "file).")] = "table",
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write the report there.")] = None,
    guest_interfaces: GuestInterfaces = False,
    prometheus: Prometheus = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", metavar="DIR", show_default=False,
                                                  help="Read a Tether store directly (read-only; beside its "
                                                       "server too) instead of a cloud's APIs.")] = None,
    db: Annotated[str | None, typer.Option("--db", metavar="URL", help="With --data-dir: the store's database "
                                           "URL (default: the data dir's SQLite).")] = None,
) -> None:
    from tether.audit.command import AuditRequest, run_audit
    from tether.audit.report import ReportFormat

    try:
        chosen_form = ReportFormat(form)
    except ValueError:
        raise typer.BadParameter(f"{form!r}: choose {', '.join(ReportFormat)}", param_hint="--format") from None
    store = data_dir is not None or db is not None
    # OS_CLOUD in the environment is no choice of the user's here: only an explicit --os-cloud clashes.
    source = ctx.get_parameter_source("os_cloud")
    if store and source is not None and source.name == "COMMANDLINE":
        raise typer.BadParameter("a cloud's APIs or a Tether store: not both", param_hint="--os-cloud / --data-dir")
    request = AuditRequest(cloud=None if store else os_cloud, only=_ids(only), project=project, form=chosen_form,
                           output=output.expanduser() if output else None, guest_interfaces=guest_interfaces,
                           data_dir=data_dir.expanduser() if data_dir else None, db=db,
                           prometheus=prometheus.expanduser() if prometheus else None)
    try:
        code = run_audit(request, _console(stderr=True), lambda text: typer.echo(text, nl=False))
    except Failure as failure:
        _refuse(failure)
    raise typer.Exit(int(code))


@app.command(help="The audit's analysis, then each finding's repair through the public API, as a person "
                  "would make it. A dry run unless --apply. Gates: --older-than, tasks in flight, a live "
                  "re-read right before each action (act only if the finding still holds), --max-actions; "
                  "each action is journalled before it is taken.\n\n" + exit_codes_help(REPAIR_EXITS))
def repair(
    os_cloud: OsCloud = None,
    only: Only = None,
    project: Project = None,
    apply: Annotated[bool, typer.Option("--apply", help="Act (without it: say what would be done).")] = False,
    older_than: Annotated[str, typer.Option("--older-than", metavar="AGE", help="Act only on findings whose "
                                            "resources have not changed for this long (30s, 10m, 2h; 0: any).")
                          ] = "10m",
    include_in_flight: Annotated[bool, typer.Option("--include-in-flight", help="Act even where a task is in "
                                                    "flight on a resource involved.")] = False,
    max_actions: Annotated[int, typer.Option("--max-actions", min=0, help="Abort, doing nothing, when more "
                                             "actions are planned.")] = 50,
    force: Annotated[bool, typer.Option("--force", help="Act even above --max-actions.")] = False,
    journal: Annotated[Path, typer.Option("--journal", metavar="FILE", help="Where each action is "
                                          "journalled (JSON lines, appended).")] = Path("tether-repair.jsonl"),
    confirm: Annotated[bool, typer.Option("--confirm", help="Ask before each action.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    output: Annotated[Path | None, typer.Option("--output", metavar="FILE", help="Write the report there.")] = None,
    guest_interfaces: GuestInterfaces = False,
    prometheus: Prometheus = None,
) -> None:
    from tether.audit.command import AuditRequest
    from tether.audit.gates import Gates
    from tether.audit.repair import RepairRequest, run_repair

    try:
        age = _seconds(older_than)
    except ValueError:
        raise typer.BadParameter(f"{older_than!r}: a number of seconds, or 30s, 10m, 2h, 1d",
                                 param_hint="--older-than") from None
    ask = None
    if confirm:
        def ask(finding):  # type: ignore[no-untyped-def]
            return typer.confirm(f"{finding.invariant}: {finding.evidence}\n  {finding.repair.command}?",
                                 default=False, err=True)
    request = RepairRequest(
        audit=AuditRequest(cloud=os_cloud, only=_ids(only), project=project,
                           output=output.expanduser() if output else None, guest_interfaces=guest_interfaces,
                           prometheus=prometheus.expanduser() if prometheus else None),
        gates=Gates(older_than=age, skip_in_flight=not include_in_flight, max_actions=max_actions, force=force),
        apply=apply, journal=journal.expanduser(), confirm=ask)
    try:
        code = run_repair(request, _console(stderr=True), lambda text: typer.echo(text, nl=False), as_json)
    except Failure as failure:
        _refuse(failure)
    raise typer.Exit(int(code))


def _seconds(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


def _exit_with(error: Exception, opening: Opening, debug: bool) -> NoReturn:
    """A failure in a line (or two), its traceback only with --debug, and the exit code that names it."""
    import traceback

    from tether.failures import explain

    if debug:
        traceback.print_exception(error)
    _refuse(error if isinstance(error, Failure) else explain(error, opening))


def _refuse(failure: Failure) -> NoReturn:
    from rich.markup import escape

    _console(stderr=True).print(f"[red]error:[/red] {escape(str(failure))}", soft_wrap=True)
    raise typer.Exit(int(failure.code))


def _store_errors() -> tuple[type[BaseException], ...]:
    """What reaching a database can raise: each is reported in a line, never as a traceback."""
    import asyncpg
    from sqlalchemy.exc import SQLAlchemyError

    from tether.store.schema_revision import SchemaError

    return (OSError, SQLAlchemyError, asyncpg.PostgresError, SchemaError)


def _fail(error: BaseException) -> NoReturn:
    from rich.markup import escape

    _console(stderr=True).print(f"[red]error:[/red] {escape(str(error))}", soft_wrap=True)
    raise typer.Exit(2) from None


if __name__ == "__main__":
    app()
