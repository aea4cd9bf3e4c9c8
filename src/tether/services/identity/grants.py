"""Who holds which role where: the pure shape of a grant, and a user's roles on a target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.identity import SYSTEM_ALL, InheritedRoleAssignment, Project, Role, RoleAssignment, effective_roles
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


def grant_of(actor: Actor, target: Target, role_id: str, *, inherited: bool = False) -> RoleAssignment:
    kind = InheritedRoleAssignment if inherited else RoleAssignment
    return kind(role_id=role_id, **actor.columns(), **target.columns())


async def inherited_from(conn: StoreConnection, project_id: str) -> list[Target]:
    """Where an inherited grant reaches ``project_id`` from: its domain and each project above it."""
    project = await repos.projects.get(conn, project_id)
    if project is None:
        return []
    sources = [Target("domain", project.domain_id)]
    seen = {project.id}
    while project.parent_id and project.parent_id not in seen:
        parent = await repos.projects.get(conn, project.parent_id)
        if parent is None:
            break
        seen.add(parent.id)
        sources.append(Target("project", parent.id))
        project = parent
    return sources


def projects_below(grant: RoleAssignment, projects: list[Project]) -> list[str]:
    """The projects an inherited grant reaches: every project of its domain, or every project under its project."""
    if grant.domain_id:
        return [p.id for p in projects if p.domain_id == grant.domain_id]
    children: dict[str, list[str]] = {}
    for project in projects:
        if project.parent_id:
            children.setdefault(project.parent_id, []).append(project.id)
    below: list[str] = []
    pending = list(children.get(grant.project_id, []))
    while pending:
        project_id = pending.pop()
        if project_id not in below:
            below.append(project_id)
            pending += children.get(project_id, [])
    return below


async def roles_held(conn: StoreConnection, user_id: str, target: Target) -> list[Role]:
    """The roles ``user_id`` holds on ``target``, through their groups and inherited grants too, implied ones
    included."""
    group_ids = [m.group_id for m in await repos.group_members.find(conn, user_id=user_id)]
    grants: list[RoleAssignment] = [*await repos.role_assignments.find(conn, user_id=user_id, **target.columns())]
    if group_ids:
        grants += await repos.role_assignments.find(conn, group_id=group_ids, **target.columns())
    if target.kind == "project":
        # OS-INHERIT: what the project's domain and the projects above it pass down
        for source in await inherited_from(conn, target.id):
            grants += await repos.inherited_role_assignments.find(conn, user_id=user_id, **source.columns())
            if group_ids:
                grants += await repos.inherited_role_assignments.find(conn, group_id=group_ids,
                                                                      **source.columns())
    if not grants:
        return []
    every_role = {role.id: role for role in await repos.roles.find(conn)}
    direct = [every_role[a.role_id] for a in grants if a.role_id in every_role]
    return effective_roles(direct, every_role)
