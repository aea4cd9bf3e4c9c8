"""Identity (keystone): accounts, password authentication, tokens and the service catalog.

- ``accounts``: domains, projects, users, roles and role assignments.
- ``bootstrap``: the accounts every cloud starts with.
- ``tokens``: authentication, validation, revocation, the token cache.
- ``passwords``: argon2 hashing off the event loop.
- ``catalog`` and ``token_format``: pure functions that shape the token response.
- ``service``: ``IdentityService``, which assembles these and offers their methods.

Nothing is imported here: ``tether serve`` starts hashing the seed passwords
(``passwords.hash_early``) before it imports the rest of the cloud.
"""
