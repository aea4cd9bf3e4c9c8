"""Durable intents (design rule 5).

A multi-step operation records what it is about to do before its first side
effect and forgets it when it ends. Whatever is still recorded after a
restart was interrupted, and recovery finishes or undoes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select

from tether.store.tables import intents

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True)
class Intent:
    id: str
    kind: str
    key: str
    payload: dict[str, Any]
    created_at: float


async def record(
    conn: AsyncConnection, intent_id: str, kind: str, key: str, payload: dict[str, Any], now: float
) -> Intent:
    await conn.execute(
        insert(intents).values(
            id=intent_id, kind=kind, key=key, payload=json.dumps(payload), created_at=now
        )
    )
    return Intent(intent_id, kind, key, payload, now)


async def forget(conn: AsyncConnection, intent_id: str) -> None:
    await conn.execute(delete(intents).where(intents.c.id == intent_id))


async def pending(conn: AsyncConnection, kind: str | None = None) -> list[Intent]:
    query = select(intents).order_by(intents.c.created_at, intents.c.id)
    if kind is not None:
        query = query.where(intents.c.kind == kind)
    return [
        Intent(row.id, row.kind, row.key, json.loads(row.payload), row.created_at)
        for row in await conn.execute(query)
    ]
