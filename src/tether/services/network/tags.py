"""Tags on networks, subnets, ports, routers and security groups (neutron's standard-attr-tag).

The caller must see the resource to read its tags and own it to change them;
``visible`` is the resource's own lookup, so the same NotFound is raised for
what does not exist and for what the caller may not see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tether.domain import network_tags
from tether.domain.errors.network import InvalidInput, TagNotFound
from tether.domain.network_tags import ResourceTag
from tether.services.context import RequestContext
from tether.services.network import policy
from tether.store import repos
from tether.store.database import Store

Lookup = Callable[[RequestContext, str], Awaitable[Any]]


def check_tag(tag: object) -> str:
    """neutron's ``validate_tag``: a string of 1..255 characters without a comma."""
    if not isinstance(tag, str) or not tag or len(tag) > network_tags.MAX_TAG_LEN or "," in tag:
        raise InvalidInput(error_message=f"'{tag}' is not a valid tag")
    return tag


def check_tags(body: object) -> list[str]:
    if not isinstance(body, dict) or "tags" not in body:
        raise InvalidInput(error_message="Invalid tags body")
    tags = body["tags"]
    if not isinstance(tags, list):
        raise InvalidInput(error_message=f"'{tags}' is not a list")
    if len(tags) > network_tags.MAX_TAGS:
        raise InvalidInput(error_message=f"The number of tags exceed the per-resource limit of "
                                         f"{network_tags.MAX_TAGS}")
    return sorted({check_tag(tag) for tag in tags})


@dataclass(eq=False)
class Tags:
    store: Store

    async def tags_of(self, resource_ids: list[str]) -> dict[str, list[str]]:
        if not resource_ids:
            return {}
        found: dict[str, list[str]] = {}
        async with self.store.begin() as conn:
            for row in await repos.resource_tags.find(conn, order_by=("resource_id", "tag"),
                                                      resource_id=resource_ids):
                found.setdefault(row.resource_id, []).append(row.tag)
        return found

    async def replace_tags(self, ctx: RequestContext, kind: str, resource_id: str, tags: list[str]) -> list[str]:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            await repos.resource_tags.delete_where(conn, resource_id=resource_id)
            for tag in tags:
                await repos.resource_tags.add(conn, ResourceTag(resource_id=resource_id, tag=tag, resource_type=kind))
        return tags

    async def add_tag(self, ctx: RequestContext, kind: str, resource_id: str, tag: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            if await repos.resource_tags.first(conn, resource_id=resource_id, tag=tag) is not None:
                return
            if await repos.resource_tags.count(conn, resource_id=resource_id) >= network_tags.MAX_TAGS:
                raise InvalidInput(error_message=f"The number of tags exceed the per-resource limit of "
                                                 f"{network_tags.MAX_TAGS}")
            await repos.resource_tags.add(conn, ResourceTag(resource_id=resource_id, tag=tag, resource_type=kind))

    async def has_tag(self, resource_id: str, tag: str) -> None:
        async with self.store.begin() as conn:
            if await repos.resource_tags.first(conn, resource_id=resource_id, tag=tag) is None:
                raise TagNotFound(tag=tag)

    async def remove_tag(self, ctx: RequestContext, resource_id: str, tag: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            if not await repos.resource_tags.delete_where(conn, resource_id=resource_id, tag=tag):
                raise TagNotFound(tag=tag)

    async def remove_all(self, ctx: RequestContext, resource_id: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            await repos.resource_tags.delete_where(conn, resource_id=resource_id)
