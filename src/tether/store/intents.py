"""Durable intents (design rule 5).

A multi-step operation records what it is about to do before its first side
effect and forgets it when it ends. Whatever is still recorded after a
restart was interrupted, and recovery finishes or undoes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.store.repository import Repository
from tether.store.tables import intents

if TYPE_CHECKING:
    from tether.store.connection import StoreConnection


@dataclass(frozen=True)
class Intent:
    id: str
    kind: str
    key: str
    payload: dict[str, Any]
    created_at: float


@dataclass
class _Row:
    """An intent as stored: the payload as JSON text."""

    id: str
    kind: str
    key: str
    payload: str
    created_at: float


_rows = Repository(intents, _Row, "id")


async def record(
    conn: StoreConnection, intent_id: str, kind: str, key: str, payload: dict[str, Any], now: float
) -> Intent:
    await _rows.add(conn, _Row(intent_id, kind, key, json.dumps(payload), now))
    return Intent(intent_id, kind, key, payload, now)


async def forget(conn: StoreConnection, intent_id: str) -> None:
    await _rows.delete(conn, intent_id)


async def pending(conn: StoreConnection, kind: str | None = None) -> list[Intent]:
    filters = {} if kind is None else {"kind": kind}
    return [Intent(row.id, row.kind, row.key, json.loads(row.payload), row.created_at)
            for row in await _rows.find(conn, order_by=("created_at", "id"), **filters)]
