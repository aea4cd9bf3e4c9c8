"""`tether audit`: collect, analyse, report, and the exit code that says how it went."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.audit.analysis import Analysis, analyse
from tether.audit.report import ReportFormat, render
from tether.exits import ExitCode, Failure

if TYPE_CHECKING:
    from tether.audit.metrics import RepairTally
    from tether.audit.sources import Collection

SOURCE_STEPS = 6  # servers, ports, nodes, NICs, portgroups, diagnostics


@dataclass(frozen=True)
class AuditRequest:
    cloud: str | None = None
    only: list[str] | None = None
    project: str | None = None
    form: ReportFormat = ReportFormat.table
    output: Path | None = None
    guest_interfaces: bool = False
    # A Tether store read directly (its data dir, or its database URL) instead of a cloud's APIs.
    data_dir: Path | None = None
    db: str | None = None
    prometheus: Path | None = None


@contextmanager
def progress_bar(console: Any) -> Iterator[Callable[[str], None]]:
    """A bar on standard error while the sources are read (rich draws nothing where it is no terminal)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("reading {task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("the cloud", total=SOURCE_STEPS)

        def step(name: str) -> None:
            bar.update(task, description=name, advance=1)

        yield step


def collect_and_analyse(request: AuditRequest, console: Any) -> tuple[Any, Analysis]:
    """The connection and the analysis; a cloud that cannot be reached at all is a Failure."""
    from keystoneauth1 import exceptions as auth_errors
    from openstack import exceptions as sdk_errors

    from tether.audit.analysis import UnknownInvariant, chosen
    from tether.audit.cloud_collector import collect, connect

    try:
        chosen(request.only)
    except UnknownInvariant as error:
        raise Failure(ExitCode.USAGE, str(error)) from None
    if request.data_dir is not None or request.db is not None:
        return None, analyse(collect_store(request), request.only, request.project)
    try:
        conn = connect(request.cloud)
        conn.authorize()
    except (sdk_errors.SDKException, auth_errors.ClientException, OSError) as error:
        where = f"cloud {request.cloud}" if request.cloud else "the cloud of the OS_* environment"
        raise Failure(ExitCode.ERROR, f"cannot reach {where}: {error}") from None
    with progress_bar(console) as step:
        collection = collect(conn, guest_interfaces=request.guest_interfaces, progress=step)
    return conn, analyse(collection, request.only, request.project)


def collect_store(request: AuditRequest) -> Collection:
    """A Tether store read as it is, database and hardware, read-only: it may run beside its server.

    It knows what the public APIs do not (who created each port, the stacks' ports, every guest
    interface, the deadlines), so nothing there is left unjudged.
    """
    import asyncio

    from tether.audit.sources import STORE, Collection, SourceReport
    from tether.config import DEFAULT_DATA_DIR
    from tether.local_cloud import read_local_cloud

    data_dir = request.data_dir or DEFAULT_DATA_DIR
    try:
        snapshot = asyncio.run(read_local_cloud(data_dir, request.db, reader="tether audit"))
    except Failure as failure:
        # The audit's codes are nova-manage's: whatever kept the store from being read is an error.
        raise Failure(ExitCode.ERROR, str(failure)) from None
    items = len(snapshot.instances) + len(snapshot.ports) + len(snapshot.nodes) + len(snapshot.node_ports)
    return Collection(snapshot, [SourceReport(STORE, items=items)], guests_read=None,
                      cloud=str(data_dir) if request.db is None else _without_password(request.db))


def _without_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def outcome(analysis: Analysis) -> ExitCode:
    if analysis.findings:
        return ExitCode.VIOLATIONS
    return ExitCode.OK if analysis.complete else ExitCode.ERROR


def write(text: str, output: Path | None, echo: Callable[[str], None]) -> None:
    if output is None:
        echo(text)
        return
    try:
        output.write_text(text)
    except OSError as error:
        raise Failure(ExitCode.ERROR, f"cannot write {output}: {error.strerror or error}") from None


def write_prometheus(path: Path, analysis: Analysis, tally: RepairTally | None = None) -> None:
    from tether.audit.metrics import write_metrics

    try:
        write_metrics(path, analysis, tally)
    except OSError as error:
        raise Failure(ExitCode.ERROR, f"cannot write {path}: {error.strerror or error}") from None


def run_audit(request: AuditRequest, console: Any, echo: Callable[[str], None]) -> ExitCode:
    _conn, analysis = collect_and_analyse(request, console)
    write(render(analysis, request.form), request.output, echo)
    if request.prometheus is not None:
        write_prometheus(request.prometheus, analysis)
    return outcome(analysis)
