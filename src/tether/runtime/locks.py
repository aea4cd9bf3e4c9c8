"""Per-resource locks, always taken in one order (design rule 4).

A stack resource's own changes run under its lock (it calls compute and the
network service, so it comes first); everything that changes an instance's
network attachments runs under that instance's lock; node VIF and provisioning work under the node's; a port's
own changes under the port's. Taking them out of order (a node lock and then
an instance lock) is refused outright rather than left to deadlock one day.
Waiting for a lock is a scheduling point for the explorer.

``Locks`` is the interface the services use; ``MemoryLocks`` keeps them in
this process. Several processes sharing one PostgreSQL database need another
implementation (advisory locks) behind the same interface.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Hashable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

ORDER = ("stack", "instance", "node", "port")


class LockOrderViolation(RuntimeError):
    pass


class Locks(Protocol):
    def is_locked(self, kind: str, key: str) -> bool: ...

    def holder(self, kind: str, key: str) -> object | None: ...

    async def acquire(self, kind: str, key: str, timeout: float | None = None) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds (forever if None); False if not taken."""

    def try_acquire(self, kind: str, key: str) -> bool: ...

    def release(self, kind: str, key: str) -> None: ...

    def hold(self, kind: str, key: str) -> AbstractAsyncContextManager[None]: ...


class Signals(Protocol):
    """What the locks need of the kernel: time, who is running, and waiting for a signal."""

    def now(self) -> float: ...

    def owner(self) -> object: ...

    async def wait(self, key: Hashable, timeout: float | None, point: str = "wait", *, guard: bool = False) -> bool:
        ...

    def notify(self, key: Hashable) -> None: ...


class MemoryLocks:
    def __init__(self, signals: Signals) -> None:
        self._signals = signals
        self._held: dict[tuple[str, str], object] = {}
        self._by_owner: dict[object, list[tuple[str, str]]] = {}

    def holder(self, kind: str, key: str) -> object | None:
        return self._held.get((kind, key))

    def is_locked(self, kind: str, key: str) -> bool:
        return (kind, key) in self._held

    async def acquire(self, kind: str, key: str, timeout: float | None = None) -> bool:
        signals = self._signals
        owner = signals.owner()
        mine = self._by_owner.get(owner, [])
        rank = ORDER.index(kind)
        for held_kind, _ in mine:
            if ORDER.index(held_kind) > rank:
                raise LockOrderViolation(f"{kind} lock {key} taken while holding a {held_kind} lock")
        slot = (kind, key)
        if self._held.get(slot) is owner:
            raise LockOrderViolation(f"{kind} lock {key} is not re-entrant")
        deadline = None if timeout is None else signals.now() + timeout
        while slot in self._held:
            remaining = None if deadline is None else deadline - signals.now()
            if remaining is not None and remaining <= 0:
                return False
            await signals.wait(("lock", kind, key), remaining, point=f"lock.wait.{kind}", guard=True)
        self._held[slot] = owner
        self._by_owner.setdefault(owner, []).append(slot)
        return True

    def try_acquire(self, kind: str, key: str) -> bool:
        slot = (kind, key)
        if slot in self._held:
            return False
        owner = self._signals.owner()
        self._held[slot] = owner
        self._by_owner.setdefault(owner, []).append(slot)
        return True

    def release(self, kind: str, key: str) -> None:
        slot = (kind, key)
        if slot in self._held and self._held[slot] is not self._signals.owner():
            raise LockOrderViolation(f"{kind} lock {key} released by an actor that does not hold it")
        owner = self._held.pop(slot, None)
        if owner is not None:
            slots = self._by_owner.get(owner, [])
            if slot in slots:
                slots.remove(slot)
            if not slots:
                self._by_owner.pop(owner, None)
        self._signals.notify(("lock", kind, key))

    @asynccontextmanager
    async def hold(self, kind: str, key: str) -> AsyncIterator[None]:
        await self.acquire(kind, key)
        try:
            yield
        finally:
            self.release(kind, key)
