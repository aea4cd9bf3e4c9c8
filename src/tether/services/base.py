"""What every service holds: its incarnation's store and runtime, and a seeded RNG."""

from __future__ import annotations

import random

from tether.runtime.runtime import Runtime
from tether.store.database import Store


class Service:
    def __init__(self, store: Store, runtime: Runtime, rng: random.Random) -> None:
        self.store = store
        self.rt = runtime
        self.rng = rng

    def now(self) -> float:
        return self.rt.now()
