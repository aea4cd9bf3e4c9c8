"""An analysis as a terminal table, JSON for machines (a versioned schema), Markdown for a ticket or HTML
to share (html_report)."""

from __future__ import annotations

import json
from enum import StrEnum
from io import StringIO

from tether.audit.analysis import Analysis
from tether.audit.findings import Finding, age_text

# Bumped when a field changes meaning or goes away; new fields may appear within a version.
SCHEMA = "tether-audit/1"


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


def render(analysis: Analysis, form: ReportFormat, *, width: int | None = None) -> str:
    if form is ReportFormat.json:
        return json.dumps({"schema": SCHEMA, **analysis.as_dict()}, indent=2) + "\n"
    if form is ReportFormat.markdown:
        return markdown(analysis)
    if form is ReportFormat.html:
        from tether.audit.html_report import render_html

        return render_html(analysis, schema=SCHEMA)
    return table(analysis, width=width)


def _resources(finding: Finding) -> str:
    return " ".join(f"{key}={value}" for key, value in finding.resources.items())


def _caveats(analysis: Analysis) -> list[str]:
    lines = [f"source {s.name} failed: {s.error}" for s in analysis.collection.sources if not s.ok]
    lines += [f"not evaluated: {name} ({why})" for name, why in analysis.not_evaluated.items()]
    return lines


def table(analysis: Analysis, *, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table

    out = StringIO()
    console = Console(file=out, width=width or 200, force_terminal=False, color_system=None)
    if analysis.findings:
        grid = Table(show_lines=False)
        grid.add_column("invariant", no_wrap=True)
        grid.add_column("age", no_wrap=True, justify="right")
        # Ids are what operators copy: folded, never cut short.
        grid.add_column("resources", overflow="fold")
        grid.add_column("evidence", overflow="fold")
        grid.add_column("repair", overflow="fold")
        for finding in analysis.findings:
            grid.add_row(finding.invariant, age_text(finding.age), _resources(finding), finding.evidence,
                         finding.repair.command or finding.repair.action)
        console.print(grid)
    counts = ", ".join(f"{name} {count}" for name, count in analysis.by_invariant().items())
    console.print(f"{len(analysis.findings)} findings ({counts}); {analysis.collection.calls} API calls",
                  soft_wrap=True)
    for line in _caveats(analysis):
        console.print(f"WARNING {line}", soft_wrap=True)
    return out.getvalue()


def markdown(analysis: Analysis) -> str:
    lines = [f"# Tether audit of `{analysis.collection.cloud or 'cloud'}`", "",
             "| invariant | findings |", "| --- | ---: |"]
    lines += [f"| {name} | {count} |" for name, count in analysis.by_invariant().items()]
    lines.append("")
    for caveat in _caveats(analysis):
        lines.append(f"> **Warning:** {caveat}")
    if analysis.findings:
        lines += ["", "| invariant | age | resources | evidence | repair |", "| --- | --- | --- | --- | --- |"]
        for f in analysis.findings:
            cells = [f.invariant, age_text(f.age), _resources(f), f.evidence, f"`{f.repair.command}`"
                     if f.repair.command else f.repair.action]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    else:
        lines += ["", "No findings."]
    return "\n".join(lines) + "\n"
