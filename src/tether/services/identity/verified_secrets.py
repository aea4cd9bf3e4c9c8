"""Secrets verified a moment ago, so a service that logs in for every call pays argon2 once a while, not per call.

A deployment's services (Ironic, above all) ask for a new token before nearly every request they
make, each time with the same password. argon2id is slow on purpose; paying it per call makes the
token path the bottleneck of a whole cloud. Keystone deployments cut the cost by remembering what
was checked; this is that memory, with the same properties as the hash it stands in for:

- it remembers only what argon2 accepted a moment before (``remember`` after a verified login);
- it holds no password: an entry is an HMAC-SHA-256, under a secret made when the process starts and
  never stored, of the subject, the stored hash and the secret presented. A new password is a new
  stored hash, so an entry made for the old one can never match again, in this process or any other;
- an entry is trusted for ``ttl`` seconds from the verification that made it (using it does not
  extend it), at most ``max_entries`` of them (the least recently verified go first);
- the digests are compared in constant time, looked up by subject (a user or credential id), never
  by digest;
- it is only a shortcut for the hash: whoever asks still checks everything else (user and project
  enabled, lockout, roles) in the store on every login, and asks it only on a path that would succeed.
  Every failure still costs one full hash, so a failure's time says nothing new.

What takes a right away (a new password, disabling, lockout, deletion) also drops the holder's entries
at once (``forget_user``), so nothing stale lingers even in memory.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass

from tether.domain.identity import DEFAULT_CREDENTIAL_CACHE_SECONDS


@dataclass(frozen=True)
class _Verified:
    digest: bytes
    user_id: str
    verified_at: float


class VerifiedSecrets:
    """Options: ``ttl`` seconds an entry is trusted (0 turns the cache off) and ``max_entries``."""

    def __init__(self, *, ttl: float = DEFAULT_CREDENTIAL_CACHE_SECONDS, max_entries: int = 10_000) -> None:
        if ttl < 0 or max_entries < 1:
            raise ValueError(f"a credential cache needs ttl >= 0 and max_entries >= 1, not {ttl!r}, {max_entries!r}")
        self.ttl = ttl
        self.max_entries = max_entries
        self._key = secrets.token_bytes(32)
        self._entries: OrderedDict[str, _Verified] = OrderedDict()

    def digest(self, subject: str, stored_hash: str, secret: str) -> bytes:
        """The entry ``secret`` would have for ``subject`` whose store holds ``stored_hash`` now."""
        message = b"\0".join(part.encode() for part in (subject, stored_hash, secret))
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def recalls(self, subject: str, digest: bytes, now: float) -> bool:
        """Whether ``digest`` is what argon2 accepted for ``subject`` less than ``ttl`` seconds ago."""
        entry = self._entries.get(subject)
        if entry is None:
            return False
        if now - entry.verified_at >= self.ttl or now < entry.verified_at:
            del self._entries[subject]
            return False
        return hmac.compare_digest(entry.digest, digest)

    def remember(self, subject: str, user_id: str, digest: bytes, now: float) -> None:
        """Call only after argon2 accepted the secret behind ``digest`` for ``subject``."""
        if self.ttl <= 0:
            return
        self._entries[subject] = _Verified(digest, user_id, now)
        self._entries.move_to_end(subject)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, subject: str) -> None:
        self._entries.pop(subject, None)

    def forget_user(self, *user_ids: str) -> None:
        """Drop every entry that logs in as one of ``user_ids``: their password and their application credentials."""
        gone = set(user_ids)
        for subject in [subject for subject, entry in self._entries.items() if entry.user_id in gone]:
            del self._entries[subject]

    def __len__(self) -> int:
        return len(self._entries)
