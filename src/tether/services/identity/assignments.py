"""Role assignments: grants to users and groups on projects, domains and the system, and what they add up to.

A user's roles on a target are their own grants there and their groups' grants there, with every
role those imply (keystone's ``effective`` assignments). Taking a grant back revokes the tokens it
was carried by, as keystone's revocation events do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain.errors import identity as errors
from tether.domain.identity import InheritedRoleAssignment, Role, RoleAssignment, effective_roles
from tether.services.identity.grants import Actor, Target, grant_of, projects_below, roles_held
from tether.services.identity.tokens import TokenCache, revoke_tokens_where
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection
    from tether.store.repository import Repository


def _repo(inherited: bool) -> Repository[Any]:
    return repos.inherited_role_assignments if inherited else repos.role_assignments


async def _require_actor(conn: StoreConnection, actor: Actor) -> None:
    if actor.kind == "user":
        if await repos.users.get(conn, actor.id) is None:
            raise errors.UserNotFound(user_id=actor.id)
    elif await repos.groups.get(conn, actor.id) is None:
        raise errors.GroupNotFound(group_id=actor.id)


async def _require_target(conn: StoreConnection, target: Target) -> None:
    if target.kind == "project" and await repos.projects.get(conn, target.id) is None:
        raise errors.ProjectNotFound(project_id=target.id)
    if target.kind == "domain" and await repos.domains.get(conn, target.id) is None:
        raise errors.DomainNotFound(domain_id=target.id)


async def _require_role(conn: StoreConnection, role_id: str) -> Role:
    role = await repos.roles.get(conn, role_id)
    if role is None:
        raise errors.RoleNotFound(role_id=role_id)
    return role


def _token_scope(target: Target) -> dict[str, Any]:
    if target.kind == "project":
        return {"project_id": target.id}
    if target.kind == "domain":
        return {"domain_id": target.id}
    return {"system": True}


@dataclass(eq=False)
class Assignments:
    store: Store
    cache: TokenCache

    async def grant(self, actor: Actor, target: Target, role_id: str, *, inherited: bool = False) -> None:
        """Grant a role (with ``inherited``, to every project below ``target``); granting one already held
        changes nothing."""
        assignment = grant_of(actor, target, role_id, inherited=inherited)
        try:
            async with self.store.begin() as conn:
                await _require_role(conn, role_id)
                await _require_actor(conn, actor)
                await _require_target(conn, target)
                if not await _repo(inherited).count(conn, **_key(assignment)):
                    await _repo(inherited).add(conn, assignment)
        except IntegrityError:
            pass  # another writer granted it first: the outcome is the same

    async def check(self, actor: Actor, target: Target, role_id: str, *, inherited: bool = False) -> None:
        async with self.store.begin() as conn:
            await _require_role(conn, role_id)
            await _require_actor(conn, actor)
            await _require_target(conn, target)
            found = await _repo(inherited).count(conn, **_key(grant_of(actor, target, role_id)))
        if not found:
            raise errors.RoleAssignmentNotFound(role_id=role_id, actor_id=actor.id, target_id=target.id)

    async def revoke(self, actor: Actor, target: Target, role_id: str, *, inherited: bool = False) -> None:
        """Take a role back; the tokens of whoever held it through this grant are revoked, as keystone does
        (all their tokens, for an inherited grant: it reached projects below ``target``)."""
        async with self.store.begin() as conn:
            await _require_role(conn, role_id)
            removed = await _repo(inherited).delete_where(conn, **_key(grant_of(actor, target, role_id)))
            if not removed:
                raise errors.RoleAssignmentNotFound(role_id=role_id, actor_id=actor.id, target_id=target.id)
            holders = [actor.id] if actor.kind == "user" else [
                m.user_id for m in await repos.group_members.find(conn, group_id=actor.id)]
            await self.revoke_tokens(conn, holders, None if inherited else target)
        self.forget(holders, None if inherited else target)

    async def revoke_tokens(self, conn: StoreConnection, user_ids: list[str], target: Target | None) -> None:
        """In the store; ``forget`` does the cache, once the transaction has committed."""
        if user_ids:
            scope = _token_scope(target) if target is not None else {}
            await revoke_tokens_where(conn, user_id=user_ids, **scope)

    def forget(self, user_ids: list[str], target: Target | None) -> None:
        held = set(user_ids)
        if target is None:
            self.cache.forget(lambda token: token.user_id in held)
        elif target.kind == "project":
            self.cache.forget(lambda token: token.user_id in held and token.project_id == target.id)
        elif target.kind == "domain":
            self.cache.forget(lambda token: token.user_id in held and token.domain_id == target.id)
        else:
            self.cache.forget(lambda token: token.user_id in held and token.system)

    async def list(self, *, actor: Actor | None = None, target: Target | None = None, role_id: str | None = None,
                   effective: bool = False, inherited: bool | None = None) -> list[RoleAssignment]:
        """Keystone's GET /v3/role_assignments. Inherited grants come as ``InheritedRoleAssignment``s
        (``inherited`` True: only those, False: none). With ``effective``, group grants are expanded to
        their members, inherited grants to the projects below their target, and implied roles added,
        each assignment once."""
        async with self.store.begin() as conn:
            every_role = {role.id: role for role in await repos.roles.find(conn)}
            columns = {} if effective or target is None else target.columns()
            order = ("user_id", "group_id", "project_id", "domain_id", "system", "role_id")
            grants: list[RoleAssignment] = []
            if not inherited:
                grants += await repos.role_assignments.find(conn, order_by=order, **columns)
            if inherited is not False:
                grants += await repos.inherited_role_assignments.find(conn, order_by=order, **columns)
            if effective:
                grants = await self._expanded(conn, grants, every_role)
        seen: set[tuple[Any, ...]] = set()
        result = []
        for grant in grants:
            key = (type(grant), *_key(grant).values())
            if key in seen:
                continue
            seen.add(key)
            if actor is not None and grant.actor != (actor.kind, actor.id):
                continue
            if target is not None and grant.target != (target.kind, target.id):
                continue
            if role_id is not None and grant.role_id != role_id:
                continue
            result.append(grant)
        return result

    @staticmethod
    async def _expanded(conn: StoreConnection, grants: list[RoleAssignment],
                        every_role: dict[str, Role]) -> list[RoleAssignment]:
        """Every grant as the users and projects it reaches, with the roles it implies."""
        members: dict[str, list[str]] = {}
        projects = None
        concrete: list[RoleAssignment] = []
        for grant in grants:
            if grant.group_id and grant.group_id not in members:
                members[grant.group_id] = [m.user_id for m in await repos.group_members.find(
                    conn, group_id=grant.group_id)]
            users = members[grant.group_id] if grant.group_id else [grant.user_id]
            if isinstance(grant, InheritedRoleAssignment):
                projects = projects if projects is not None else await repos.projects.find(conn)
                places = [{"project_id": p} for p in projects_below(grant, projects)]
            else:
                places = [{"project_id": grant.project_id, "domain_id": grant.domain_id, "system": grant.system}]
            concrete += [RoleAssignment(role_id=grant.role_id, user_id=u, **place) for u in users for place in places]
        result: list[RoleAssignment] = []
        for grant in concrete:
            prior = every_role.get(grant.role_id)
            implied = effective_roles([prior], every_role) if prior is not None else []
            result += [replace(grant, role_id=role.id) for role in implied]
        return result

    async def roles_for(self, user_id: str, project_id: str) -> list[Role]:
        """The roles a user holds on a project, implied ones included."""
        async with self.store.begin() as conn:
            return await roles_held(conn, user_id, Target("project", project_id))

    async def targets_of(self, user_id: str, kind: str) -> list[str]:
        """The ids of the projects (or domains) where ``user_id`` holds some role, through groups too."""
        async with self.store.begin() as conn:
            group_ids = [m.group_id for m in await repos.group_members.find(conn, user_id=user_id)]
            grants: list[RoleAssignment] = [*await repos.role_assignments.find(conn, user_id=user_id)]
            inherited = await repos.inherited_role_assignments.find(conn, user_id=user_id)
            if group_ids:
                grants += await repos.role_assignments.find(conn, group_id=group_ids)
                inherited += await repos.inherited_role_assignments.find(conn, group_id=group_ids)
            reached = set()
            if kind == "project" and inherited:
                projects = await repos.projects.find(conn)
                reached = {p for grant in inherited for p in projects_below(grant, projects)}
        column = "project_id" if kind == "project" else "domain_id"
        return sorted({getattr(g, column) for g in grants if getattr(g, column)} | reached)

    # the original calls, kept for what grants users roles on projects
    async def assign_role(self, *, user_id: str, project_id: str, role_id: str) -> None:
        await self.grant(Actor("user", user_id), Target("project", project_id), role_id)

    async def unassign_role(self, *, user_id: str, project_id: str, role_id: str) -> None:
        await self.revoke(Actor("user", user_id), Target("project", project_id), role_id)

    async def list_role_assignments(
        self, *, user_id: str | None = None, project_id: str | None = None, role_id: str | None = None
    ) -> list[RoleAssignment]:
        return await self.list(actor=Actor("user", user_id) if user_id else None,
                               target=Target("project", project_id) if project_id else None, role_id=role_id)


def _key(assignment: RoleAssignment) -> dict[str, str]:
    return {"user_id": assignment.user_id, "group_id": assignment.group_id, "project_id": assignment.project_id,
            "domain_id": assignment.domain_id, "system": assignment.system, "role_id": assignment.role_id}
