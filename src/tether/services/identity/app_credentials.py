"""Application credentials: a user's delegated login to one project, with a subset of their roles there.

The secret is generated (or given), shown once, and kept only as an argon2 hash. Authenticating with
one gives a token on its project with its roles, as long as the user still holds every one of them
there; deleting it revokes the tokens it issued, as keystone does.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, replace
from typing import Any

from tether.domain.errors import identity as errors
from tether.domain.identity import ApplicationCredential, Role, Token, new_keystone_id
from tether.runtime.runtime import Runtime
from tether.services.identity.grants import Target, roles_held
from tether.services.identity.passwords import Passwords
from tether.services.identity.tokens import Grant, TokenCache, Tokens, revoke_tokens_where
from tether.services.identity.verified_secrets import VerifiedSecrets
from tether.store import repos
from tether.store.database import Store


@dataclass(frozen=True)
class Issued:
    """A new application credential, with its secret (the only time it is seen) and its roles."""

    credential: ApplicationCredential
    secret: str
    roles: list[Role]


@dataclass(eq=False)
class ApplicationCredentials:
    store: Store
    rng: random.Random
    rt: Runtime
    passwords: Passwords
    cache: TokenCache
    tokens: Tokens
    verified: VerifiedSecrets

    async def create(self, *, user_id: str, project_id: str, name: str, secret: str | None = None,
                     description: str = "", expires_at: float | None = None, unrestricted: bool = False,
                     roles: list[dict[str, Any]] | None = None) -> Issued:
        """``roles`` (each {"id"} or {"name"}) must be held by the user on the project; none given is all of them."""
        async with self.store.begin() as conn:
            held = await roles_held(conn, user_id, Target("project", project_id))
            if await repos.application_credentials.first(conn, user_id=user_id, name=name) is not None:
                raise errors.Conflict(type="application_credential",
                                      details=f"Duplicate entry found with name {name}")
        wanted = held if not roles else [self._pick(held, ref) for ref in roles]
        if expires_at is not None and expires_at <= self.rt.now():
            raise errors.ValidationError(reason="The expiration date of the application credential is in the past.")
        secret = secret or secrets.token_urlsafe(64)
        credential = ApplicationCredential(
            id=new_keystone_id(self.rng), name=name, user_id=user_id, project_id=project_id,
            secret_hash=await self.passwords.hash(secret), description=description, expires_at=expires_at,
            unrestricted=unrestricted, role_ids=[role.id for role in wanted])
        async with self.store.begin() as conn:
            await repos.application_credentials.add(conn, credential)
        return Issued(credential, secret, wanted)

    @staticmethod
    def _pick(held: list[Role], ref: dict[str, Any]) -> Role:
        for role in held:
            if ref.get("id") == role.id or ref.get("name") == role.name:
                return role
        raise errors.ForbiddenNotSecurity(
            reason=f"Invalid application credential: the user does not hold the role "
                   f"{ref.get('id') or ref.get('name')} on the project.")

    async def list(self, user_id: str, *, name: str | None = None) -> list[ApplicationCredential]:
        filters = {"user_id": user_id, **({"name": name} if name is not None else {})}
        async with self.store.begin() as conn:
            return await repos.application_credentials.find(conn, order_by=("name", "id"), **filters)

    async def get(self, user_id: str, credential_id: str) -> ApplicationCredential:
        async with self.store.begin() as conn:
            credential = await repos.application_credentials.get(conn, credential_id)
        if credential is None or credential.user_id != user_id:
            raise errors.ApplicationCredentialNotFound(application_credential_id=credential_id)
        return credential

    async def roles_of(self, credential: ApplicationCredential) -> list[Role]:
        async with self.store.begin() as conn:
            every_role = {role.id: role for role in await repos.roles.find(conn)}
        return [every_role[role_id] for role_id in credential.role_ids if role_id in every_role]

    async def delete(self, user_id: str, credential_id: str) -> None:
        """Delete one; the tokens it issued are revoked."""
        await self.get(user_id, credential_id)
        async with self.store.begin() as conn:
            await repos.application_credentials.delete(conn, credential_id)
            await revoke_tokens_where(conn, application_credential_id=credential_id)
        self.cache.forget(lambda token: token.application_credential_id == credential_id)
        self.verified.forget(f"application_credential:{credential_id}")

    async def authenticate(self, *, secret: str, id: str | None = None, name: str | None = None,
                           user_id: str | None = None, user_name: str | None = None,
                           user_domain_id: str | None = None, user_domain_name: str | None = None) -> Token:
        """The ``application_credential`` auth method; every failure is the same Unauthorized."""
        if not id and not (name and (user_id or user_name)):
            raise errors.ValidationError(
                reason="Expecting to find id or name and user in application_credential - the server could not "
                       "comply with the request since it is either malformed or otherwise incorrect. The client "
                       "is assumed to be in error.")
        async with self.store.begin() as conn:
            credential = None
            if id:
                credential = await repos.application_credentials.get(conn, id)
            else:
                if not user_id:
                    domain = (await repos.domains.first(conn, name=user_domain_name) if user_domain_name
                              else await repos.domains.get(conn, user_domain_id or ""))
                    user = await repos.users.first(conn, name=user_name, domain_id=domain.id) if domain else None
                    user_id = user.id if user else None
                if user_id:
                    credential = await repos.application_credentials.first(conn, user_id=user_id, name=name)
            grant = await self._grant(conn, credential) if credential is not None else None
        subject = f"application_credential:{credential.id}" if credential else ""
        digest = self.verified.digest(subject, credential.secret_hash if credential else "", secret)
        now = self.rt.now()
        # as for passwords: only what would succeed may skip the hash (services.identity.verified_secrets)
        if grant is not None and credential is not None and self.verified.recalls(subject, digest, now):
            secret_ok = True
        else:
            secret_ok = await self.passwords.verify(credential.secret_hash if credential else None, secret)
            if secret_ok and grant is not None and credential is not None:
                self.verified.remember(subject, credential.user_id, digest, now)
        if grant is None or credential is None or not secret_ok:
            raise errors.Unauthorized()
        return await self.tokens.issue(grant, methods=["application_credential"],
                                       application_credential_id=credential.id)

    async def grant_of(self, credential_id: str) -> Grant | None:
        """What credential ``credential_id`` still grants (its project, its roles); None if it no longer works."""
        async with self.store.begin() as conn:
            credential = await repos.application_credentials.get(conn, credential_id)
            return await self._grant(conn, credential) if credential is not None else None

    async def _grant(self, conn: Any, credential: ApplicationCredential) -> Grant | None:
        if credential.expires_at is not None and credential.expires_at <= self.rt.now():
            return None
        user = await repos.users.get(conn, credential.user_id)
        project = await repos.projects.get(conn, credential.project_id)
        if user is None or project is None or not user.enabled or not project.enabled:
            return None
        user_domain = await repos.domains.get(conn, user.domain_id)
        project_domain = await repos.domains.get(conn, project.domain_id)
        if user_domain is None or project_domain is None or not user_domain.enabled or not project_domain.enabled:
            return None
        held = await roles_held(conn, user.id, Target("project", project.id))
        held_ids = {role.id for role in held}
        if not set(credential.role_ids) <= held_ids:
            return None  # the user lost a role the credential carries: it no longer works, as in keystone
        roles = [role for role in held if role.id in set(credential.role_ids)]
        return replace(Grant(user=user, user_domain=user_domain), project=project, project_domain=project_domain,
                       roles=roles)
