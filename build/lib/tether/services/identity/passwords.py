"""Password hashing with argon2: the plain password is never stored or logged.

Hashing is deliberately slow, so it runs in a worker thread rather than on
the event loop, and never inside a database transaction (on SQLite every
transaction holds the one write connection).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from concurrent.futures import Future

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# Hashes started before anyone asked for them, by password and hasher parameters.
_early: dict[tuple[str, tuple[int, int, int]], Future[str]] = {}


def _parameters(hasher: PasswordHasher) -> tuple[int, int, int]:
    return hasher.time_cost, hasher.memory_cost, hasher.parallelism


def hash_early(*passwords: str, hasher: PasswordHasher | None = None) -> None:
    """Start hashing ``passwords`` on a thread now, for the ``Passwords.hash`` of each that will come.

    A first ``tether serve`` hashes its seed users' passwords, 0.2-0.3 s of
    CPU each; argon2 releases the GIL, so this overlaps them with importing
    the server. One thread hashes them in turn: on two cores, a thread each
    would take the importing thread's core from it half the time, and the
    import takes longer than both hashes.
    """
    hasher = hasher or PasswordHasher()
    parameters = _parameters(hasher)
    futures: dict[str, Future[str]] = {}
    for password in passwords:
        futures[password] = _early[(password, parameters)] = Future()

    def work() -> None:
        for password, future in futures.items():
            try:
                future.set_result(hasher.hash(password))
            except Exception as error:
                future.set_exception(error)

    threading.Thread(target=work, name="hash-early", daemon=True).start()


class Passwords:
    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()
        self._decoy: str | None = None

    async def hash(self, password: str) -> str:
        early = _early.pop((password, _parameters(self._hasher)), None)
        if early is not None:
            return await asyncio.wrap_future(early)
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, stored_hash: str | None, password: str) -> bool:
        """Whether ``password`` matches ``stored_hash``.

        With no hash (unknown user, or a user without a password) a decoy
        hash is checked instead, so the answer takes as long either way and
        timing does not tell which user names exist.
        """
        if not stored_hash:
            await asyncio.to_thread(self._check, await self._decoy_hash(), password)
            return False
        return await asyncio.to_thread(self._check, stored_hash, password)

    def needs_rehash(self, stored_hash: str) -> bool:
        try:
            return self._hasher.check_needs_rehash(stored_hash)
        except InvalidHashError:
            return True

    def _check(self, stored_hash: str, password: str) -> bool:
        try:
            return self._hasher.verify(stored_hash, password)
        except (VerificationError, InvalidHashError):
            return False

    async def _decoy_hash(self) -> str:
        if self._decoy is None:
            self._decoy = await self.hash(secrets.token_hex(16))
        return self._decoy
