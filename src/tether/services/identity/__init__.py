"""Identity (keystone): accounts, password authentication, tokens and the service catalog.

- ``accounts``: domains, projects, users, roles and role assignments.
- ``bootstrap``: the accounts every cloud starts with.
- ``tokens``: authentication, validation, revocation, the token cache.
- ``passwords``: argon2 hashing off the event loop.
- ``catalog`` and ``token_format``: pure functions that shape the token response.
"""

from tether.services.identity.catalog import build_catalog
from tether.services.identity.service import IdentityService
from tether.services.identity.token_format import token_body

__all__ = ["IdentityService", "build_catalog", "token_body"]
