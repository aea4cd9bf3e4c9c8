"""Password authentication, token validation and revocation, keystone's way.

Token ids are random (``secrets``, never the seeded RNG: a replayed scenario
must not hand out guessable bearer tokens). The store keeps only a SHA-256
digest of each id, so a copy of the database holds no live token.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sqlalchemy import delete

from tether.domain.errors import identity as errors
from tether.domain.identity import (
    DEFAULT_LOCKOUT,
    Domain,
    Lockout,
    Project,
    Role,
    Token,
    User,
)
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.identity.grants import SYSTEM, Target, roles_held
from tether.services.identity.passwords import Passwords
from tether.services.identity.verified_secrets import VerifiedSecrets
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


def token_digest(token_id: str) -> str:
    return hashlib.sha256(token_id.encode()).hexdigest()


def new_audit_id() -> str:
    """22 url-safe characters, as keystone's ``random_urlsafe_str``."""
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()


class TokenCache:
    """Recently seen tokens, so validating one per request costs no database read.

    An entry is trusted for ``ttl`` seconds. Revocation in this process drops
    entries at once; a revocation by another process is seen when the entry
    ages out. ``generation`` moves on every drop, so a read that raced a
    revocation is not cached.
    """

    def __init__(self, *, ttl: float, max_entries: int = 10_000) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.generation = 0
        self._entries: OrderedDict[str, tuple[Token, float]] = OrderedDict()

    def get(self, token_id: str, now: float) -> Token | None:
        entry = self._entries.get(token_id)
        if entry is None:
            return None
        token, cached_at = entry
        if now - cached_at >= self.ttl:
            del self._entries[token_id]
            return None
        return token

    def put(self, token: Token, now: float, generation: int) -> None:
        if generation != self.generation or self.ttl <= 0:
            return
        self._entries[token.id] = (token, now)
        self._entries.move_to_end(token.id)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, matches: Callable[[Token], bool]) -> None:
        self.generation += 1
        for token_id in [tid for tid, (token, _) in self._entries.items() if matches(token)]:
            del self._entries[token_id]

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class Grant:
    """What a successful lookup found: the user and the scope they asked for."""

    user: User
    user_domain: Domain
    project: Project | None = None
    project_domain: Domain | None = None
    domain: Domain | None = None
    system: bool = False
    roles: list[Role] = field(default_factory=list)


async def revoke_tokens_where(conn: StoreConnection, **filters: object) -> int:
    return await repos.tokens.update_where(conn, filters, revoked=True)


def context_for(token: Token, *, request_id: str | None = None) -> RequestContext:
    """The request context of a (validated) token's holder."""
    extra = {"request_id": request_id} if request_id is not None else {}
    return RequestContext(user_id=token.user_id, project_id=token.project_id,
                          roles=frozenset(token.roles), system=token.system, domain_id=token.domain_id, **extra)


class Tokens:
    """Tokens issued, validated and revoked; each lives ``token_ttl`` seconds."""

    def __init__(
        self, store: Store, rt: Runtime, *, passwords: Passwords, cache: TokenCache, token_ttl: float,
        verified: VerifiedSecrets, lockout: Lockout = DEFAULT_LOCKOUT,
    ) -> None:
        if token_ttl <= 0:
            raise ValueError(f"token_ttl must be positive, not {token_ttl!r}")
        self.store = store
        self.rt = rt
        self.passwords = passwords
        self.cache = cache
        self.verified = verified
        self.token_ttl = token_ttl
        self.lockout = lockout

    async def authenticate(
        self,
        *,
        password: str,
        user_id: str | None = None,
        user_name: str | None = None,
        user_domain_id: str | None = None,
        user_domain_name: str | None = None,
        project_id: str | None = None,
        project_name: str | None = None,
        project_domain_id: str | None = None,
        project_domain_name: str | None = None,
        domain_id: str | None = None,
        domain_name: str | None = None,
        system: bool = False,
        unscoped: bool = False,
    ) -> Token:
        """Password authentication; project-, domain- or system-scoped, or unscoped.

        Every failure after the request's shape is checked (unknown user or
        domain, wrong password, disabled user, project or domain, no role on
        the scope) is the same Unauthorized, so a caller learns nothing
        about which part was wrong.
        """
        if not user_id and not user_name:
            raise errors.MissingAttribute(attribute="id or name", target="user")
        if not user_id and not (user_domain_id or user_domain_name):
            raise errors.MissingAttribute(attribute="domain", target="user")
        if sum(map(bool, (system, project_id or project_name, domain_id or domain_name))) > 1:
            raise errors.MissingAttribute(
                attribute="system, project, domain, OS-TRUST:trust or unscoped", target="scope"
            )
        if not project_id and project_name and not (project_domain_id or project_domain_name):
            raise errors.MissingAttribute(attribute="domain", target="project")

        async with self.store.begin() as conn:
            found = await _find_user(conn, user_id, user_name, user_domain_id, user_domain_name)
            user = found.user if found is not None else None
            grant = await _scope(conn, found, project_id, project_name, project_domain_id, project_domain_name,
                                 domain_id, domain_name, system)
            if (grant is not None and grant.user.default_project_id and not system and not unscoped
                    and not (project_id or project_name or domain_id or domain_name)):
                # keystone scopes a request without a scope to the user's default project, when they
                # still hold a role there; otherwise the token stays unscoped
                grant = await _resolve_scope(conn, grant, grant.user.default_project_id, None, None, None,
                                             False) or grant
        now = self.rt.now()
        locked = user is not None and self.lockout.locked(user, now)
        subject = f"password:{user.id}" if user else ""
        digest = self.verified.digest(subject, user.password_hash if user else "", password)
        # Only a login that would succeed may skip the hash; every failure (a locked user too) checks
        # it, so the time taken tells nothing of which part was wrong.
        if grant is not None and not locked and self.verified.recalls(subject, digest, now):
            password_ok = True
        else:
            password_ok = await self.passwords.verify(user.password_hash if user else None, password)
            if password_ok and grant is not None and not locked:
                self.verified.remember(subject, grant.user.id, digest, now)
        if user is not None and locked:
            raise errors.AccountLocked(user_id=user.id)
        if user is not None and not password_ok:
            async with self.store.begin() as conn:
                # conditional: of two wrong passwords at once, each counts (the loser reads again)
                counted: User | None = user
                while counted is not None and not await repos.users.update(
                        conn, counted.id, expect={"failed_auth_count": counted.failed_auth_count},
                        failed_auth_count=self.lockout.failed(counted, now), failed_auth_at=now):
                    counted = await repos.users.get(conn, counted.id)
            if counted is not None and self.lockout.locked(
                    replace(counted, failed_auth_count=self.lockout.failed(counted, now), failed_auth_at=now), now):
                self.verified.forget_user(counted.id)
        if grant is None or not password_ok:
            raise errors.Unauthorized()

        rehashed = None
        if self.passwords.needs_rehash(grant.user.password_hash):
            rehashed = await self.passwords.hash(password)
        token = self._new_token(grant)
        async with self.store.begin() as conn:
            await repos.tokens.add(conn, replace(token, id=token_digest(token.id)))
            if rehashed is not None:
                await repos.users.update(conn, grant.user.id, expect={"password_hash": grant.user.password_hash},
                                         password_hash=rehashed)
            if grant.user.failed_auth_count:
                await repos.users.update(conn, grant.user.id, failed_auth_count=0, failed_auth_at=None)
        self.cache.put(token, token.issued_at, self.cache.generation)
        return token

    async def validate_token(self, token_id: str) -> Token:
        """The live token ``token_id``; Unauthorized when unknown, expired or revoked."""
        now = self.rt.now()
        token = self.cache.get(token_id, now)
        if token is None:
            generation = self.cache.generation
            async with self.store.begin() as conn:
                stored = await repos.tokens.get(conn, token_digest(token_id))
            if stored is None:
                raise errors.Unauthorized()
            token = replace(stored, id=token_id)
            self.cache.put(token, now, generation)
        if not token.is_valid(now):
            raise errors.Unauthorized()
        return token

    async def revoke_token(self, token_id: str) -> None:
        """Revoke a live token at once; TokenNotFound when it is not live."""
        now = self.rt.now()
        digest = token_digest(token_id)
        async with self.store.begin() as conn:
            stored = await repos.tokens.get(conn, digest)
            if stored is None or not stored.is_valid(now):
                raise errors.TokenNotFound(token_id=token_id)
            await repos.tokens.update(conn, digest, revoked=True)
        self.cache.forget(lambda token: token.id == token_id)

    async def purge_expired_tokens(self) -> int:
        """Delete tokens past their expiry (revoked or not); returns how many."""
        table = repos.tokens.table
        async with self.store.begin() as conn:
            result = await conn.execute(delete(table).where(table.c.expires_at <= self.rt.now()))
        return result.rowcount

    async def scoped_grant(
        self, user_id: str, *, project_id: str | None = None, project_name: str | None = None,
        project_domain_id: str | None = None, project_domain_name: str | None = None, domain_id: str | None = None,
        domain_name: str | None = None, system: bool = False,
    ) -> Grant | None:
        """What user ``user_id`` (enabled, in an enabled domain) holds on the scope asked for; None if nothing."""
        async with self.store.begin() as conn:
            found = await _find_user(conn, user_id, None, None, None)
            return await _scope(conn, found, project_id, project_name, project_domain_id, project_domain_name,
                                domain_id, domain_name, system)

    async def issue(self, grant: Grant, *, methods: list[str], application_credential_id: str | None = None,
                    expires_at: float | None = None, parent_audit_id: str | None = None) -> Token:
        """A new token for what another auth method (an application credential, a token) has found and checked.

        ``expires_at`` caps its life (a re-scoped token ends when the token it came from does).
        """
        token = self._new_token(grant)
        token = replace(token, methods=methods, application_credential_id=application_credential_id,
                        expires_at=min(token.expires_at, expires_at or token.expires_at),
                        parent_audit_id=parent_audit_id)
        async with self.store.begin() as conn:
            await repos.tokens.add(conn, replace(token, id=token_digest(token.id)))
        self.cache.put(token, token.issued_at, self.cache.generation)
        return token

    def _new_token(self, grant: Grant) -> Token:
        now = self.rt.now()
        project, project_domain = grant.project, grant.project_domain
        return Token(
            id=secrets.token_hex(32),
            user_id=grant.user.id,
            project_id=project.id if project else None,
            system=grant.system,
            roles=[role.name for role in grant.roles],
            issued_at=now,
            expires_at=now + self.token_ttl,
            audit_id=new_audit_id(),
            methods=["password"],
            user_name=grant.user.name,
            user_domain_id=grant.user_domain.id,
            user_domain_name=grant.user_domain.name,
            project_name=project.name if project else None,
            project_domain_id=project_domain.id if project_domain else None,
            project_domain_name=project_domain.name if project_domain else None,
            role_ids={role.name: role.id for role in grant.roles},
            domain_id=grant.domain.id if grant.domain else None,
            domain_name=grant.domain.name if grant.domain else None,
        )


# -- lookups ------------------------------------------------------------------


async def _find_user(
    conn: StoreConnection,
    user_id: str | None,
    user_name: str | None,
    domain_id: str | None,
    domain_name: str | None,
) -> Grant | None:
    if user_id:
        user = await repos.users.get(conn, user_id)
        domain = await repos.domains.get(conn, user.domain_id) if user else None
    else:
        domain = await _find_domain(conn, domain_id, domain_name)
        user = await repos.users.first(conn, name=user_name, domain_id=domain.id) if domain else None
    if user is None or domain is None or not user.enabled or not domain.enabled:
        return None
    return Grant(user=user, user_domain=domain)


async def _scope(
    conn: StoreConnection, found: Grant | None, project_id: str | None, project_name: str | None,
    project_domain_id: str | None, project_domain_name: str | None, domain_id: str | None, domain_name: str | None,
    system: bool,
) -> Grant | None:
    if found is None:
        return None
    grant = await _resolve_scope(conn, found, project_id, project_name, project_domain_id, project_domain_name, system)
    if grant is not None and (domain_id or domain_name):
        grant = await _domain_scope(conn, grant, domain_id, domain_name)
    return grant


async def _resolve_scope(
    conn: StoreConnection,
    grant: Grant,
    project_id: str | None,
    project_name: str | None,
    domain_id: str | None,
    domain_name: str | None,
    system: bool,
) -> Grant | None:
    if system:
        roles = await roles_held(conn, grant.user.id, SYSTEM)
        return replace(grant, system=True, roles=roles) if roles else None
    if not project_id and not project_name:
        return grant
    if project_id:
        project = await repos.projects.get(conn, project_id)
        domain = await repos.domains.get(conn, project.domain_id) if project else None
    else:
        domain = await _find_domain(conn, domain_id, domain_name)
        project = await repos.projects.first(conn, name=project_name, domain_id=domain.id) if domain else None
    if project is None or domain is None or not project.enabled or not domain.enabled:
        return None
    roles = await roles_held(conn, grant.user.id, Target("project", project.id))
    if not roles:
        return None
    return replace(grant, project=project, project_domain=domain, roles=roles)


async def _domain_scope(
    conn: StoreConnection, grant: Grant, domain_id: str | None, domain_name: str | None
) -> Grant | None:
    domain = await _find_domain(conn, domain_id, domain_name)
    if domain is None or not domain.enabled:
        return None
    roles = await roles_held(conn, grant.user.id, Target("domain", domain.id))
    return replace(grant, domain=domain, roles=roles) if roles else None


async def _find_domain(conn: StoreConnection, domain_id: str | None, domain_name: str | None) -> Domain | None:
    if domain_name:
        return await repos.domains.first(conn, name=domain_name)
    return await repos.domains.get(conn, domain_id)
