"""Domains, projects, users, roles and role assignments."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain.errors import identity as errors
from tether.domain.identity import (
    ADMIN_PROJECT_NAME,
    DEFAULT_DOMAIN_ID,
    NAME_MAX_LENGTH,
    Domain,
    Project,
    Role,
    RoleAssignment,
    User,
    effective_roles,
    new_keystone_id,
)
from tether.services.identity.passwords import Passwords
from tether.services.identity.tokens import TokenCache, revoke_tokens_where
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
    """What keystone's admin API manages: domains, projects, users, roles and their assignments.

    What takes a right away (disabling, a new password, a role taken back)
    revokes the tokens that carried it, in the store and in the shared token cache.
    """

    store: Store
    rng: random.Random
    _: KW_ONLY
    passwords: Passwords
    cache: TokenCache

    # -- domains ------------------------------------------------------------

    async def create_domain(self, *, name: str, id: str | None = None, enabled: bool = True) -> Domain:
        domain = Domain(id=id or new_keystone_id(self.rng), name=check_name(name), enabled=enabled)
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

    async def list_domains(self, *, name: str | None = None) -> list[Domain]:
        async with self.store.begin() as conn:
            return await repos.domains.find(conn, order_by=("name",), **_given(name=name))

    # -- projects -----------------------------------------------------------

    async def create_project(
        self,
        *,
        name: str,
        domain_id: str = DEFAULT_DOMAIN_ID,
        description: str = "",
        enabled: bool = True,
        id: str | None = None,
    ) -> Project:
        project = Project(id=id or new_keystone_id(self.rng), name=check_name(name), domain_id=domain_id,
                          enabled=enabled, description=description)
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
        self, *, domain_id: str | None = None, name: str | None = None, enabled: bool | None = None
    ) -> list[Project]:
        async with self.store.begin() as conn:
            return await repos.projects.find(
                conn, order_by=("name", "id"), **_given(domain_id=domain_id, name=name, enabled=enabled)
            )

    async def update_project(
        self,
        project_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        enabled: bool | None = None,
    ) -> Project:
        """Change a project; disabling it revokes every token scoped to it."""
        changes = _given(name=check_name(name) if name is not None else None,
                         description=description, enabled=enabled)
        with conflicts_as("project", name or project_id):
            async with self.store.begin() as conn:
                project = await _require_project(conn, project_id)
                if name is not None and name != project.name:
                    await _ensure_free(conn, repos.projects, "project", None, name=name,
                                       domain_id=project.domain_id)
                if changes:
                    await repos.projects.update(conn, project_id, **changes)
                if enabled is False:
                    await revoke_tokens_where(conn, project_id=project_id)
                updated = await _require_project(conn, project_id)
        if enabled is False:
            self.cache.forget(lambda token: token.project_id == project_id)
        return updated

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
    ) -> User:
        """A user; without a password (None or "") they cannot authenticate by password."""
        check_name(name)
        password_hash = await self.passwords.hash(password) if password else ""
        user = User(id=id or new_keystone_id(self.rng), name=name, password_hash=password_hash, domain_id=domain_id,
                    enabled=enabled, default_project_id=default_project_id)
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
        self, *, domain_id: str | None = None, name: str | None = None, enabled: bool | None = None
    ) -> list[User]:
        async with self.store.begin() as conn:
            return await repos.users.find(
                conn, order_by=("name", "id"), **_given(domain_id=domain_id, name=name, enabled=enabled)
            )

    async def update_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        password: str | None = None,
        enabled: bool | None = None,
    ) -> User:
        """Change a user; disabling them or changing their password revokes their tokens, as keystone does."""
        if name is not None:
            check_name(name)
        password_hash = await self.passwords.hash(password) if password else None
        changes = _given(name=name, password_hash=password_hash, enabled=enabled)
        revoke = enabled is False or password_hash is not None
        with conflicts_as("user", name or user_id):
            async with self.store.begin() as conn:
                user = await _require_user(conn, user_id)
                if name is not None and name != user.name:
                    await _ensure_free(conn, repos.users, "user", None, name=name, domain_id=user.domain_id)
                if changes:
                    await repos.users.update(conn, user_id, **changes)
                if revoke:
                    await revoke_tokens_where(conn, user_id=user_id)
                updated = await _require_user(conn, user_id)
        if revoke:
            self.cache.forget(lambda token: token.user_id == user_id)
        return updated

    # -- roles --------------------------------------------------------------

    async def create_role(self, *, name: str, id: str | None = None) -> Role:
        role = Role(id=id or new_keystone_id(self.rng), name=check_name(name))
        with conflicts_as("role", name):
            async with self.store.begin() as conn:
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

    # -- assignments --------------------------------------------------------

    async def assign_role(self, *, user_id: str, project_id: str, role_id: str) -> None:
        """Grant a role on a project; granting one already held changes nothing."""
        assignment = RoleAssignment(user_id=user_id, project_id=project_id, role_id=role_id)
        try:
            async with self.store.begin() as conn:
                await _require_user(conn, user_id)
                await _require_project(conn, project_id)
                await _require_role(conn, role_id)
                if not await repos.role_assignments.count(conn, **_key(assignment)):
                    await repos.role_assignments.add(conn, assignment)
        except IntegrityError:
            pass  # another writer granted it first: the outcome is the same

    async def unassign_role(self, *, user_id: str, project_id: str, role_id: str) -> None:
        """Take a role back; the user's tokens on that project are revoked, as keystone does."""
        async with self.store.begin() as conn:
            removed = await repos.role_assignments.delete_where(
                conn, user_id=user_id, project_id=project_id, role_id=role_id
            )
            if not removed:
                raise errors.RoleAssignmentNotFound(role_id=role_id, actor_id=user_id, target_id=project_id)
            await revoke_tokens_where(conn, user_id=user_id, project_id=project_id)
            project = await repos.projects.get(conn, project_id)
            # system scope rests on the admin project's roles (see Tokens.authenticate)
            admin_project = (project is not None and project.name == ADMIN_PROJECT_NAME
                             and project.domain_id == DEFAULT_DOMAIN_ID)
            if admin_project:
                await revoke_tokens_where(conn, user_id=user_id, system=True)
        self.cache.forget(
            lambda token: token.user_id == user_id and (token.project_id == project_id or
                                                        (admin_project and token.system))
        )

    async def list_role_assignments(
        self, *, user_id: str | None = None, project_id: str | None = None, role_id: str | None = None
    ) -> list[RoleAssignment]:
        async with self.store.begin() as conn:
            return await repos.role_assignments.find(
                conn, order_by=("user_id", "project_id", "role_id"),
                **_given(user_id=user_id, project_id=project_id, role_id=role_id),
            )

    async def roles_for(self, user_id: str, project_id: str) -> list[Role]:
        """The roles a user holds on a project, implied ones included."""
        async with self.store.begin() as conn:
            assignments = await repos.role_assignments.find(conn, user_id=user_id, project_id=project_id)
            every_role = {role.id: role for role in await repos.roles.find(conn)}
        direct = [every_role[a.role_id] for a in assignments if a.role_id in every_role]
        return effective_roles(direct, every_role)


def _key(assignment: RoleAssignment) -> dict[str, str]:
    return {"user_id": assignment.user_id, "project_id": assignment.project_id, "role_id": assignment.role_id}


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
