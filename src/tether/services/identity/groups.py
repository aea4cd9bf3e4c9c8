"""Groups and their members; a group's grants are its members' (see ``assignments``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from tether.domain.errors import identity as errors
from tether.domain.identity import DEFAULT_DOMAIN_ID, Group, GroupMember, User, new_keystone_id
from tether.services.identity.accounts import check_name, conflicts_as, duplicate
from tether.services.identity.tokens import TokenCache, revoke_tokens_where
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class Groups:
    store: Store
    rng: random.Random
    cache: TokenCache

    async def create_group(self, *, name: str, domain_id: str = DEFAULT_DOMAIN_ID, description: str = "") -> Group:
        group = Group(id=new_keystone_id(self.rng), name=check_name(name), domain_id=domain_id,
                      description=description)
        with conflicts_as("group", name, domain_id):
            async with self.store.begin() as conn:
                if await repos.domains.get(conn, domain_id) is None:
                    raise errors.DomainNotFound(domain_id=domain_id)
                if await repos.groups.first(conn, name=name, domain_id=domain_id) is not None:
                    raise duplicate("group", "name", name, domain_id)
                await repos.groups.add(conn, group)
        return group

    async def get_group(self, group_id: str) -> Group:
        async with self.store.begin() as conn:
            group = await repos.groups.get(conn, group_id)
        if group is None:
            raise errors.GroupNotFound(group_id=group_id)
        return group

    async def list_groups(self, *, domain_id: str | None = None, name: str | None = None) -> list[Group]:
        filters = {key: value for key, value in (("domain_id", domain_id), ("name", name)) if value is not None}
        async with self.store.begin() as conn:
            return await repos.groups.find(conn, order_by=("name", "id"), **filters)

    async def update_group(self, group_id: str, *, name: str | None = None,
                           description: str | None = None) -> Group:
        group = await self.get_group(group_id)
        changes: dict[str, str] = {}
        if name is not None and name != group.name:
            changes["name"] = check_name(name)
        if description is not None:
            changes["description"] = description
        with conflicts_as("group", name or group_id, group.domain_id):
            async with self.store.begin() as conn:
                if "name" in changes and await repos.groups.first(conn, name=name, domain_id=group.domain_id):
                    raise duplicate("group", "name", changes["name"], group.domain_id)
                if changes:
                    await repos.groups.update(conn, group_id, **changes)
        return await self.get_group(group_id)

    async def delete_group(self, group_id: str) -> None:
        """Delete a group; its members lose what it granted, and their tokens with it."""
        async with self.store.begin() as conn:
            if await repos.groups.get(conn, group_id) is None:
                raise errors.GroupNotFound(group_id=group_id)
            members = [m.user_id for m in await repos.group_members.find(conn, group_id=group_id)]
            granted = (await repos.role_assignments.count(conn, group_id=group_id)
                       + await repos.inherited_role_assignments.count(conn, group_id=group_id))
            await repos.group_members.delete_where(conn, group_id=group_id)
            await repos.role_assignments.delete_where(conn, group_id=group_id)
            await repos.inherited_role_assignments.delete_where(conn, group_id=group_id)
            await repos.groups.delete(conn, group_id)
            if granted and members:
                await revoke_tokens_where(conn, user_id=members)
        if granted and members:
            held = set(members)
            self.cache.forget(lambda token: token.user_id in held)

    async def add_member(self, group_id: str, user_id: str) -> None:
        try:
            async with self.store.begin() as conn:
                await self._require_both(conn, group_id, user_id)
                if not await repos.group_members.count(conn, group_id=group_id, user_id=user_id):
                    await repos.group_members.add(conn, GroupMember(group_id=group_id, user_id=user_id))
        except IntegrityError:
            pass  # added by another writer first: the same outcome

    async def check_member(self, group_id: str, user_id: str) -> None:
        async with self.store.begin() as conn:
            await self._require_both(conn, group_id, user_id)
            if not await repos.group_members.count(conn, group_id=group_id, user_id=user_id):
                raise errors.UserNotInGroup(user_id=user_id, group_id=group_id)

    async def remove_member(self, group_id: str, user_id: str) -> None:
        """Take a user out of a group; what the group granted them goes, and so do their tokens."""
        async with self.store.begin() as conn:
            await self._require_both(conn, group_id, user_id)
            if not await repos.group_members.delete_where(conn, group_id=group_id, user_id=user_id):
                raise errors.UserNotInGroup(user_id=user_id, group_id=group_id)
            granted = (await repos.role_assignments.count(conn, group_id=group_id)
                       + await repos.inherited_role_assignments.count(conn, group_id=group_id))
            if granted:
                await revoke_tokens_where(conn, user_id=user_id)
        if granted:
            self.cache.forget(lambda token: token.user_id == user_id)

    async def members(self, group_id: str) -> list[User]:
        async with self.store.begin() as conn:
            await self._require_group(conn, group_id)
            ids = [m.user_id for m in await repos.group_members.find(conn, group_id=group_id)]
            return await repos.users.find(conn, order_by=("name", "id"), id=ids) if ids else []

    async def groups_of(self, user_id: str) -> list[Group]:
        async with self.store.begin() as conn:
            if await repos.users.get(conn, user_id) is None:
                raise errors.UserNotFound(user_id=user_id)
            ids = [m.group_id for m in await repos.group_members.find(conn, user_id=user_id)]
            return await repos.groups.find(conn, order_by=("name", "id"), id=ids) if ids else []

    @staticmethod
    async def _require_group(conn, group_id: str) -> None:  # type: ignore[no-untyped-def]
        if await repos.groups.get(conn, group_id) is None:
            raise errors.GroupNotFound(group_id=group_id)

    async def _require_both(self, conn, group_id: str, user_id: str) -> None:  # type: ignore[no-untyped-def]
        await self._require_group(conn, group_id)
        if await repos.users.get(conn, user_id) is None:
            raise errors.UserNotFound(user_id=user_id)
