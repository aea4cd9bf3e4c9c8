"""Reconciling one key: read the truth around it, let each reconciler of its kind mend what it finds.

After controller-runtime: an event or a resync only says which key to look
at; what to do is decided from what is true now. A reconciler that mended
something is followed by a fresh read, so the next one decides on the truth
as it has become.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.domain.invariants import Violation
from tether.reconcile.base import Reconciler
from tether.reconcile.instances import ZombieInterfaces
from tether.reconcile.nodes import Associations, StaleVifs
from tether.reconcile.ports import NicMacs, OrphanPorts
from tether.reconcile.queue import Key
from tether.reconcile.scope import snapshot_around
from tether.reconcile.transients import StuckTransients

if TYPE_CHECKING:
    from tether.cloud import Cloud

# Ownership first (who runs where), then what hangs off it.
RECONCILERS: tuple[type[Reconciler], ...] = (
    StuckTransients, Associations, StaleVifs, ZombieInterfaces, OrphanPorts, NicMacs,
)


@dataclass
class Outcome:
    mended: list[Violation] = field(default_factory=list)
    # Still wrong after the mend was tried (a busy node, say): look again, backing off.
    unsettled: list[Violation] = field(default_factory=list)
    # Nothing wrong now, but a deadline falls in this many seconds.
    requeue_after: float | None = None


class Controller:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud
        self.reconcilers = [kind(cloud) for kind in RECONCILERS]

    def keys_of(self, violation: Violation) -> list[Key]:
        """The keys whose reconciliation mends ``violation``."""
        return [Key(kind, violation.resources[kind])
                for kind in ("instance", "node", "port") if violation.resources.get(kind)
                if any(kind in r.kinds and r.invariant == violation.invariant for r in self.reconcilers)]

    async def reconcile(self, key: Key) -> Outcome:
        outcome = Outcome()
        snapshot = await snapshot_around(self.cloud, key)
        for reconciler in self.reconcilers:
            if key.kind not in reconciler.kinds or not reconciler.enabled():
                continue
            for violation in reconciler.violations(snapshot, key):
                if await reconciler.mend(violation):
                    self.cloud.rt.note(f"reconciler mended {violation.invariant}: {violation.evidence}")
                    outcome.mended.append(violation)
                else:
                    outcome.unsettled.append(violation)
            if outcome.mended:
                snapshot = await snapshot_around(self.cloud, key)
        looks = [wait for reconciler in self.reconcilers if key.kind in reconciler.kinds and reconciler.enabled()
                 for wait in [reconciler.next_look(snapshot, key)] if wait is not None]
        outcome.requeue_after = min(looks) if looks else None
        return outcome
