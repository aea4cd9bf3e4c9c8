"""An audit's findings and a repair's actions in Prometheus' text format, for node_exporter's textfile
collector: each run replaces the file (written aside, then renamed), so the collector never reads half.

Gauges, not counters: the file is the state of the last run, not a running total across runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

from tether.audit.analysis import Analysis

PREFIX = "tether_audit"


@dataclass(frozen=True)
class RepairTally:
    """What a repair run did: findings by (repair action, outcome), and how the run went."""

    actions: dict[tuple[str, str], int]
    applied: bool
    aborted: bool


def _analysis_metrics(registry: CollectorRegistry, analysis: Analysis) -> None:
    cloud = analysis.collection.cloud or ""
    findings = Gauge(f"{PREFIX}_findings", "Findings of the last audit, by invariant (only invariants evaluated).",
                     ["cloud", "invariant"], registry=registry)
    for invariant, count in analysis.by_invariant().items():
        findings.labels(cloud, invariant).set(count)
    evaluated = Gauge(f"{PREFIX}_invariant_evaluated", "1 if the invariant was evaluated, 0 if a source it "
                      "needs failed.", ["cloud", "invariant"], registry=registry)
    for invariant in analysis.evaluated:
        evaluated.labels(cloud, invariant).set(1)
    for invariant in analysis.not_evaluated:
        evaluated.labels(cloud, invariant).set(0)
    up = Gauge(f"{PREFIX}_source_up", "1 if the source answered completely, 0 if it failed.", ["cloud", "source"],
               registry=registry)
    for source in analysis.collection.sources:
        up.labels(cloud, source.name).set(1 if source.ok else 0)
    Gauge(f"{PREFIX}_api_calls", "API calls the last audit made.", ["cloud"],
          registry=registry).labels(cloud).set(analysis.collection.calls)
    Gauge(f"{PREFIX}_last_run_timestamp_seconds", "When the last audit read the cloud.", ["cloud"],
          registry=registry).labels(cloud).set(analysis.collection.snapshot.now)


def write_metrics(path: Path, analysis: Analysis, tally: RepairTally | None = None) -> None:
    """The audit's metrics, and with a repair run's tally the actions it took, by action and outcome."""
    registry = CollectorRegistry()
    _analysis_metrics(registry, analysis)
    if tally is not None:
        cloud = analysis.collection.cloud or ""
        actions = Gauge("tether_repair_actions", "Findings of the last repair run by repair action and outcome "
                        "(repaired, would repair, skipped, held back, failed, declined).",
                        ["cloud", "action", "outcome"], registry=registry)
        for (action, outcome), count in tally.actions.items():
            actions.labels(cloud, action, outcome).set(count)
        Gauge("tether_repair_applied", "1 if the last repair run was --apply, 0 for a dry run.", ["cloud"],
              registry=registry).labels(cloud).set(1 if tally.applied else 0)
        Gauge("tether_repair_aborted", "1 if the last repair run was aborted before acting (--max-actions).",
              ["cloud"], registry=registry).labels(cloud).set(1 if tally.aborted else 0)
    write_to_textfile(str(path), registry)
