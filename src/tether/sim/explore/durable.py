"""What survives a crash, captured and put back: the store, the hypervisor, the hardware, the time.

Seeding a demo cloud and running a scenario's preparation takes far longer
than one schedule, so the explorer does it once and starts every schedule
from a copy. The same capture, taken between two steps of a schedule, is
what a crash at that point leaves behind for recovery.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from functools import cache
from typing import Any

from tether.cloud import World
from tether.domain.replies import Event
from tether.sim.explore.recording import RANDOM_COLUMNS, REQUEST_ID, RecordingHardware, RecordingHypervisor
from tether.store.database import Database


def _sqlite3(database: Database) -> sqlite3.Connection:
    """The one sqlite3 connection the store holds for its whole life (see ``store.database``)."""
    if not database.is_sqlite:
        raise ValueError("the explorer snapshots SQLite stores only")
    return database._sqlite_connection().connection.driver_connection  # type: ignore[return-value]


@dataclass(frozen=True)
class DurableState:
    store: bytes
    guests: Any
    machines: Any
    now: float
    # What users had asked to delete by then: a crash loses none of the requests they made.
    requested: frozenset[str] = frozenset()
    # What users had been told by then: recovery must keep each promise a reply made before the crash.
    history: tuple[Event, ...] = ()


def capture(world: World, now: float) -> DurableState:
    connection = _sqlite3(world.database)
    if connection.in_transaction:
        raise RuntimeError("a transaction is open between two steps; a checkpoint must not fall inside one")
    return DurableState(connection.serialize(), _hypervisor(world).state(), _hardware(world).state(), now)


def restore(state: DurableState, world: World) -> None:
    _sqlite3(world.database).deserialize(state.store)
    _hypervisor(world).restore(state.guests)
    _hardware(world).restore(state.machines)


def logical_digest(world: World) -> str:
    """The content of the store and the hardware, independent of how pages happen to be laid out.

    Request ids and password salts are random, and rows numbered by the store
    follow the order of arrival, so none of them counts: two schedules that
    differ only in those ended in the same state, and a crash in either
    recovers the same way.
    """
    connection = _sqlite3(world.database)
    hasher = hashlib.blake2b(digest_size=16)
    for name, query in _digest_queries():
        text = repr((name, sorted(map(repr, connection.execute(query).fetchall()))))
        hasher.update(REQUEST_ID.sub("req-*", text).encode())  # request ids inside payloads too
    interfaces, domains = _hypervisor(world).state()
    hasher.update(repr((sorted(interfaces.items()), sorted(domains))).encode())
    machines, _ = _hardware(world).state()
    hasher.update(repr(sorted((uuid, vars(m)) for uuid, m in machines.items())).encode())
    return hasher.hexdigest()


@cache
def _digest_queries() -> tuple[tuple[str, str], ...]:
    """For each table, in dependency order, the query that reads the columns a digest counts."""
    from tether.store.tables import metadata

    queries = []
    for table in metadata.sorted_tables:
        skip = {column.name for column in table.columns
                if column.name in RANDOM_COLUMNS or column is table.autoincrement_column}
        names = [f'"{column.name}"' for column in table.columns if column.name not in skip]
        if names:
            queries.append((table.name, f'SELECT {", ".join(names)} FROM "{table.name}"'))
    return tuple(queries)


def _hypervisor(world: World) -> RecordingHypervisor:
    assert isinstance(world.hypervisor, RecordingHypervisor)
    return world.hypervisor


def _hardware(world: World) -> RecordingHardware:
    assert isinstance(world.hardware, RecordingHardware)
    return world.hardware

