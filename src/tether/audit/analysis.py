"""The design's invariants over a collected snapshot: the same functions the tests and the explorer use.

Only what the sources allow is concluded: an invariant whose source failed is not evaluated (and
the report says why), and a virtual machine whose guest interfaces were not read is not judged on
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.audit.findings import Finding, finding_of
from tether.audit.sources import NEEDS, Collection
from tether.domain.invariants import INVARIANTS, Snapshot, Violation


class UnknownInvariant(ValueError):
    pass


@dataclass
class Analysis:
    collection: Collection
    findings: list[Finding] = field(default_factory=list)
    # Invariant id -> why it was not evaluated.
    not_evaluated: dict[str, str] = field(default_factory=dict)
    evaluated: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.not_evaluated and not self.collection.failed()

    def by_invariant(self) -> dict[str, int]:
        counts = dict.fromkeys(self.evaluated, 0)
        for finding in self.findings:
            counts[finding.invariant] = counts.get(finding.invariant, 0) + 1
        return counts

    def as_dict(self) -> dict[str, Any]:
        return {
            "cloud": self.collection.cloud,
            "sources": [source.as_dict() for source in self.collection.sources],
            "api_calls": self.collection.calls,
            "evaluated": list(self.evaluated),
            "not_evaluated": dict(self.not_evaluated),
            "summary": self.by_invariant(),
            "findings": [finding.as_dict() for finding in self.findings],
        }


def chosen(only: list[str] | None) -> list[str]:
    ids = only or list(INVARIANTS)
    unknown = [name for name in ids if name not in INVARIANTS]
    if unknown:
        raise UnknownInvariant(f"unknown invariant {', '.join(unknown)}: choose from {', '.join(INVARIANTS)}")
    return ids


def violations(collection: Collection, invariant: str) -> list[Violation]:
    found = INVARIANTS[invariant](collection.snapshot)
    if invariant == "zombie-interface" and collection.guests_read is not None:
        found = [v for v in found if _guest_judged(v, collection)]
    return found


def _guest_judged(violation: Violation, collection: Collection) -> bool:
    """A VM's guest interfaces count only if they were read: none read is not "none plugged"."""
    instance = next((i for i in collection.snapshot.instances if i.uuid == violation.resources.get("instance")),
                    None)
    if instance is not None and instance.is_baremetal:
        return True
    return violation.resources.get("instance") in (collection.guests_read or set())


def analyse(collection: Collection, only: list[str] | None = None, project: str | None = None) -> Analysis:
    analysis = Analysis(collection)
    failed = collection.failed()
    for invariant in chosen(only):
        missing = sorted(NEEDS.get(invariant, frozenset()) & failed)
        if missing:
            analysis.not_evaluated[invariant] = f"{', '.join(missing)} failed"
            continue
        analysis.evaluated.append(invariant)
        for violation in violations(collection, invariant):
            if project is None or _touches(violation, collection.snapshot, project):
                analysis.findings.append(finding_of(violation, collection.snapshot))
    return analysis


def _touches(violation: Violation, snap: Snapshot, project: str) -> bool:
    """Whether a violation involves one of the project's servers or ports."""
    ids = set(violation.resources.values()) | set(violation.resources.get("ports", "").split(","))
    return any(i.uuid in ids and i.project_id == project for i in snap.instances) or any(
        p.id in ids and p.project_id == project for p in snap.ports)
