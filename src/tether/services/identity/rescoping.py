"""keystone's ``token`` auth method: a live token buys one on another scope, without the password again.

As keystone does: the new token ends when the one it came from ends (re-scoping never extends a login),
carries that token's audit id as the second of its ``audit_ids``, lists ``token`` before the methods of
the token it came from, and is checked like a login (user and domain enabled, roles on the new scope).
A system-scoped token does not buy a project or domain one, and a token that an application credential
made stays on that credential's project with its roles.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.errors import identity as errors
from tether.domain.identity import Token
from tether.services.identity.app_credentials import ApplicationCredentials
from tether.services.identity.tokens import Grant, Tokens


@dataclass(eq=False)
class Rescoping:
    tokens: Tokens
    application_credentials: ApplicationCredentials

    async def authenticate(
        self, *, token_id: str, project_id: str | None = None, project_name: str | None = None,
        project_domain_id: str | None = None, project_domain_name: str | None = None,
        domain_id: str | None = None, domain_name: str | None = None, system: bool = False,
        unscoped: bool = False,
    ) -> Token:
        """``unscoped`` asks for what no scope gives a re-scoping anyway: a token without a project."""
        try:
            original = await self.tokens.validate_token(token_id)
        except errors.Unauthorized:
            raise errors.TokenNotFound(token_id=token_id) from None
        wants_project, wants_domain = bool(project_id or project_name), bool(domain_id or domain_name)
        if original.system and (wants_project or wants_domain):
            raise errors.Forbidden(action="Using a system-scoped token to create a project-scoped or domain-scoped "
                                          "token is not allowed.")
        grant: Grant | None
        if original.application_credential_id:
            grant = await self.application_credentials.grant_of(original.application_credential_id)
            if grant is not None and (system or wants_domain or (wants_project and not _is_project_of(
                    grant, project_id, project_name, project_domain_id, project_domain_name))):
                raise errors.ApplicationCredentialAuthError(detail="Application credentials cannot request a scope.")
        else:
            grant = await self.tokens.scoped_grant(
                original.user_id, project_id=project_id, project_name=project_name,
                project_domain_id=project_domain_id, project_domain_name=project_domain_name,
                domain_id=domain_id, domain_name=domain_name, system=system)
        if grant is None:
            raise errors.Unauthorized()
        methods = ["token", *(method for method in original.methods if method != "token")]
        return await self.tokens.issue(grant, methods=methods,
                                       application_credential_id=original.application_credential_id,
                                       expires_at=original.expires_at,
                                       parent_audit_id=original.parent_audit_id or original.audit_id)


def _is_project_of(grant: Grant, project_id: str | None, name: str | None, domain_id: str | None,
                   domain_name: str | None) -> bool:
    project, domain = grant.project, grant.project_domain
    if project is None or domain is None:
        return False
    if project_id:
        return project_id == project.id
    return name == project.name and domain_id in (None, domain.id) and domain_name in (None, domain.name)
