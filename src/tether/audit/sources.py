"""What each source of a collection answered: complete, or failed and why.

Nothing is concluded "absent" from a source that failed: an invariant that needs it is not
evaluated, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.invariants import Snapshot

SERVERS = "compute servers"
PORTS = "network ports"
NODES = "baremetal nodes"
NICS = "baremetal ports"
PORTGROUPS = "baremetal portgroups"
GUESTS = "compute diagnostics"
STORE = "tether store"

# What each invariant reads. The guest interfaces are needed only for virtual machines' own
# conclusions; see analysis.drop_unread_guests.
NEEDS: dict[str, frozenset[str]] = {
    "stale-vif": frozenset({SERVERS, PORTS, NODES, NICS, PORTGROUPS}),
    "orphan-port": frozenset({SERVERS, PORTS}),
    "mac-conflict": frozenset({PORTS, NICS}),
    "stuck-transient": frozenset({SERVERS, NODES}),
    "zombie-interface": frozenset({SERVERS, PORTS, NODES, NICS, PORTGROUPS}),
    "association": frozenset({SERVERS, NODES}),
    "ip-allocation": frozenset({PORTS}),
}


@dataclass
class SourceReport:
    name: str
    items: int = 0
    calls: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "items": self.items, "calls": self.calls, "error": self.error}


@dataclass
class Collection:
    snapshot: Snapshot
    sources: list[SourceReport] = field(default_factory=list)
    # The instances whose guest interfaces were read; None when every one was (the Tether store).
    guests_read: set[str] | None = None
    # Which cloud it describes, for the report.
    cloud: str = ""

    def failed(self) -> set[str]:
        return {source.name for source in self.sources if not source.ok}

    @property
    def calls(self) -> int:
        return sum(source.calls for source in self.sources)
