"""Identity entities: domains, projects, users, roles, tokens."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.domain.ids import new_uuid

ROLES = ("admin", "member", "reader", "service")
DEFAULT_DOMAIN_ID = "default"
DEFAULT_DOMAIN_NAME = "Default"

# keystone-manage bootstrap makes admin imply member and member imply reader,
# so an admin's token lists all three and policy can ask for the weakest role.
DEFAULT_IMPLIED_ROLES = (("admin", "member"), ("member", "reader"))

# The project keystone-manage bootstrap makes for the admin user.
ADMIN_PROJECT_NAME = "admin"
# Seconds a token lives: keystone's [token] expiration default, an hour.
DEFAULT_TOKEN_TTL = 3600.0
# Seconds a secret that argon2 accepted is recognised again without the hash (services.identity.verified_secrets).
DEFAULT_CREDENTIAL_CACHE_SECONDS = 60.0

# keystone's one system: the target of a system role assignment.
SYSTEM_ALL = "all"

NAME_MAX_LENGTH = 255


def new_keystone_id(rng: random.Random) -> str:
    """Keystone's ids for projects, users and roles: a uuid4 as 32 hex digits."""
    return new_uuid(rng).replace("-", "")


@dataclass
class Domain:
    id: str
    name: str
    enabled: bool = True
    description: str = ""


@dataclass
class Project:
    id: str
    name: str
    domain_id: str = DEFAULT_DOMAIN_ID
    enabled: bool = True
    description: str = ""
    # keystone's hierarchy: a top-level project's parent is its domain (given as None here).
    parent_id: str | None = None
    tags: list[str] = field(default_factory=list)
    # attributes keystone does not know, kept and returned as given (keystone's ``extra``)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class User:
    id: str
    name: str
    # An argon2 hash, or "" for a user who cannot log in with a password.
    password_hash: str = field(repr=False)
    domain_id: str = DEFAULT_DOMAIN_ID
    enabled: bool = True
    default_project_id: str | None = None
    description: str = ""
    # attributes keystone does not know (an email, say), kept and returned as given
    extra: dict[str, Any] = field(default_factory=dict)
    # keystone's failed_auth_count and failed_auth_at: wrong passwords since the last right one
    failed_auth_count: int = 0
    failed_auth_at: float | None = None


@dataclass(frozen=True)
class Lockout:
    """keystone's [security_compliance] lockout_failure_attempts and lockout_duration: a user who
    gives ``attempts`` wrong passwords in a row is locked out for ``seconds`` (0 attempts: never)."""

    attempts: int = 6
    seconds: float = 300.0

    def locked(self, user: User, now: float) -> bool:
        return (self.attempts > 0 and user.failed_auth_count >= self.attempts
                and (user.failed_auth_at or 0.0) + self.seconds > now)

    def failed(self, user: User, now: float) -> int:
        """The count after one more wrong password: a lock that has run out starts the count again."""
        if self.attempts > 0 and user.failed_auth_count >= self.attempts and not self.locked(user, now):
            return 1
        return user.failed_auth_count + 1


# Six wrong passwords lock a user for five minutes (keystone leaves it off by default; a
# cloud that anyone on the network can reach should not).
DEFAULT_LOCKOUT = Lockout()


@dataclass
class Group:
    id: str
    name: str
    domain_id: str = DEFAULT_DOMAIN_ID
    description: str = ""


@dataclass
class GroupMember:
    group_id: str
    user_id: str


@dataclass
class Role:
    id: str
    name: str
    # Ids of the roles this one implies (keystone's implied_roles, kept on the prior role).
    implies: list[str] = field(default_factory=list)
    description: str = ""
    # keystone's domain-specific role: never in a token itself, only the global roles it implies
    domain_id: str | None = None


@dataclass
class RoleAssignment:
    """A role held by one actor (a user or a group) on one target (a project, a domain or the system).

    Exactly one of ``user_id``/``group_id`` and one of ``project_id``/``domain_id``/``system``
    is set; the others are "" (not None: every column is part of the key).
    """

    role_id: str
    user_id: str = ""
    project_id: str = ""
    group_id: str = ""
    domain_id: str = ""
    system: str = ""

    @property
    def actor(self) -> tuple[str, str]:
        return ("user", self.user_id) if self.user_id else ("group", self.group_id)

    @property
    def target(self) -> tuple[str, str]:
        if self.project_id:
            return "project", self.project_id
        if self.domain_id:
            return "domain", self.domain_id
        return "system", self.system


@dataclass
class InheritedRoleAssignment(RoleAssignment):
    """keystone's OS-INHERIT grant: held on every project below its domain or project (not on the target
    itself); kept in a table of its own, with the same columns."""


@dataclass
class Region:
    id: str
    description: str = ""
    parent_region_id: str | None = None


@dataclass
class CatalogService:
    """A service in the catalog (keystone's ``service``)."""

    id: str
    type: str
    name: str = ""
    description: str = ""
    enabled: bool = True


@dataclass
class Endpoint:
    id: str
    service_id: str
    interface: str
    url: str
    region_id: str | None = None
    enabled: bool = True


ENDPOINT_INTERFACES = ("public", "internal", "admin")


@dataclass
class ApplicationCredential:
    """A user's delegated login to one project; ``secret_hash`` is an argon2 hash of the secret."""

    id: str
    name: str
    user_id: str
    project_id: str
    secret_hash: str = field(repr=False)
    description: str = ""
    expires_at: float | None = None
    unrestricted: bool = False
    role_ids: list[str] = field(default_factory=list)


@dataclass
class Token:
    """An issued token, with what its body needs captured at issue time.

    In the store ``id`` holds a SHA-256 digest of the token, never the token
    itself (see services.identity.tokens); the service hands out the real id.
    """

    id: str = field(repr=False)
    user_id: str
    project_id: str | None
    system: bool
    roles: list[str] = field(default_factory=list)
    issued_at: float = 0.0
    expires_at: float = 0.0
    revoked: bool = False
    audit_id: str = ""
    methods: list[str] = field(default_factory=lambda: ["password"])
    user_name: str = ""
    user_domain_id: str = DEFAULT_DOMAIN_ID
    user_domain_name: str = DEFAULT_DOMAIN_NAME
    project_name: str | None = None
    project_domain_id: str | None = None
    project_domain_name: str | None = None
    # role name -> role id, for the token body's [{id, name}]
    role_ids: dict[str, str] = field(default_factory=dict)
    domain_id: str | None = None
    domain_name: str | None = None
    application_credential_id: str | None = None
    # keystone's audit chain: the audit id of the token this one was re-scoped from (the chain's first)
    parent_audit_id: str | None = None

    def is_valid(self, now: float) -> bool:
        return not self.revoked and now < self.expires_at

    @property
    def is_unscoped(self) -> bool:
        return self.project_id is None and self.domain_id is None and not self.system


def effective_roles(direct: Iterable[Role], every_role: Mapping[str, Role], *,
                    domain_roles: bool = False) -> list[Role]:
    """The roles ``direct`` grant, with everything they imply, each once.

    Direct roles come in name order, each followed by what it implies
    (depth first), so an admin reads ["admin", "member", "reader"]. A domain-specific
    role is left out, what it implies kept, as keystone does.
    """
    result: list[Role] = []
    seen: set[str] = set()

    def visit(role: Role) -> None:
        if role.id in seen:
            return
        seen.add(role.id)
        if domain_roles or role.domain_id is None:
            result.append(role)
        for implied_id in role.implies:
            implied = every_role.get(implied_id)
            if implied is not None:
                visit(implied)

    for role in sorted(direct, key=lambda r: r.name):
        visit(role)
    return result


@dataclass
class Credential:
    """A secret a user keeps in keystone (keystone's ``credential``): an ec2 key pair, a certificate, ...

    ``blob`` is the serialized secret as the user gave it; an ec2 credential's ``id`` is the sha256
    of its access key, so that the key alone finds it (keystone's ``hash_access_key``).
    """

    id: str
    user_id: str
    type: str
    blob: str
    project_id: str | None = None
    # attributes keystone does not know, kept and returned as given
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class OAuthConsumer:
    """An OAuth 1.0a consumer (keystone's OS-OAUTH1 ``consumer``); its secret is shown once, at creation."""

    id: str
    secret_hash: str = field(repr=False)
    description: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class DomainConfig:
    """A domain's own identity-driver options (keystone's domain-specific configuration), by group.

    ``sensitive`` holds the options keystone never reads back (an LDAP password), apart from ``options``.
    """

    domain_id: str
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    sensitive: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Policy:
    """A policy blob kept for a service to fetch (keystone's /v3/policies); Tether itself never reads it."""

    id: str
    type: str
    blob: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class EndpointGroup:
    """keystone's OS-EP-FILTER endpoint group: endpoints picked by ``filters`` (service_id, region_id,
    interface)."""

    id: str
    name: str
    filters: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
