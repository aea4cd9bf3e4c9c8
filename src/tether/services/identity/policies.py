"""Policy blobs (keystone's /v3/policies): stored and handed back, never enforced by Tether."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import identity as errors
from tether.domain.identity import Policy, new_keystone_id
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class Policies:
    store: Store
    rng: random.Random

    async def create(self, *, type: str, blob: str, extra: dict[str, Any] | None = None) -> Policy:
        policy = Policy(id=new_keystone_id(self.rng), type=type, blob=blob, extra=extra or {})
        async with self.store.begin() as conn:
            await repos.policies.add(conn, policy)
        return policy

    async def get(self, policy_id: str) -> Policy:
        async with self.store.begin() as conn:
            policy = await repos.policies.get(conn, policy_id)
        if policy is None:
            raise errors.PolicyNotFound(policy_id=policy_id)
        return policy

    async def list(self, *, type: str | None = None) -> list[Policy]:
        async with self.store.begin() as conn:
            return await repos.policies.find(conn, order_by=("id",), **({"type": type} if type else {}))

    async def update(self, policy_id: str, *, type: str | None = None, blob: str | None = None,
                     extra: dict[str, Any] | None = None) -> Policy:
        current = await self.get(policy_id)
        changes: dict[str, Any] = {"extra": {**current.extra, **(extra or {})}}
        changes |= {k: v for k, v in (("type", type), ("blob", blob)) if v is not None}
        async with self.store.begin() as conn:
            await repos.policies.update(conn, policy_id, **changes)
        return await self.get(policy_id)

    async def delete(self, policy_id: str) -> None:
        async with self.store.begin() as conn:
            if not await repos.policies.delete(conn, policy_id):
                raise errors.PolicyNotFound(policy_id=policy_id)
