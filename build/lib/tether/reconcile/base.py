"""What a reconciler is."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from tether.domain.invariants import INVARIANTS, Snapshot, Violation

if TYPE_CHECKING:
    from tether.services.cloud import Cloud


class Reconciler(ABC):
    invariant: ClassVar[str]
    # Emulated upstream bugs whose symptom this reconciler would hide: it stands down for them.
    hidden_by: ClassVar[tuple[str, ...]] = ()

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    def enabled(self) -> bool:
        return not any(bug in self.cloud.rt.bugs for bug in self.hidden_by)

    def violations(self, snapshot: Snapshot) -> list[Violation]:
        return INVARIANTS[self.invariant](snapshot)

    @abstractmethod
    async def mend(self, violation: Violation) -> bool:
        """Re-read the truth for one violation and mend it; True when something changed."""
