"""The accounts every Tether cloud starts with, as ``keystone-manage bootstrap`` makes them."""

from __future__ import annotations

import asyncio
import random
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from tether.domain.identity import (
    ADMIN_PROJECT_NAME,
    DEFAULT_DOMAIN_ID,
    DEFAULT_DOMAIN_NAME,
    DEFAULT_IMPLIED_ROLES,
    ROLES,
    SYSTEM_ALL,
    Domain,
    Project,
    Role,
    RoleAssignment,
    User,
    new_keystone_id,
)
from tether.services.identity.passwords import Passwords
from tether.services.identity.tokens import TokenCache, revoke_tokens_where
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

PROJECTS = (ADMIN_PROJECT_NAME, "demo", "service")
# (user, project, role); the user is named after the project
ASSIGNMENTS = (("admin", ADMIN_PROJECT_NAME, "admin"), ("demo", "demo", "member"))


@dataclass(eq=False)
class Bootstrap:
    store: Store
    rng: random.Random
    _: KW_ONLY
    passwords: Passwords
    cache: TokenCache

    async def bootstrap(self, *, admin_password: str | None, demo_password: str | None) -> None:
        """The Default domain, roles admin/member/reader/service (admin implies
        member implies reader), projects admin, demo and service, and users
        admin (admin on admin and on the system) and demo (member on demo).

        Idempotent: what exists is kept. As keystone-manage bootstrap does, a
        bootstrap user that is disabled is enabled again, and one whose
        password no longer matches gets the given one (and loses its tokens).
        A password of None keeps the user's (one made now gets none: it cannot log in).
        """
        passwords = {"admin": admin_password, "demo": demo_password}
        async with self.store.begin() as conn:
            existing = {name: await repos.users.first(conn, name=name, domain_id=DEFAULT_DOMAIN_ID)
                        for name in passwords}
        # Hashing is slow, so it happens before the transaction, not in it, and the
        # users' hashes are worked out side by side (argon2 releases the GIL).
        async def new_hash(name: str, password: str) -> str | None:
            user = existing[name]
            if password is None:
                return None
            if user is None or not await self.passwords.verify(user.password_hash, password):
                return await self.passwords.hash(password)
            return None

        results = await asyncio.gather(*(new_hash(name, password) for name, password in passwords.items()))
        new_hashes = {name: digest for name, digest in zip(passwords, results, strict=True) if digest is not None}

        for attempt in (1, 2):
            try:
                async with self.store.begin() as conn:
                    reset = await self._bootstrap_rows(conn, new_hashes)
                break
            except IntegrityError:
                # another process bootstrapped at the same moment; what it made is now there to find
                if attempt == 2:
                    raise
        if reset:
            self.cache.forget(lambda token: token.user_id in reset)

    async def has_password(self, user_name: str, password: str) -> bool:
        """Whether the bootstrap user ``user_name`` logs in with ``password`` (the default ones are checked
        before a cloud is served beyond loopback)."""
        async with self.store.begin() as conn:
            user = await repos.users.first(conn, name=user_name, domain_id=DEFAULT_DOMAIN_ID)
        return user is not None and await self.passwords.verify(user.password_hash, password)

    async def _bootstrap_rows(self, conn: StoreConnection, new_hashes: dict[str, str]) -> set[str]:
        """Create what is missing; returns the ids of users whose password was reset."""
        if await repos.domains.get(conn, DEFAULT_DOMAIN_ID) is None:
            await repos.domains.add(conn, Domain(id=DEFAULT_DOMAIN_ID, name=DEFAULT_DOMAIN_NAME))

        roles: dict[str, Role] = {}
        for name in ROLES:
            role = await repos.roles.first(conn, name=name)
            if role is None:
                role = await repos.roles.add(conn, Role(id=new_keystone_id(self.rng), name=name))
            roles[name] = role
        for prior_name, implied_name in DEFAULT_IMPLIED_ROLES:
            prior, implied = roles[prior_name], roles[implied_name]
            if implied.id not in prior.implies:
                prior.implies = [*prior.implies, implied.id]
                await repos.roles.update(conn, prior.id, implies=prior.implies)

        projects: dict[str, Project] = {}
        for name in PROJECTS:
            project = await repos.projects.first(conn, name=name, domain_id=DEFAULT_DOMAIN_ID)
            if project is None:
                project = await repos.projects.add(conn, Project(id=new_keystone_id(self.rng), name=name))
            projects[name] = project

        reset: set[str] = set()
        for user_name, project_name, role_name in ASSIGNMENTS:
            user = await repos.users.first(conn, name=user_name, domain_id=DEFAULT_DOMAIN_ID)
            if user is None:
                user = await repos.users.add(conn, User(id=new_keystone_id(self.rng), name=user_name,
                                                        password_hash=new_hashes.get(user_name, "")))
            else:
                changes: dict[str, object] = {}
                if not user.enabled:
                    changes["enabled"] = True
                if user_name in new_hashes:
                    changes["password_hash"] = new_hashes[user_name]
                    reset.add(user.id)
                    await revoke_tokens_where(conn, user_id=user.id)
                if changes:
                    await repos.users.update(conn, user.id, **changes)
            assignment = RoleAssignment(user_id=user.id, project_id=projects[project_name].id,
                                        role_id=roles[role_name].id)
            if not await repos.role_assignments.count(conn, user_id=assignment.user_id,
                                                      project_id=assignment.project_id,
                                                      role_id=assignment.role_id):
                await repos.role_assignments.add(conn, assignment)
            if user_name == "admin" and not await repos.role_assignments.count(
                    conn, user_id=user.id, system=SYSTEM_ALL, role_id=roles["admin"].id):
                await repos.role_assignments.add(
                    conn, RoleAssignment(user_id=user.id, system=SYSTEM_ALL, role_id=roles["admin"].id))
        return reset
