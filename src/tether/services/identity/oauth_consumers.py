"""OAuth 1.0a consumers (keystone's OS-OAUTH1): the applications a user may delegate to.

Tether keeps the consumers, but not the OAuth1 delegation flow itself (request tokens, authorization,
access tokens and the ``oauth1`` auth method): that is declined as a keystone without the method
declines it, and listed in the README.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import identity as errors
from tether.domain.identity import OAuthConsumer, new_keystone_id
from tether.store import repos
from tether.store.database import Store


@dataclass(frozen=True)
class NewConsumer:
    consumer: OAuthConsumer
    secret: str


@dataclass(eq=False)
class OAuthConsumers:
    store: Store
    rng: random.Random

    async def create(self, *, description: str | None = None, extra: dict[str, Any] | None = None) -> NewConsumer:
        secret = uuid.uuid4().hex
        consumer = OAuthConsumer(id=new_keystone_id(self.rng), secret_hash=hashlib.sha256(secret.encode()).hexdigest(),
                                 description=description, extra=extra or {})
        async with self.store.begin() as conn:
            await repos.oauth_consumers.add(conn, consumer)
        return NewConsumer(consumer, secret)

    async def get(self, consumer_id: str) -> OAuthConsumer:
        async with self.store.begin() as conn:
            consumer = await repos.oauth_consumers.get(conn, consumer_id)
        if consumer is None:
            raise errors.ConsumerNotFound(consumer_id=consumer_id)
        return consumer

    async def list(self) -> list[OAuthConsumer]:
        async with self.store.begin() as conn:
            return await repos.oauth_consumers.find(conn, order_by=("id",))

    async def update(self, consumer_id: str, *, description: str | None = None,
                     extra: dict[str, Any] | None = None, description_given: bool = False) -> OAuthConsumer:
        current = await self.get(consumer_id)
        changes: dict[str, Any] = {"extra": {**current.extra, **(extra or {})}}
        if description_given:
            changes["description"] = description
        async with self.store.begin() as conn:
            await repos.oauth_consumers.update(conn, consumer_id, **changes)
        return await self.get(consumer_id)

    async def delete(self, consumer_id: str) -> None:
        async with self.store.begin() as conn:
            if not await repos.oauth_consumers.delete(conn, consumer_id):
                raise errors.ConsumerNotFound(consumer_id=consumer_id)
