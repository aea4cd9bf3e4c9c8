"""The aggregates that make availability zones, as the scheduler reads them at every boot.

Nova keeps its hosts' zones in a cache that an aggregate's change resets; Tether
keeps the aggregates themselves, read once and again after any change. One
``tether serve`` owns its store, so its own aggregate calls are every change
there is: each tells this map once it has committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.store import repos

if TYPE_CHECKING:
    from tether.domain.aggregates import Aggregate
    from tether.store.database import StoreConnection


class ZoneMap:
    def __init__(self) -> None:
        self._aggregates: list[Aggregate] | None = None
        self._changes = 0

    async def aggregates(self, conn: StoreConnection) -> list[Aggregate]:
        """Every aggregate (read-only: shared by every caller until the next change)."""
        if self._aggregates is not None:
            return self._aggregates
        changes = self._changes
        found = await repos.aggregates.find(conn)
        if changes == self._changes:  # a change committed while this read ran may not be in it
            self._aggregates = found
        return found

    def changed(self) -> None:
        self._aggregates = None
        self._changes += 1
