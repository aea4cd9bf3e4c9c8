"""IdentityService: keystone's accounts, password tokens and catalog in one service."""

from __future__ import annotations

import random

from argon2 import PasswordHasher

from tether.domain.identity import Token
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.identity.accounts import AccountOperations
from tether.services.identity.bootstrap import BootstrapOperation
from tether.services.identity.catalog import build_catalog
from tether.services.identity.passwords import Passwords
from tether.services.identity.token_format import token_body
from tether.services.identity.tokens import TokenCache, TokenOperations
from tether.store.database import Store

DEFAULT_TOKEN_TTL = 3600.0
DEFAULT_TOKEN_CACHE_SECONDS = 30.0


class IdentityService(BootstrapOperation, TokenOperations, AccountOperations):
    """Options:

    - ``token_ttl``: seconds a token lives (keystone's default, an hour).
    - ``token_cache_seconds``: how long this process trusts a validated token
      without reading the store again; bounds how late it sees a revocation
      made by another process (its own take effect at once). 0 disables the cache.
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
        token_cache_seconds: float = DEFAULT_TOKEN_CACHE_SECONDS,
        password_hasher: PasswordHasher | None = None,
    ) -> None:
        super().__init__(store, runtime, rng)
        if token_ttl <= 0:
            raise ValueError(f"token_ttl must be positive, not {token_ttl!r}")
        self.token_ttl = token_ttl
        self._passwords = Passwords(password_hasher)
        self._token_cache = TokenCache(ttl=token_cache_seconds)

    def context_for(self, token: Token, *, request_id: str | None = None) -> RequestContext:
        """The request context of a (validated) token's holder."""
        extra = {"request_id": request_id} if request_id is not None else {}
        return RequestContext(user_id=token.user_id, project_id=token.project_id,
                              roles=frozenset(token.roles), system=token.system, **extra)

    catalog = staticmethod(build_catalog)
    token_body = staticmethod(token_body)
