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

from collections.abc import AsyncIterator, Hashable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

ORDER = ("stack", "instance", "node", "port")
_RANK = {kind: rank for rank, kind in enumerate(ORDER)}

Slot = tuple[str, str]  # (kind, key)


class LockError(RuntimeError):
    """A lock used against its rules: a programming error, never a condition to handle."""


class LockOrderViolation(LockError):
    """A lock asked for while holding one that comes later in ``ORDER`` (rule 4)."""

    def __init__(self, held: Slot, wanted: Slot) -> None:
        self.held, self.wanted = held, wanted
        super().__init__(f"{wanted[0]} lock {wanted[1]} taken while holding {held[0]} lock {held[1]}: "
                         f"locks are taken in the order {' -> '.join(ORDER)}")


class LockMisuse(LockError):
    """A lock taken twice by its holder, or released by an actor that does not hold it."""


def check_order(held: Iterable[Slot], wanted: Slot) -> None:
    """Refuse ``wanted`` if a lock in ``held`` comes later in ``ORDER``: one comparison per lock held.

    Every implementation of ``Locks`` calls it before it takes or waits for a lock.
    """
    rank = _RANK[wanted[0]]  # a kind outside ORDER is a KeyError: every lock has its place
    for slot in held:
        if _RANK[slot[0]] > rank:
            raise LockOrderViolation(slot, wanted)


class Locks(Protocol):
    def is_locked(self, kind: str, key: str) -> bool: ...

    def holder(self, kind: str, key: str) -> object | None: ...

    async def acquire(self, kind: str, key: str, timeout: float | None = None) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds (forever if None); False if not taken.

        Raises ``LockOrderViolation`` if the caller holds a lock of a kind later in ``ORDER``.
        """

    def try_acquire(self, kind: str, key: str) -> bool:
        """Take the lock if it is free; ``LockOrderViolation`` as ``acquire``."""

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
        slot = (kind, key)
        self._check_order(owner, slot)
        if self._held.get(slot) is owner:
            raise LockMisuse(f"{kind} lock {key} is not re-entrant")
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
        owner = self._signals.owner()
        self._check_order(owner, slot)
        if slot in self._held:
            return False
        self._held[slot] = owner
        self._by_owner.setdefault(owner, []).append(slot)
        return True

    def release(self, kind: str, key: str) -> None:
        slot = (kind, key)
        if slot in self._held and self._held[slot] is not self._signals.owner():
            raise LockMisuse(f"{kind} lock {key} released by an actor that does not hold it")
        owner = self._held.pop(slot, None)
        if owner is not None:
            slots = self._by_owner.get(owner, [])
            if slot in slots:
                slots.remove(slot)
            if not slots:
                self._by_owner.pop(owner, None)
        self._signals.notify(("lock", kind, key))

    def _check_order(self, owner: object, wanted: Slot) -> None:
        check_order(self._by_owner.get(owner, ()), wanted)

    @asynccontextmanager
    async def hold(self, kind: str, key: str) -> AsyncIterator[None]:
        await self.acquire(kind, key)
        try:
            yield
        finally:
            self.release(kind, key)
