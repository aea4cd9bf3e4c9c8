"""Server groups: create, read, list, delete; a boot joins one and the scheduler honours its policy.

Membership is recorded in the transaction that adds the instance, and a
member's host is chosen in one transaction that reads where the other
members are, under a row lock on the group: two members racing to boot never
see the same picture, so anti-affinity holds (SQLite has one writer anyway).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from tether.domain import server_groups as sg
from tether.domain.errors import compute as ce
from tether.domain.ids import new_uuid
from tether.domain.quotas import over
from tether.domain.server_groups import ServerGroup, ServerGroupMember
from tether.runtime.runtime import Runtime
from tether.services.compute import quotas
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


async def live_members(conn: StoreConnection, group_id: str) -> list[str]:
    """The group's members that are not deleted, in the order they joined."""
    uuids = [member.instance_uuid for member in await repos.server_group_members.find(
        conn, order_by=("instance_uuid",), group_id=group_id)]
    if not uuids:
        return []
    live = {instance.uuid for instance in await repos.instances.find(conn, uuid=uuids, deleted=False)}
    return [uuid for uuid in uuids if uuid in live]


async def join(conn: StoreConnection, ctx: RequestContext, group_id: str, instance_uuid: str) -> None:
    """Make the new instance a member, within its quota (nova's 403 when the group is full)."""
    group = await repos.server_groups.get(conn, group_id, lock="update")
    if group is None or not ctx.owns(group.project_id):
        raise ce.ComputeBadRequest(reason=f"Instance group {group_id} could not be found.")
    limit = (await quotas.limits_of(conn, group.project_id, ctx.user_id))["server_group_members"]
    if over(limit, len(await live_members(conn, group_id)), 1):
        raise ce.OverQuota("Quota exceeded, too many servers in group")
    await repos.server_group_members.add(conn, ServerGroupMember(group_id=group_id, instance_uuid=instance_uuid))


async def group_of(conn: StoreConnection, instance_uuid: str) -> tuple[ServerGroup | None, list[str]]:
    """The instance's group, locked for this transaction, and the hosts of its other placed members."""
    member = await repos.server_group_members.first(conn, instance_uuid=instance_uuid)
    if member is None:
        return None, []
    group = await repos.server_groups.get(conn, member.group_id, lock="update")
    if group is None:
        return None, []
    others = [uuid for uuid in await live_members(conn, group.id) if uuid != instance_uuid]
    placed = await repos.instances.find(conn, uuid=others) if others else []
    return group, [instance.node if instance.is_baremetal else instance.host
                   for instance in placed if instance.host]  # type: ignore[misc]


@dataclass(eq=False)
class ServerGroups:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_server_group(self, ctx: RequestContext, name: str, policy: str,
                                  rules: dict[str, Any] | None = None) -> ServerGroup:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-server-groups:create")
        if rules and policy != sg.ANTI_AFFINITY:
            raise ce.ComputeBadRequest(reason="Only anti-affinity policy supports rules.")
        group = ServerGroup(id=new_uuid(self.rng), name=name, project_id=ctx.project_id or "",
                            user_id=ctx.user_id, policy=policy, rules=dict(rules or {}), created_at=self.rt.now())
        async with self.store.begin() as conn:
            await quotas.check_one_more(conn, "server_groups", group.project_id, ctx.user_id,
                                        ce.ServerGroupLimitExceeded)
            await repos.server_groups.add(conn, group)
        return group

    async def server_groups(self, ctx: RequestContext, *,
                            all_projects: bool = False) -> list[tuple[ServerGroup, list[str]]]:
        async with self.store.begin() as conn:
            if all_projects and ctx.is_admin:
                groups = await repos.server_groups.find(conn, order_by=("created_at", "id"))
            else:
                groups = await repos.server_groups.find(conn, order_by=("created_at", "id"),
                                                        project_id=ctx.project_id or "")
            return [(group, await live_members(conn, group.id)) for group in groups]

    async def server_group(self, ctx: RequestContext, group_id: str) -> tuple[ServerGroup, list[str]]:
        async with self.store.begin() as conn:
            group = await _visible(conn, ctx, group_id)
            return group, await live_members(conn, group.id)

    async def delete_server_group(self, ctx: RequestContext, group_id: str) -> None:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-server-groups:delete")
        async with self.store.begin() as conn:
            group = await _visible(conn, ctx, group_id)
            await repos.server_group_members.delete_where(conn, group_id=group.id)
            await repos.server_groups.delete(conn, group.id)


async def _visible(conn: StoreConnection, ctx: RequestContext, group_id: str) -> ServerGroup:
    group = await repos.server_groups.get(conn, group_id)
    if group is None or not ctx.owns(group.project_id):
        raise ce.InstanceGroupNotFound(group_uuid=group_id)
    return group
