"""What one step touched, and whether two steps commute.

A step is one actor's run from one scheduling point to the next. Two steps
of different actors are *independent* when running them in either order
leaves the same state and each behaves the same: neither writes what the
other reads or writes. The explorer's reduction rests on this relation, so it
errs on the side of dependence: whatever it cannot pin down to a row or a
key counts as touching the whole table or space.

Resources come in two kinds:

- keyed resources (``space``, ``key``): a lock slot, a node's hardware, an
  instance's guest devices, a name in the scenario's bookkeeping, a signal;
  ``key`` is ``ANY`` for an access to the whole space (listing every guest);
- database rows: a read is a table and an equality predicate (``None`` for
  the whole table); a write is the images of the rows it changed, before and
  after, and the keys (primary and unique) they occupy.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

READ, WRITE = "r", "w"
# Waiting for a signal and sending it do not commute (the wait may miss it);
# two sends, or two waits, do.
WAIT, NOTIFY = "wait", "notify"
ANY = "*"


Predicate = tuple[tuple[str, frozenset[Any]], ...]  # column -> accepted values, all must hold


def _modes_conflict(first: str, second: str) -> bool:
    if {first, second} == {WAIT, NOTIFY}:
        return True
    return WRITE in (first, second) and first not in (WAIT, NOTIFY) and second not in (WAIT, NOTIFY)


@dataclass
class TableAccess:
    reads: list[Predicate | None] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    keys: set[tuple[Any, ...]] = field(default_factory=set)
    # what a merged footprint already holds (reads, and images by identity), so merging stays linear
    merged: set[Any] | None = field(default=None, repr=False, compare=False)

    @property
    def writes(self) -> bool:
        return bool(self.images or self.keys)


@dataclass
class Footprint:
    """Every resource one step touched, with how."""

    keyed: dict[str, dict[Hashable, set[str]]] = field(default_factory=dict)
    tables: dict[str, TableAccess] = field(default_factory=dict)
    opaque: bool = False  # it did something the recorder cannot pin down: dependent on every step
    guard: Hashable | None = None  # the signal a memoryless loop's wait ended the step on

    # -- recording -----------------------------------------------------------------

    def touch(self, space: str, key: Hashable, mode: str) -> None:
        self.keyed.setdefault(space, {}).setdefault(key, set()).add(mode)

    def read_rows(self, table: str, predicate: Predicate | None) -> None:
        self._table(table).reads.append(predicate)

    def write_rows(self, table: str, images: Iterable[dict[str, Any]], keys: Iterable[tuple[Any, ...]]) -> None:
        access = self._table(table)
        access.images.extend(images)
        access.keys.update(keys)

    def absorb(self, other: Footprint) -> None:
        """Add what ``other`` touched: one footprint for several steps (each of their accesses)."""
        self.opaque = self.opaque or other.opaque
        for space, keys in other.keyed.items():
            mine = self.keyed.setdefault(space, {})
            for key, modes in keys.items():
                mine.setdefault(key, set()).update(modes)
        for table, access in other.tables.items():
            into = self._table(table)
            if into.merged is None:  # this footprint becomes a merge: index what it holds once
                into.merged = {*into.reads, *map(id, into.images)}
            for read in access.reads:
                if read not in into.merged:
                    into.merged.add(read)
                    into.reads.append(read)
            # An image is one step's row, kept alive by the merge: the same step's image comes
            # up again at every level of the tree, so its identity is enough to skip it.
            for image in access.images:
                if id(image) not in into.merged:
                    into.merged.add(id(image))
                    into.images.append(image)
            into.keys |= access.keys

    def _table(self, table: str) -> TableAccess:
        access = self.tables.get(table)
        if access is None:
            access = self.tables[table] = TableAccess()
        return access

    # -- judging -------------------------------------------------------------------

    @property
    def durable(self) -> bool:
        """Whether the step wrote to the store or the hardware: what a crash keeps."""
        if self.opaque or any(access.writes for access in self.tables.values()):
            return True
        return any(WRITE in modes for space in ("hv", "hw") for modes in self.keyed.get(space, {}).values())

    @property
    def stutter(self) -> Hashable | None:
        """The signal this step waits on, if it was a turn of a memoryless loop that changed nothing.

        Such a turn only read and went back to waiting: leaving it out of a
        schedule leaves every state and every other step as they were.
        """
        if self.guard is None or self.opaque or any(access.writes for access in self.tables.values()):
            return None
        if any(WRITE in modes or NOTIFY in modes for keys in self.keyed.values() for modes in keys.values()):
            return None
        return self.guard

    def notifies(self, key: Hashable) -> bool:
        return NOTIFY in self.keyed.get("signal", {}).get(key, ())

    def summary(self) -> list[str]:
        """A short, stable description of the resources, for reports and tests."""
        out = []
        for space, keys in sorted(self.keyed.items()):
            for key, modes in sorted(keys.items(), key=lambda item: repr(item[0])):
                out.append(f"{space}:{key}:{''.join(sorted(modes))}")
        for table, access in sorted(self.tables.items()):
            out.append(f"{table}:{'w' if access.writes else 'r'}")
        return out


def independent(first: Footprint, second: Footprint) -> bool:
    """Whether the two steps commute: no resource one writes is read or written by the other."""
    if first.opaque or second.opaque:
        return False
    for space in first.keyed.keys() & second.keyed.keys():
        if _keyed_conflict(first.keyed[space], second.keyed[space]):
            return False
    for table in first.tables.keys() & second.tables.keys():
        if _table_conflict(first.tables[table], second.tables[table]):
            return False
    return True


def _keyed_conflict(first: dict[Hashable, set[str]], second: dict[Hashable, set[str]]) -> bool:
    for key, modes in first.items():
        if key == ANY:
            others = [m for other_modes in second.values() for m in other_modes]
        else:
            others = [*second.get(key, ()), *second.get(ANY, ())]
        if any(_modes_conflict(mode, other) for mode in modes for other in others):
            return True
    return False


def _table_conflict(first: TableAccess, second: TableAccess) -> bool:
    if first.keys & second.keys:
        return True
    return _writes_meet_reads(first, second) or _writes_meet_reads(second, first)


def _writes_meet_reads(writer: TableAccess, reader: TableAccess) -> bool:
    if not writer.writes or not reader.reads:
        return False
    if not writer.images:  # a write whose rows are unknown touches the whole table
        return True
    return any(matches(predicate, image) for predicate in reader.reads for image in writer.images)


def matches(predicate: Predicate | None, image: dict[str, Any]) -> bool:
    """Whether a row image could satisfy a read's predicate."""
    if predicate is None:
        return True
    # a column the image lacks could hold anything, unless nothing is accepted (``1 = 0``)
    return all(image[column] in accepted if column in image else bool(accepted) for column, accepted in predicate)
