"""Wall-clock and virtual time.

Services read time only through a clock, so the explorer and the scenario
library can run hours of deploy and clean timeouts in milliseconds.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (virtual or real)."""


class RealClock:
    def now(self) -> float:
        return time.time()


class VirtualClock:
    """Time that moves only when the scheduler advances it."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, moment: float) -> None:
        if moment > self._now:
            self._now = moment
