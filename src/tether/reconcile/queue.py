"""A keyed work queue, after client-go's: de-duplicated, delayed adds, per-key back-off.

A key waiting in the queue is there once however often it is added; a key
added while it is being worked on is queued again when that work is done, so
no change is lost and no key is worked on twice at once. Waiting goes through
the runtime, so the queue runs the same under asyncio and under the explorer's
scheduler.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass

from tether.runtime.runtime import Runtime


@dataclass(frozen=True, order=True)
class Key:
    """What a reconciler looks at: an instance, a node or a port, by its id."""

    kind: str  # "instance" | "node" | "port"
    id: str

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class WorkQueue:
    def __init__(self, rt: Runtime, *, base_delay: float = 1.0, max_delay: float = 300.0) -> None:
        self._rt = rt
        self._base_delay, self._max_delay = base_delay, max_delay
        self._queue: deque[Key] = deque()
        self._dirty: set[Key] = set()
        self._processing: set[Key] = set()
        self._delayed: list[tuple[float, int, Key]] = []
        self._due: dict[Key, float] = {}  # when each delayed key is due: a key waits once, at its earliest
        self._seq = itertools.count()
        self._failures: dict[Key, int] = {}
        self._signal = ("reconcile.queue", id(self))

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: Key) -> None:
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._rt.notify(self._signal)

    def add_after(self, key: Key, delay: float) -> None:
        """``key`` again in ``delay`` seconds; adds of a key already waiting coalesce into the earliest."""
        if delay <= 0:
            self.add(key)
            return
        due = self._rt.now() + delay
        if self._due.get(key, due + 1) <= due:
            return
        self._due[key] = due
        heapq.heappush(self._delayed, (due, next(self._seq), key))
        self._rt.notify(self._signal)

    def add_rate_limited(self, key: Key) -> None:
        """Again later, each failure in a row doubling the wait."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self._base_delay * 2**failures, self._max_delay))

    def forget(self, key: Key) -> None:
        """The key succeeded: its back-off starts over."""
        self._failures.pop(key, None)

    def get_nowait(self) -> Key | None:
        self._promote_due()
        if not self._queue:
            return None
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    async def get(self) -> Key:
        while True:
            key = self.get_nowait()
            if key is not None:
                return key
            wait = self._delayed[0][0] - self._rt.now() if self._delayed else None
            await self._rt.wait(self._signal, wait, point="reconcile.queue.wait", guard=True)

    def done(self, key: Key) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._rt.notify(self._signal)

    def _promote_due(self) -> None:
        now = self._rt.now()
        while self._delayed and self._delayed[0][0] <= now:
            due, _, key = heapq.heappop(self._delayed)
            if self._due.get(key) == due:  # not superseded by an earlier add of the same key
                del self._due[key]
                self.add(key)
