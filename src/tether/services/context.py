"""Who is asking: the request context every service operation receives."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace


def new_request_id() -> str:
    return f"req-{uuid.uuid4()}"


@dataclass(frozen=True)
class RequestContext:
    user_id: str
    project_id: str | None
    roles: frozenset[str] = frozenset()
    request_id: str = field(default_factory=new_request_id)
    system: bool = False
    # the domain of a domain-scoped token
    domain_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles

    @property
    def can_write(self) -> bool:
        return bool(self.roles & {"admin", "member"})

    def owns(self, project_id: str | None) -> bool:
        """Whether the caller may see a resource of ``project_id`` (admins see all)."""
        return self.is_admin or (project_id is not None and project_id == self.project_id)

    def fresh(self) -> RequestContext:
        """The same caller making a new request (a new request id, as every API call has)."""
        return replace(self, request_id=new_request_id())

    @classmethod
    def internal(cls, project_id: str | None = None) -> RequestContext:
        """The control plane acting on its own behalf (reconcilers, recovery, conductors)."""
        return cls(user_id="tether", project_id=project_id, roles=frozenset({"admin", "service"}),
                   system=True)
