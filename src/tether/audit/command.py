"""`tether audit`: collect, analyse, report, and the exit code that says how it went."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.audit.analysis import Analysis, analyse
from tether.audit.report import ReportFormat, render
from tether.exits import ExitCode, Failure

SOURCE_STEPS = 6  # servers, ports, nodes, NICs, portgroups, diagnostics


@dataclass(frozen=True)
class AuditRequest:
    cloud: str | None = None
    only: list[str] | None = None
    project: str | None = None
    form: ReportFormat = ReportFormat.table
    output: Path | None = None
    guest_interfaces: bool = False


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
    try:
        conn = connect(request.cloud)
        conn.authorize()
    except (sdk_errors.SDKException, auth_errors.ClientException, OSError) as error:
        where = f"cloud {request.cloud}" if request.cloud else "the cloud of the OS_* environment"
        raise Failure(ExitCode.ERROR, f"cannot reach {where}: {error}") from None
    with progress_bar(console) as step:
        collection = collect(conn, guest_interfaces=request.guest_interfaces, progress=step)
    return conn, analyse(collection, request.only, request.project)


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


def run_audit(request: AuditRequest, console: Any, echo: Callable[[str], None]) -> ExitCode:
    _conn, analysis = collect_and_analyse(request, console)
    write(render(analysis, request.form), request.output, echo)
    return outcome(analysis)
