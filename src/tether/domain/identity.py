"""Identity entities: domains, projects, users, roles, tokens."""

from __future__ import annotations

from dataclasses import dataclass, field

ROLES = ("admin", "member", "reader", "service")
DEFAULT_DOMAIN_ID = "default"


@dataclass
class Domain:
    id: str
    name: str
    enabled: bool = True


@dataclass
class Project:
    id: str
    name: str
    domain_id: str = DEFAULT_DOMAIN_ID
    enabled: bool = True
    description: str = ""


@dataclass
class User:
    id: str
    name: str
    password_hash: str
    domain_id: str = DEFAULT_DOMAIN_ID
    enabled: bool = True
    default_project_id: str | None = None


@dataclass
class Role:
    id: str
    name: str


@dataclass
class RoleAssignment:
    user_id: str
    project_id: str
    role_id: str


@dataclass
class Token:
    id: str
    user_id: str
    project_id: str | None
    system: bool
    roles: list[str] = field(default_factory=list)
    issued_at: float = 0.0
    expires_at: float = 0.0
    revoked: bool = False
    audit_id: str = ""

    def is_valid(self, now: float) -> bool:
        return not self.revoked and now < self.expires_at
