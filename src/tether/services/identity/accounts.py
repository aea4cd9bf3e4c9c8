"""Domains, projects, users and roles (and the roles' inference rules)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain.errors import identity as errors
from tether.domain.identity import (
    DEFAULT_DOMAIN_ID,
    NAME_MAX_LENGTH,
    Domain,
    Project,
    Role,
    User,
    effective_roles,
    new_keystone_id,
)
from tether.services.identity.passwords import Passwords
from tether.services.identity.tokens import TokenCache, revoke_tokens_where
from tether.services.identity.verified_secrets import VerifiedSecrets
from tether.store import repos
from tether.store.database import Store
from tether.store.repository import Repository

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise errors.ValidationError(reason=f"Invalid input for field 'name': {name!r} is too short")
    if len(name) > NAME_MAX_LENGTH:
        raise errors.ValidationError(reason=f"Invalid input for field 'name': {name!r} is too long")
    return name


def duplicate(kind: str, field: str, value: str, domain_id: str | None = None) -> errors.Conflict:
    """keystone's ``handle_conflicts`` words."""
    details = f"Duplicate entry found with {field} {value}"
    if domain_id is not None:
        details += f" at domain ID {domain_id}"
    return errors.Conflict(type=kind, details=details)


@contextmanager
def conflicts_as(kind: str, name: str, domain_id: str | None = None) -> Iterator[None]:
    """A uniqueness race lost to another writer is the same Conflict as one seen first."""
    try:
        yield
    except IntegrityError:
        raise duplicate(kind, "name", name, domain_id) from None


def _given(**filters: Any) -> dict[str, Any]:
    return {key: value for key, value in filters.items() if value is not None}


@dataclass(eq=False)
class Accounts:
    """What keystone's admin API manages: domains, projects, users and roles.

    What takes a right away (disabling, a new password, a deletion) revokes the
    tokens that carried it, in the store and in the shared token cache.
    """

    store: Store
    rng: random.Random
    _: KW_ONLY
    passwords: Passwords
    cache: TokenCache
    verified: VerifiedSecrets

    # -- domains ------------------------------------------------------------

    async def create_domain(self, *, name: str, id: str | None = None, enabled: bool = True,
                            description: str = "") -> Domain:
        domain = Domain(id=id or new_keystone_id(self.rng), name=check_name(name), enabled=enabled,
                        description=description)
        with conflicts_as("domain", name):
            async with self.store.begin() as conn:
                await _ensure_free(conn, repos.domains, "domain", domain.id, name=name)
                await repos.domains.add(conn, domain)
        return domain

    async def get_domain(self, domain_id: str) -> Domain:
        async with self.store.begin() as conn:
            return await _require_domain(conn, domain_id)

    async def find_domain(self, name: str) -> Domain:
        async with self.store.begin() as conn:
            domain = await repos.domains.first(conn, name=name)
        if domain is None:
            raise errors.DomainNotFound(domain_id=name)
        return domain

    async def list_domains(self, *, name: str | None = None, enabled: bool | None = None) -> list[Domain]:
        async with self.store.begin() as conn:
            return await repos.domains.find(conn, order_by=("name",), **_given(name=name, enabled=enabled))

    async def update_domain(self, domain_id: str, *, name: str | None = None, description: str | None = None,
                            enabled: bool | None = None) -> Domain:
        """Change a domain; disabling it revokes the tokens of its users and of its projects."""
        changes = _given(name=check_name(name) if name is not None else None, description=description,
                         enabled=enabled)
        with conflicts_as("domain", name or domain_id):
            async with self.store.begin() as conn:
                domain = await _require_domain(conn, domain_id)
                if name is not None and name != domain.name:
                    await _ensure_free(conn, repos.domains, "domain", None, name=name)
                if changes:
                    await repos.domains.update(conn, domain_id, **changes)
                if enabled is False:
                    users = [u.id for u in await repos.users.find(conn, domain_id=domain_id)]
                    projects = [p.id for p in await repos.projects.find(conn, domain_id=domain_id)]
                    await _revoke_for(conn, users, projects, domain_id)
                updated = await _require_domain(conn, domain_id)
        if enabled is False:
            self._forget(users, projects, domain_id)
        return updated

    async def delete_domain(self, domain_id: str) -> None:
        """Delete a disabled domain with its projects, users and groups, as keystone does."""
        async with self.store.begin() as conn:
            domain = await _require_domain(conn, domain_id)
            if domain.enabled:
                raise errors.ForbiddenNotSecurity(
                    reason="Cannot delete a domain that is enabled, please disable it first.")
            users = [u.id for u in await repos.users.find(conn, domain_id=domain_id)]
            projects = [p.id for p in await repos.projects.find(conn, domain_id=domain_id)]
            groups = [g.id for g in await repos.groups.find(conn, domain_id=domain_id)]
            await _revoke_for(conn, users, projects, domain_id)
            for user_id in users:
                await _forget_user(conn, user_id)
            for group_id in groups:
                await repos.group_members.delete_where(conn, group_id=group_id)
                await repos.role_assignments.delete_where(conn, group_id=group_id)
                await repos.inherited_role_assignments.delete_where(conn, group_id=group_id)
            if projects:
                await repos.role_assignments.delete_where(conn, project_id=projects)
                await repos.inherited_role_assignments.delete_where(conn, project_id=projects)
                await repos.application_credentials.delete_where(conn, project_id=projects)
                await repos.credentials.delete_where(conn, project_id=projects)
            await repos.role_assignments.delete_where(conn, domain_id=domain_id)
            await repos.inherited_role_assignments.delete_where(conn, domain_id=domain_id)
            await repos.domain_configs.delete(conn, domain_id)
            for role in await repos.roles.find(conn, domain_id=domain_id):
                await repos.role_assignments.delete_where(conn, role_id=role.id)
                await repos.inherited_role_assignments.delete_where(conn, role_id=role.id)
            await repos.roles.delete_where(conn, domain_id=domain_id)
            await repos.groups.delete_where(conn, domain_id=domain_id)
            await repos.users.delete_where(conn, domain_id=domain_id)
            await repos.projects.delete_where(conn, domain_id=domain_id)
            await repos.domains.delete(conn, domain_id)
        self._forget(users, projects, domain_id)

    # -- projects -----------------------------------------------------------

    async def create_project(
        self,
        *,
        name: str,
        domain_id: str | None = None,
        description: str = "",
        enabled: bool = True,
        id: str | None = None,
        parent_id: str | None = None,
        tags: list[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Project:
        """A project; under ``parent_id`` (a project of the same domain) or, without one, at its domain's top."""
        check_name(name)
        async with self.store.begin() as conn:
            parent = await _require_project(conn, parent_id) if parent_id is not None else None
        if parent is not None and domain_id is not None and parent.domain_id != domain_id:
            raise errors.ValidationError(
                reason="Cannot create project, the parent project is in a different domain.")
        domain_id = domain_id or (parent.domain_id if parent else DEFAULT_DOMAIN_ID)
        project = Project(id=id or new_keystone_id(self.rng), name=name, domain_id=domain_id, enabled=enabled,
                          description=description, parent_id=parent_id, tags=list(tags or []),
                          extra=dict(extra or {}))
        with conflicts_as("project", name, domain_id):
            async with self.store.begin() as conn:
                await _require_domain(conn, domain_id)
                await _ensure_free(conn, repos.projects, "project", project.id, name=name, domain_id=domain_id)
                await repos.projects.add(conn, project)
        return project

    async def get_project(self, project_id: str) -> Project:
        async with self.store.begin() as conn:
            return await _require_project(conn, project_id)

    async def find_project(self, name: str, *, domain_id: str = DEFAULT_DOMAIN_ID) -> Project:
        async with self.store.begin() as conn:
            project = await repos.projects.first(conn, name=name, domain_id=domain_id)
        if project is None:
            raise errors.ProjectNotFound(project_id=name)
        return project

    async def list_projects(
        self,
        *,
        domain_id: str | None = None,
        name: str | None = None,
        enabled: bool | None = None,
        parent_id: str | None = None,
        ids: list[str] | None = None,
    ) -> list[Project]:
        async with self.store.begin() as conn:
            return await repos.projects.find(
                conn, order_by=("name", "id"),
                **_given(domain_id=domain_id, name=name, enabled=enabled, parent_id=parent_id, id=ids),
            )

    async def update_project(
        self,
        project_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        enabled: bool | None = None,
        tags: list[str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Project:
        """Change a project; disabling it revokes every token scoped to it."""
        changes = _given(name=check_name(name) if name is not None else None,
                         description=description, enabled=enabled, tags=tags)
        with conflicts_as("project", name or project_id):
            async with self.store.begin() as conn:
                project = await _require_project(conn, project_id)
                if name is not None and name != project.name:
                    await _ensure_free(conn, repos.projects, "project", None, name=name,
                                       domain_id=project.domain_id)
                if extra:
                    changes["extra"] = {**project.extra, **extra}
                if changes:
                    await repos.projects.update(conn, project_id, **changes)
                if enabled is False:
                    await revoke_tokens_where(conn, project_id=project_id)
                updated = await _require_project(conn, project_id)
        if enabled is False:
            self.cache.forget(lambda token: token.project_id == project_id)
        return updated

    async def delete_project(self, project_id: str) -> None:
        """Delete a leaf project, its grants and application credentials, and revoke the tokens scoped to it."""
        async with self.store.begin() as conn:
            await _require_project(conn, project_id)
            if await repos.projects.count(conn, parent_id=project_id):
                raise errors.ForbiddenNotSecurity(
                    reason=f"Cannot delete the project {project_id} since it is not a leaf in the hierarchy. "
                           "Use the cascade option if you want to delete a whole subtree.")
            await revoke_tokens_where(conn, project_id=project_id)
            await repos.role_assignments.delete_where(conn, project_id=project_id)
            await repos.inherited_role_assignments.delete_where(conn, project_id=project_id)
            await repos.application_credentials.delete_where(conn, project_id=project_id)
            # keystone's delete_credentials_for_project
            await repos.credentials.delete_where(conn, project_id=project_id)
            await repos.projects.delete(conn, project_id)
        self.cache.forget(lambda token: token.project_id == project_id)

    # -- users --------------------------------------------------------------

    async def create_user(
        self,
        *,
        name: str,
        password: str | None = None,
        domain_id: str = DEFAULT_DOMAIN_ID,
        enabled: bool = True,
        default_project_id: str | None = None,
        id: str | None = None,
        description: str = "",
        extra: dict[str, Any] | None = None,
    ) -> User:
        """A user; without a password (None or "") they cannot authenticate by password."""
        check_name(name)
        password_hash = await self.passwords.hash(password) if password else ""
        user = User(id=id or new_keystone_id(self.rng), name=name, password_hash=password_hash, domain_id=domain_id,
                    enabled=enabled, default_project_id=default_project_id, description=description,
                    extra=dict(extra or {}))
        with conflicts_as("user", name, domain_id):
            async with self.store.begin() as conn:
                await _require_domain(conn, domain_id)
                if default_project_id is not None:
                    await _require_project(conn, default_project_id)
                await _ensure_free(conn, repos.users, "user", user.id, name=name, domain_id=domain_id)
                await repos.users.add(conn, user)
        return user

    async def get_user(self, user_id: str) -> User:
        async with self.store.begin() as conn:
            return await _require_user(conn, user_id)

    async def find_user(self, name: str, *, domain_id: str = DEFAULT_DOMAIN_ID) -> User:
        async with self.store.begin() as conn:
            user = await repos.users.first(conn, name=name, domain_id=domain_id)
        if user is None:
            raise errors.UserNotFound(user_id=name)
        return user

    async def list_users(
        self, *, domain_id: str | None = None, name: str | None = None, enabled: bool | None = None,
        ids: list[str] | None = None,
    ) -> list[User]:
        async with self.store.begin() as conn:
            return await repos.users.find(
                conn, order_by=("name", "id"), **_given(domain_id=domain_id, name=name, enabled=enabled, id=ids)
            )

    async def update_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        password: str | None = None,
        enabled: bool | None = None,
        description: str | None = None,
        default_project_id: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> User:
        """Change a user; disabling them or changing their password revokes their tokens, as keystone does."""
        if name is not None:
            check_name(name)
        password_hash = await self.passwords.hash(password) if password else None
        changes = _given(name=name, password_hash=password_hash, enabled=enabled, description=description,
                         default_project_id=default_project_id)
        revoke = enabled is False or password_hash is not None
        if enabled or password_hash is not None:
            # keystone: enabling a user, or giving them a new password, lifts a lockout
            changes |= {"failed_auth_count": 0, "failed_auth_at": None}
        with conflicts_as("user", name or user_id):
            async with self.store.begin() as conn:
                user = await _require_user(conn, user_id)
                if name is not None and name != user.name:
                    await _ensure_free(conn, repos.users, "user", None, name=name, domain_id=user.domain_id)
                if default_project_id is not None:
                    await _require_project(conn, default_project_id)
                if extra:
                    changes["extra"] = {**user.extra, **extra}
                if changes:
                    await repos.users.update(conn, user_id, **changes)
                if revoke:
                    await revoke_tokens_where(conn, user_id=user_id)
                updated = await _require_user(conn, user_id)
        if revoke:
            self.cache.forget(lambda token: token.user_id == user_id)
            self.verified.forget_user(user_id)
        return updated

    async def change_password(self, user_id: str, *, original_password: str, password: str) -> None:
        """The user's own password change (POST /v3/users/{id}/password): the old one must match."""
        async with self.store.begin() as conn:
            user = await _require_user(conn, user_id)
        if not await self.passwords.verify(user.password_hash or None, original_password):
            raise errors.Unauthorized()
        await self.update_user(user_id, password=password)

    async def delete_user(self, user_id: str) -> None:
        """Delete a user with their grants, group memberships and application credentials; their tokens die."""
        async with self.store.begin() as conn:
            await _require_user(conn, user_id)
            await revoke_tokens_where(conn, user_id=user_id)
            await _forget_user(conn, user_id)
            await repos.users.delete(conn, user_id)
        self.cache.forget(lambda token: token.user_id == user_id)
        self.verified.forget_user(user_id)

    # -- roles --------------------------------------------------------------

    async def create_role(self, *, name: str, id: str | None = None, description: str = "",
                          domain_id: str | None = None) -> Role:
        role = Role(id=id or new_keystone_id(self.rng), name=check_name(name), description=description,
                    domain_id=domain_id)
        with conflicts_as("role", name):
            async with self.store.begin() as conn:
                if domain_id is not None:
                    await _require_domain(conn, domain_id)
                await _ensure_free(conn, repos.roles, "role", role.id, name=name)
                await repos.roles.add(conn, role)
        return role

    async def get_role(self, role_id: str) -> Role:
        async with self.store.begin() as conn:
            return await _require_role(conn, role_id)

    async def find_role(self, name: str) -> Role:
        async with self.store.begin() as conn:
            role = await repos.roles.first(conn, name=name)
        if role is None:
            raise errors.RoleNotFound(role_id=name)
        return role

    async def list_roles(self, *, name: str | None = None) -> list[Role]:
        async with self.store.begin() as conn:
            return await repos.roles.find(conn, order_by=("name",), **_given(name=name))

    async def update_role(self, role_id: str, *, name: str | None = None, description: str | None = None) -> Role:
        changes = _given(name=check_name(name) if name is not None else None, description=description)
        with conflicts_as("role", name or role_id):
            async with self.store.begin() as conn:
                role = await _require_role(conn, role_id)
                if name is not None and name != role.name:
                    await _ensure_free(conn, repos.roles, "role", None, name=name)
                if changes:
                    await repos.roles.update(conn, role_id, **changes)
                return await _require_role(conn, role_id)

    async def delete_role(self, role_id: str) -> None:
        """Delete a role, its grants and its inference rules; the tokens that carried it are revoked."""
        async with self.store.begin() as conn:
            role = await _require_role(conn, role_id)
            holders = [*await repos.role_assignments.find(conn, role_id=role_id),
                       *await repos.inherited_role_assignments.find(conn, role_id=role_id)]
            users = {a.user_id for a in holders if a.user_id}
            for grant in holders:
                if grant.group_id:
                    users |= {m.user_id for m in await repos.group_members.find(conn, group_id=grant.group_id)}
            await repos.role_assignments.delete_where(conn, role_id=role_id)
            await repos.inherited_role_assignments.delete_where(conn, role_id=role_id)
            for prior in await repos.roles.find(conn):
                if role_id in prior.implies:
                    await repos.roles.update(conn, prior.id, implies=[i for i in prior.implies if i != role_id])
            await repos.roles.delete(conn, role_id)
            if users:
                await revoke_tokens_where(conn, user_id=sorted(users))
        self.cache.forget(lambda token: token.user_id in users or role.name in token.roles)

    # -- implied roles (keystone's role inference rules) ------------------------

    async def imply_role(self, prior_role_id: str, implied_role_id: str) -> tuple[Role, Role]:
        async with self.store.begin() as conn:
            prior = await _require_role(conn, prior_role_id)
            implied = await _require_role(conn, implied_role_id)
            every_role = {role.id: role for role in await repos.roles.find(conn)}
            if prior.domain_id is None and implied.domain_id is not None:
                raise errors.InvalidImpliedRole(role_id=implied_role_id,
                                                message="Global role cannot imply a domain-specific role")
            if prior.id in {r.id for r in effective_roles([implied], every_role, domain_roles=True)}:
                raise errors.ForbiddenNotSecurity(
                    reason=f"{implied_role_id} role implies {prior_role_id}: an implication would make a loop.")
            if implied.id not in prior.implies:
                await repos.roles.update(conn, prior.id, implies=[*prior.implies, implied.id])
        return prior, implied

    async def implied_rule(self, prior_role_id: str, implied_role_id: str) -> tuple[Role, Role]:
        async with self.store.begin() as conn:
            prior = await _require_role(conn, prior_role_id)
            implied = await _require_role(conn, implied_role_id)
        if implied.id not in prior.implies:
            raise errors.ImpliedRoleNotFound(prior_role_id=prior_role_id, implied_role_id=implied_role_id)
        return prior, implied

    async def unimply_role(self, prior_role_id: str, implied_role_id: str) -> None:
        async with self.store.begin() as conn:
            prior = await _require_role(conn, prior_role_id)
            if implied_role_id not in prior.implies:
                raise errors.ImpliedRoleNotFound(prior_role_id=prior_role_id, implied_role_id=implied_role_id)
            await repos.roles.update(conn, prior.id, implies=[i for i in prior.implies if i != implied_role_id])

    def _forget(self, users: list[str], projects: list[str], domain_id: str) -> None:
        self.verified.forget_user(*users)
        held, scoped = set(users), set(projects)
        self.cache.forget(lambda token: token.user_id in held or token.project_id in scoped
                          or token.domain_id == domain_id)


async def _revoke_for(conn: StoreConnection, users: list[str], projects: list[str], domain_id: str) -> None:
    if users:
        await revoke_tokens_where(conn, user_id=users)
    if projects:
        await revoke_tokens_where(conn, project_id=projects)
    await revoke_tokens_where(conn, domain_id=domain_id)


async def _forget_user(conn: StoreConnection, user_id: str) -> None:
    """What refers to a user who is going away."""
    await repos.role_assignments.delete_where(conn, user_id=user_id)
    await repos.inherited_role_assignments.delete_where(conn, user_id=user_id)
    await repos.group_members.delete_where(conn, user_id=user_id)
    await repos.application_credentials.delete_where(conn, user_id=user_id)
    await repos.credentials.delete_where(conn, user_id=user_id)


async def _ensure_free(
    conn: StoreConnection, repo: Repository[Any], kind: str, entity_id: str | None, **name_filter: Any
) -> None:
    if await repo.first(conn, **name_filter) is not None:
        raise duplicate(kind, "name", name_filter["name"], name_filter.get("domain_id"))
    if entity_id is not None and await repo.get(conn, entity_id) is not None:
        raise duplicate(kind, "ID", entity_id, name_filter.get("domain_id"))


async def _require_domain(conn: StoreConnection, domain_id: str) -> Domain:
    domain = await repos.domains.get(conn, domain_id)
    if domain is None:
        raise errors.DomainNotFound(domain_id=domain_id)
    return domain


async def _require_project(conn: StoreConnection, project_id: str) -> Project:
    project = await repos.projects.get(conn, project_id)
    if project is None:
        raise errors.ProjectNotFound(project_id=project_id)
    return project


async def _require_user(conn: StoreConnection, user_id: str) -> User:
    user = await repos.users.get(conn, user_id)
    if user is None:
        raise errors.UserNotFound(user_id=user_id)
    return user


async def _require_role(conn: StoreConnection, role_id: str) -> Role:
    role = await repos.roles.get(conn, role_id)
    if role is None:
        raise errors.RoleNotFound(role_id=role_id)
    return role
