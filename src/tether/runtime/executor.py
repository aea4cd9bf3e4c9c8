"""How operations are run: the executor protocol, and plain asyncio for `tether serve`.

The kernel asks its executor to yield at a checkpoint, to sleep, to wait for
a signal, to signal, and to run work in the background. ``AsyncioExecutor``
does each with asyncio, freely and in real time. The deterministic scheduler
of ``tether.sim`` is the other implementation: it grants one operation at a
time the right to run from checkpoint to checkpoint, in virtual time.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import defaultdict
from collections.abc import Coroutine, Hashable
from typing import Any, Protocol

from tether.runtime.errors import ControlPlaneCrash
from tether.runtime.transactions import in_transaction

log = logging.getLogger(__name__)


class Executor(Protocol):
    def owner(self) -> object:
        """Who is running now: what holds a lock taken here."""

    def actor_name(self) -> str | None:
        """The running operation's name, where the executor names them."""

    def crashed(self) -> ControlPlaneCrash | None:
        """The crash that ended this incarnation, if the executor saw one."""

    def crash(self, crash: ControlPlaneCrash) -> None:
        """The control plane died: no operation may take another step."""

    async def yield_at(self, point: str) -> None:
        """A checkpoint: where another operation may run."""

    async def sleep(self, seconds: float, point: str) -> None: ...

    async def wait(self, key: Hashable, timeout: float | None, point: str, guard: bool) -> bool:
        """Wait for ``notify(key)``; False after ``timeout`` seconds."""

    def notify(self, key: Hashable) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, daemon: bool) -> asyncio.Task[Any] | None: ...

    async def drain(self) -> None:
        """Wait until no background work is left (where the executor can)."""

    async def cancel_background(self) -> None: ...


class AsyncioExecutor:
    """Operations as asyncio tasks, running freely: checkpoints cost next to nothing."""

    def __init__(self) -> None:
        self._waiters: dict[Hashable, set[asyncio.Future[bool]]] = defaultdict(set)
        self._tasks: set[asyncio.Task[Any]] = set()

    def owner(self) -> object:
        return asyncio.current_task()

    def actor_name(self) -> str | None:
        return None

    def crashed(self) -> ControlPlaneCrash | None:
        return None

    def crash(self, crash: ControlPlaneCrash) -> None:
        pass

    async def yield_at(self, point: str) -> None:
        pass

    async def sleep(self, seconds: float, point: str) -> None:
        await asyncio.sleep(seconds)

    async def wait(self, key: Hashable, timeout: float | None, point: str, guard: bool) -> bool:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters[key].add(future)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return False
        finally:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(future)
                if not waiters:
                    del self._waiters[key]

    def notify(self, key: Hashable) -> None:
        for future in self._waiters.get(key, ()):
            if not future.done():
                future.set_result(True)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str, daemon: bool) -> asyncio.Task[Any] | None:
        context = contextvars.copy_context()
        # Spawned work starts outside any transaction of its parent's.
        context.run(in_transaction.set, False)
        task = asyncio.get_running_loop().create_task(coro, name=name, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, ControlPlaneCrash):
            return
        if error is not None:
            log.error("background task %s failed", task.get_name(), exc_info=error)

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def cancel_background(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.drain()
