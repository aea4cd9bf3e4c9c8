"""IdentityService: keystone's accounts, password tokens and catalog, each a module, assembled in one service.

``IdentityService`` holds no logic. It builds each part with exactly what that
part needs (the token cache, the verified secrets and the password hasher are
shared: what changes an account drops its holder's cached tokens and secrets) and offers the parts' public
methods under one name, which is how the API and the cloud reach them.
"""

from __future__ import annotations

import random

from argon2 import PasswordHasher

from tether.domain.identity import DEFAULT_CREDENTIAL_CACHE_SECONDS, DEFAULT_LOCKOUT, DEFAULT_TOKEN_TTL, Lockout
from tether.runtime.runtime import Runtime
from tether.services.identity.accounts import Accounts
from tether.services.identity.app_credentials import ApplicationCredentials
from tether.services.identity.assignments import Assignments
from tether.services.identity.bootstrap import Bootstrap
from tether.services.identity.catalog import Catalog
from tether.services.identity.credentials import Credentials
from tether.services.identity.domain_configs import DomainConfigs
from tether.services.identity.endpoint_groups import EndpointGroups
from tether.services.identity.groups import Groups
from tether.services.identity.oauth_consumers import OAuthConsumers
from tether.services.identity.passwords import Passwords
from tether.services.identity.policies import Policies
from tether.services.identity.rescoping import Rescoping
from tether.services.identity.token_format import token_body
from tether.services.identity.tokens import TokenCache, Tokens, context_for
from tether.services.identity.verified_secrets import VerifiedSecrets
from tether.store.database import Store

DEFAULT_TOKEN_CACHE_SECONDS = 30.0


class IdentityService:
    """Options:

    - ``token_ttl``: seconds a token lives (keystone's default, an hour).
    - ``lockout``: how many wrong passwords in a row lock a user out, and for how long.
    - ``token_cache_seconds``: how long this process trusts a validated token
      without reading the store again; bounds how late it sees a revocation
      made by another process (its own take effect at once). 0 disables the cache.
    - ``credential_cache_seconds``: how long a password or application credential secret that argon2
      accepted is recognised without hashing it again (``verified_secrets``); 0 disables it.
    - ``password_hasher``: an argon2 ``PasswordHasher``; the library's
      defaults unless given (tests pass cheap parameters).
    """

    def __init__(
        self,
        store: Store,
        runtime: Runtime,
        rng: random.Random,
        *,
        token_ttl: float = DEFAULT_TOKEN_TTL,
        lockout: Lockout = DEFAULT_LOCKOUT,
        token_cache_seconds: float = DEFAULT_TOKEN_CACHE_SECONDS,
        credential_cache_seconds: float = DEFAULT_CREDENTIAL_CACHE_SECONDS,
        password_hasher: PasswordHasher | None = None,
    ) -> None:
        self.store = store
        self.rt = runtime
        passwords = Passwords(password_hasher)
        cache = TokenCache(ttl=token_cache_seconds)
        verified = VerifiedSecrets(ttl=credential_cache_seconds)
        tokens = Tokens(store, runtime, passwords=passwords, cache=cache, token_ttl=token_ttl, lockout=lockout,
                        verified=verified)
        bootstrap = Bootstrap(store, rng, passwords=passwords, cache=cache)
        accounts = Accounts(store, rng, passwords=passwords, cache=cache, verified=verified)
        # the parts the admin API reaches as a whole
        self.accounts = accounts
        self.assignments = Assignments(store, cache)
        self.groups = Groups(store, rng, cache)
        self.catalogs = Catalog(store, rng)
        self.application_credentials = ApplicationCredentials(store, rng, runtime, passwords, cache, tokens, verified)
        self.verified_secrets = verified
        self.credentials = Credentials(store, rng)
        self.oauth_consumers = OAuthConsumers(store, rng)
        self.domain_configs = DomainConfigs(store)
        self.policies = Policies(store, rng)
        self.endpoint_groups = EndpointGroups(store, rng)

        self.bootstrap = bootstrap.bootstrap
        self.has_password = bootstrap.has_password
        # tokens, and what the API makes of them
        self.authenticate = tokens.authenticate
        self.rescope = Rescoping(tokens, self.application_credentials).authenticate
        self.validate_token = tokens.validate_token
        self.revoke_token = tokens.revoke_token
        self.purge_expired_tokens = tokens.purge_expired_tokens
        self.context_for = context_for
        self.catalog = self.catalogs.catalog
        self.register_own_endpoints = self.catalogs.register_own
        self.token_body = token_body
        # domains
        self.create_domain = accounts.create_domain
        self.get_domain = accounts.get_domain
        self.find_domain = accounts.find_domain
        self.list_domains = accounts.list_domains
        # projects
        self.create_project = accounts.create_project
        self.get_project = accounts.get_project
        self.find_project = accounts.find_project
        self.list_projects = accounts.list_projects
        self.update_project = accounts.update_project
        # users
        self.create_user = accounts.create_user
        self.get_user = accounts.get_user
        self.find_user = accounts.find_user
        self.list_users = accounts.list_users
        self.update_user = accounts.update_user
        # roles and their assignments
        self.create_role = accounts.create_role
        self.get_role = accounts.get_role
        self.find_role = accounts.find_role
        self.list_roles = accounts.list_roles
        self.assign_role = self.assignments.assign_role
        self.unassign_role = self.assignments.unassign_role
        self.list_role_assignments = self.assignments.list_role_assignments
        self.roles_for = self.assignments.roles_for

    def now(self) -> float:
        return self.rt.now()
