"""What a reconciler is."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from tether.domain.invariants import INVARIANTS, Snapshot, Violation

if TYPE_CHECKING:
    from tether.cloud import Cloud


class Reconciler(ABC):
    invariant: ClassVar[str]

    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    def enabled(self) -> bool:
        # An emulated upstream bug silences the reconciler that would hide its symptom.
        return self.invariant not in self.cloud.emulation.silenced

    def violations(self, snapshot: Snapshot) -> list[Violation]:
        return INVARIANTS[self.invariant](snapshot)

    @abstractmethod
    async def mend(self, violation: Violation) -> bool:
        """Re-read the truth for one violation and mend it; True when something changed."""
