"""Who holds which role where: the pure shape of a grant, and a user's roles on a target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.identity import SYSTEM_ALL, Role, RoleAssignment, effective_roles
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


@dataclass(frozen=True)
class Target:
    """Where a role is held: ``kind`` is "project", "domain" or "system"."""

    kind: str
    id: str

    def columns(self) -> dict[str, str]:
        return {"project_id": self.id if self.kind == "project" else "",
                "domain_id": self.id if self.kind == "domain" else "",
                "system": self.id if self.kind == "system" else ""}


SYSTEM = Target("system", SYSTEM_ALL)


@dataclass(frozen=True)
class Actor:
    """Who holds a role: ``kind`` is "user" or "group"."""

    kind: str
    id: str

    def columns(self) -> dict[str, str]:
        return {"user_id": self.id if self.kind == "user" else "", "group_id": self.id if self.kind == "group" else ""}


def grant_of(actor: Actor, target: Target, role_id: str) -> RoleAssignment:
    return RoleAssignment(role_id=role_id, **actor.columns(), **target.columns())


async def roles_held(conn: StoreConnection, user_id: str, target: Target) -> list[Role]:
    """The roles ``user_id`` holds on ``target``, through their groups too, implied ones included."""
    group_ids = [m.group_id for m in await repos.group_members.find(conn, user_id=user_id)]
    grants = await repos.role_assignments.find(conn, user_id=user_id, **target.columns())
    if group_ids:
        grants += await repos.role_assignments.find(conn, group_id=group_ids, **target.columns())
    if not grants:
        return []
    every_role = {role.id: role for role in await repos.roles.find(conn)}
    direct = [every_role[a.role_id] for a in grants if a.role_id in every_role]
    return effective_roles(direct, every_role)
