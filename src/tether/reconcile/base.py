"""What a reconciler is: one invariant, the kinds of key it looks at, and how it mends one violation."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from tether.domain.invariants import INVARIANTS, Snapshot, Violation
from tether.reconcile.queue import Key

if TYPE_CHECKING:
    from tether.cloud import Cloud


class Reconciler(ABC):
    invariant: ClassVar[str]
    kinds: ClassVar[tuple[str, ...]]

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    def enabled(self) -> bool:
        # An emulated upstream bug silences the reconciler that would hide its symptom.
        return self.invariant not in self.cloud.emulation.silenced

    def violations(self, snapshot: Snapshot, key: Key) -> list[Violation]:
        """The invariant's violations in ``snapshot`` that concern ``key``."""
        return [violation for violation in INVARIANTS[self.invariant](snapshot)
                if violation.resources.get(key.kind) == key.id]

    def next_look(self, snapshot: Snapshot, key: Key) -> float | None:
        """Seconds until the key may need this reconciler again with nothing else changing (a deadline)."""
        return None

    @abstractmethod
    async def mend(self, violation: Violation) -> bool:
        """Re-read the truth for one violation and mend it; True when something changed."""
