"""Security groups and rules: create, show, list, update, delete, and the default group of each project.

Neutron makes a project's ``default`` group the first time the project uses
security groups or ports (listing groups, creating a group, a port or a
network), with its default rules. Tether does the same; the group's id is
derived from the project, so two first uses racing make one group, not two.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain import security_groups as sg
from tether.domain.errors.network import (
    DuplicateSecurityGroupRuleInPost,
    SecurityGroupCannotRemoveDefault,
    SecurityGroupCannotUpdateDefault,
    SecurityGroupDefaultAlreadyExists,
    SecurityGroupInUse,
    SecurityGroupNotFound,
    SecurityGroupNotSingleGroupRules,
    SecurityGroupRuleExists,
    SecurityGroupRuleNotFound,
)
from tether.domain.ids import new_uuid
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule, default_group_id
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import policy, quota_usage, validation
from tether.services.network.filters import column_filters
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

RULE_FIELDS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max", "remote_ip_prefix",
               "remote_group_id", "description")


def _visible(ctx: RequestContext, group: SecurityGroup | None) -> bool:
    return group is not None and ctx.owns(group.project_id)


async def visible_group(conn: StoreConnection, ctx: RequestContext, group_id: str,
                        lock: str | None = None) -> SecurityGroup:
    group = await repos.security_groups.get(conn, group_id, lock=lock) if isinstance(group_id, str) else None
    if not _visible(ctx, group):
        raise SecurityGroupNotFound(id=group_id)
    assert group is not None
    return group


async def groups_in_use(conn: StoreConnection, group_ids: set[str]) -> set[str]:
    """The groups of ``group_ids`` that some port has."""
    used: set[str] = set()
    for port in await repos.ports.find(conn):
        used.update(set(port.security_group_ids or ()) & group_ids)
    return used


@dataclass(eq=False)
class SecurityGroups:
    store: Store
    rt: Runtime
    rng: random.Random
    # Projects whose default group this process has seen: every port create asks, and this process owns
    # the store (one serve per data dir), so only a delete here can take one away (see ``forget_default``).
    _defaults_seen: set[str] = field(default_factory=set)

    # -- the default group ---------------------------------------------------------------------

    async def ensure_default(self, project_id: str | None) -> str | None:
        """The id of the project's default group, made now (with its rules) if it has none."""
        if not project_id:
            return None
        group_id = default_group_id(project_id)
        if project_id in self._defaults_seen:
            return group_id
        async with self.store.begin() as conn:
            if await repos.security_groups.get(conn, group_id) is not None:
                self._defaults_seen.add(project_id)
                return group_id
        now = self.rt.now()
        group = SecurityGroup(id=group_id, name=sg.DEFAULT_NAME, project_id=project_id,
                              description=sg.DEFAULT_DESCRIPTION, is_default=True, created_at=now, updated_at=now)
        try:
            async with self.store.begin() as conn:
                await repos.security_groups.add(conn, group)
                await self._add_rules(conn, group, sg.default_rules(group.id, default_group=True))
        except IntegrityError:
            pass  # another first use made it meanwhile
        self._defaults_seen.add(project_id)
        return group_id

    def forget_default(self, project_id: str) -> None:
        """The project's default group is gone (or was found missing): the next port makes it again."""
        self._defaults_seen.discard(project_id)

    # -- groups ------------------------------------------------------------------------------------

    async def create_security_group(self, ctx: RequestContext, *, name: str = "", description: str = "",
                                    stateful: bool = True, project_id: str | None = None) -> SecurityGroup:
        policy.require_write(ctx)
        validation.string("name", name)
        validation.string("description", description)
        validation.boolean("stateful", stateful)
        if name.lower() == sg.DEFAULT_NAME:
            raise SecurityGroupDefaultAlreadyExists()
        project = policy.project_for(ctx, project_id)
        await self.ensure_default(project)
        now = self.rt.now()
        group = SecurityGroup(id=new_uuid(self.rng), name=name, project_id=project, description=description,
                              stateful=stateful, created_at=now, updated_at=now)
        async with self.store.begin() as conn:
            await quota_usage.check(conn, project, "security_group", 1)
            await quota_usage.check(conn, project, "security_group_rule", 2)
            await repos.security_groups.add(conn, group)
            await self._add_rules(conn, group, sg.default_rules(group.id, default_group=False))
        return group

    async def get_security_group(self, ctx: RequestContext, group_id: str) -> SecurityGroup:
        async with self.store.begin() as conn:
            return await visible_group(conn, ctx, group_id)

    async def list_security_groups(self, ctx: RequestContext, **filters: Any) -> list[SecurityGroup]:
        filters = column_filters(repos.security_groups.table, filters)
        if ctx.project_id:
            await self.ensure_default(ctx.project_id)
        async with self.store.begin() as conn:
            found = await repos.security_groups.find(conn, **filters)
        return [group for group in found if _visible(ctx, group)]

    async def update_security_group(self, ctx: RequestContext, group_id: str, **changes: Any) -> SecurityGroup:
        policy.require_write(ctx)
        validation.known_keys(changes, ("name", "description", "stateful"), ("id", "project_id"))
        if "name" in changes:
            validation.string("name", changes["name"])
        if "description" in changes:
            validation.string("description", changes["description"])
        if "stateful" in changes:
            validation.boolean("stateful", changes["stateful"])
        async with self.store.begin() as conn:
            group = await visible_group(conn, ctx, group_id, lock="update")
            if "stateful" in changes and changes["stateful"] != group.stateful and \
                    await groups_in_use(conn, {group.id}):
                raise SecurityGroupInUse(id=group.id)
            if group.name == sg.DEFAULT_NAME and "name" in changes:
                raise SecurityGroupCannotUpdateDefault()
            if str(changes.get("name", "")).lower() == sg.DEFAULT_NAME:
                raise SecurityGroupDefaultAlreadyExists()  # neutron's name_not_default, on PUT too
            if changes:
                await repos.security_groups.update(conn, group.id, updated_at=self.rt.now(), **changes)
            return await repos.security_groups.get(conn, group.id)  # type: ignore[return-value]

    async def delete_security_group(self, ctx: RequestContext, group_id: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            group = await visible_group(conn, ctx, group_id, lock="update")
            if await groups_in_use(conn, {group.id}):
                raise SecurityGroupInUse(id=group.id)
            if group.name == sg.DEFAULT_NAME and not ctx.is_admin:
                raise SecurityGroupCannotRemoveDefault()
            # rule 2: the group's rules, and every rule that names it as a remote group, go with it
            await repos.security_group_rules.delete_where(conn, security_group_id=group.id)
            await repos.security_group_rules.delete_where(conn, remote_group_id=group.id)
            await repos.resource_tags.delete_where(conn, resource_id=group.id)
            await repos.security_groups.delete(conn, group.id)
        if group.is_default:
            self.forget_default(group.project_id)  # once committed: the project's next port looks again

    # -- rules ---------------------------------------------------------------------------------

    async def rules_of(self, group_ids: list[str]) -> list[SecurityGroupRule]:
        async with self.store.begin() as conn:
            return await repos.security_group_rules.find(conn, order_by=("created_at", "id"),
                                                         security_group_id=group_ids)

    async def create_security_group_rules(self, ctx: RequestContext,
                                          specs: list[dict[str, Any]]) -> list[SecurityGroupRule]:
        """Every rule or none; ``specs`` already converted (see the domain's ``convert_*``)."""
        policy.require_write(ctx)
        rules = [sg.canonical_rule(spec) for spec in specs]
        if len({rule["security_group_id"] for rule in rules}) > 1:
            raise SecurityGroupNotSingleGroupRules()
        group_id = rules[0]["security_group_id"]
        validation.string("security_group_id", group_id)
        for rule in rules:
            validation.string("description", rule.get("description", ""))
        async with self.store.begin() as conn:
            group = await visible_group(conn, ctx, group_id, lock="update")
            project = policy.project_for(ctx, rules[0].get("project_id"), group.project_id)
            for rule in rules:
                if rule.get("remote_group_id"):
                    await visible_group(conn, ctx, rule["remote_group_id"])
            await quota_usage.check(conn, project, "security_group_rule", len(rules))
            return await self._add_rules(conn, group, rules, project_id=project, check_duplicates=True)

    async def get_security_group_rule(self, ctx: RequestContext, rule_id: str) -> SecurityGroupRule:
        async with self.store.begin() as conn:
            rule = await repos.security_group_rules.get(conn, rule_id) if isinstance(rule_id, str) else None
            if rule is None or not ctx.owns(rule.project_id):
                raise SecurityGroupRuleNotFound(id=rule_id)
            return rule

    async def list_security_group_rules(self, ctx: RequestContext, **filters: Any) -> list[SecurityGroupRule]:
        filters = column_filters(repos.security_group_rules.table, filters)
        async with self.store.begin() as conn:
            found = await repos.security_group_rules.find(conn, **filters)
        return [rule for rule in found if ctx.owns(rule.project_id)]

    async def update_security_group_rule(self, ctx: RequestContext, rule_id: str, **changes: Any) -> SecurityGroupRule:
        """Only a rule's description changes (standard-attr-description); the rest is the rule."""
        policy.require_write(ctx)
        validation.known_keys(changes, ("description",), ("id", "project_id", *RULE_FIELDS))
        if "description" in changes:
            validation.string("description", changes["description"])
        async with self.store.begin() as conn:
            rule = await repos.security_group_rules.get(conn, rule_id) if isinstance(rule_id, str) else None
            if rule is None or not ctx.owns(rule.project_id):
                raise SecurityGroupRuleNotFound(id=rule_id)
            if changes:
                await repos.security_group_rules.update(conn, rule.id, updated_at=self.rt.now(), **changes)
            return await repos.security_group_rules.get(conn, rule.id)  # type: ignore[return-value]

    async def delete_security_group_rule(self, ctx: RequestContext, rule_id: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            rule = await repos.security_group_rules.get(conn, rule_id) if isinstance(rule_id, str) else None
            if rule is None or not ctx.owns(rule.project_id):
                raise SecurityGroupRuleNotFound(id=rule_id)
            await repos.security_group_rules.delete(conn, rule.id)

    async def _add_rules(self, conn: StoreConnection, group: SecurityGroup, specs: list[dict[str, Any]], *,
                         project_id: str | None = None, check_duplicates: bool = False) -> list[SecurityGroupRule]:
        now = self.rt.now()
        made = []
        for spec in specs:
            values = {name: spec[name] for name in RULE_FIELDS if spec.get(name) is not None}
            made.append(SecurityGroupRule(id=new_uuid(self.rng), security_group_id=group.id,
                                          project_id=project_id or group.project_id,
                                          created_at=now, updated_at=now, **values))
        if check_duplicates:
            keys: set[str] = set()
            for rule in made:
                if rule.key() in keys:
                    raise DuplicateSecurityGroupRuleInPost()
                keys.add(rule.key())
            for existing in await repos.security_group_rules.find(conn, security_group_id=group.id):
                if existing.key() in keys:
                    raise SecurityGroupRuleExists(rule_id=existing.id)
        for rule in made:
            await repos.security_group_rules.add(conn, rule)
        return made
