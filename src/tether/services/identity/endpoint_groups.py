"""OS-EP-FILTER endpoint groups: named filters over the catalog's endpoints.

Tether keeps the groups; associating them (or single endpoints) with projects to filter a project's
catalog is not served (see the README)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from tether.domain.errors import identity as errors
from tether.domain.identity import EndpointGroup, new_keystone_id
from tether.store import repos
from tether.store.database import Store

FILTER_KEYS = ("service_id", "region_id", "interface")


def check_filters(filters: dict[str, Any]) -> dict[str, Any]:
    if any(key not in FILTER_KEYS for key in filters):
        raise errors.MissingAttribute(attribute=" or ".join(FILTER_KEYS), target="endpoint_group")
    return filters


@dataclass(eq=False)
class EndpointGroups:
    store: Store
    rng: random.Random

    async def create(self, *, name: str, filters: dict[str, Any], description: str | None = None) -> EndpointGroup:
        if not filters:
            raise errors.ValidationError(reason="filters field is required and cannot be empty")
        group = EndpointGroup(id=new_keystone_id(self.rng), name=name, filters=check_filters(filters),
                              description=description)
        async with self.store.begin() as conn:
            await repos.endpoint_groups.add(conn, group)
        return group

    async def get(self, group_id: str) -> EndpointGroup:
        async with self.store.begin() as conn:
            group = await repos.endpoint_groups.get(conn, group_id)
        if group is None:
            raise errors.EndpointGroupNotFound(endpoint_group_id=group_id)
        return group

    async def list(self, *, name: str | None = None) -> list[EndpointGroup]:
        async with self.store.begin() as conn:
            return await repos.endpoint_groups.find(conn, order_by=("name", "id"), **({"name": name} if name else {}))

    async def update(self, group_id: str, changes: dict[str, Any]) -> EndpointGroup:
        current = await self.get(group_id)
        if "filters" in changes:
            check_filters(changes["filters"])
        values = {k: changes[k] for k in ("name", "description", "filters") if k in changes}
        # the whole row is written again: Repository.update takes its own ``filters`` argument
        async with self.store.begin() as conn:
            await repos.endpoint_groups.delete(conn, group_id)
            await repos.endpoint_groups.add(conn, replace(current, **values))
        return await self.get(group_id)

    async def delete(self, group_id: str) -> None:
        async with self.store.begin() as conn:
            if not await repos.endpoint_groups.delete(conn, group_id):
                raise errors.EndpointGroupNotFound(endpoint_group_id=group_id)
