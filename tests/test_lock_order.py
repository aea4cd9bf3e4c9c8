"""Rule 4's lock order (stack, instance, node, port) refused at run time, in serve and under the explorer."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

import pytest

from tether.runtime.clock import VirtualClock
from tether.runtime.locks import ORDER, LockMisuse, LockOrderViolation, MemoryLocks
from tether.runtime.runtime import Runtime
from tether.services.compute.delete import Delete
from tether.sim.explore import ExploreOptions, explore
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import run_scenario
from tether.sim.scheduler import Scheduler, scheduled_runtime


def test_the_declared_order() -> None:
    assert ORDER == ("stack", "instance", "node", "port")


@pytest.mark.parametrize(("held", "wanted"), [("node", "instance"), ("port", "node"), ("port", "instance"),
                                              ("instance", "stack"), ("node", "stack")])
async def test_serve_refuses_a_lock_out_of_order_naming_both(held: str, wanted: str) -> None:
    rt = Runtime()  # what `tether serve` runs on: plain asyncio
    async with rt.locks.hold(held, "h-1"):
        with pytest.raises(LockOrderViolation) as raised:
            await rt.locks.acquire(wanted, "w-1")
        with pytest.raises(LockOrderViolation):
            rt.locks.try_acquire(wanted, "w-2")
    error = raised.value
    assert (error.held, error.wanted) == ((held, "h-1"), (wanted, "w-1"))
    assert f"{held} lock h-1" in str(error) and f"{wanted} lock w-1" in str(error)
    assert not rt.locks.is_locked(wanted, "w-1") and not rt.locks.is_locked(wanted, "w-2")


async def test_serve_takes_locks_in_order_and_the_same_kind_twice() -> None:
    rt = Runtime()
    async with (rt.locks.hold("stack", "s"), rt.locks.hold("instance", "i"), rt.locks.hold("instance", "j"),
                rt.locks.hold("node", "n")):
        assert rt.locks.try_acquire("port", "p")
        rt.locks.release("port", "p")
    with pytest.raises(LockMisuse):
        async with rt.locks.hold("node", "n"):
            await rt.locks.acquire("node", "n")


async def test_the_scheduler_refuses_it_too() -> None:
    rt = scheduled_runtime(Scheduler(VirtualClock(0.0)))

    async def wrong_order() -> None:
        async with rt.locks.hold("node", "n-1"):
            rt.locks.try_acquire("instance", "i-1")

    rt.spawn(wrong_order(), name="w")
    await rt.executor.scheduler.run()  # type: ignore[attr-defined]
    error = rt.executor.scheduler.actors[0].error  # type: ignore[attr-defined]
    assert isinstance(error, LockOrderViolation)
    assert (error.held, error.wanted) == (("node", "n-1"), ("instance", "i-1"))


async def test_a_lock_wait_with_a_timeout_gets_the_lock_released_in_time_and_gives_up_after() -> None:
    """Killed a surviving mutant (``remaining <= 0`` made ``>= 0``: every timed wait gave up at once)."""
    rt = scheduled_runtime(Scheduler(VirtualClock(0.0)))
    got: dict[str, bool] = {}

    async def holder() -> None:
        async with rt.locks.hold("node", "n-1"):
            await rt.sleep(5.0)

    async def waiter(name: str, timeout: float) -> None:
        got[name] = await rt.locks.acquire("node", "n-1", timeout=timeout)
        if got[name]:
            rt.locks.release("node", "n-1")

    rt.spawn(holder(), name="holder")
    rt.spawn(waiter("patient", 10.0), name="patient")
    rt.spawn(waiter("hasty", 1.0), name="hasty")
    await rt.executor.scheduler.run()  # type: ignore[attr-defined]
    assert got == {"patient": True, "hasty": False}


async def test_a_timed_wait_shorter_than_a_second_gets_a_lock_released_before_its_deadline() -> None:
    """Kills ``remaining <= 0`` made ``<= 1``: a wait with under a second left gave up without waiting."""
    rt = scheduled_runtime(Scheduler(VirtualClock(0.0)))
    got: list[bool] = []

    async def holder() -> None:
        async with rt.locks.hold("node", "n-1"):
            await rt.sleep(0.25)

    async def waiter() -> None:
        got.append(await rt.locks.acquire("node", "n-1", timeout=0.5))
        rt.locks.release("node", "n-1")

    rt.spawn(holder(), name="holder")
    rt.spawn(waiter(), name="waiter")
    await rt.executor.scheduler.run()  # type: ignore[attr-defined]
    assert got == [True]


async def test_in_serve_a_timed_wait_woken_after_its_deadline_gives_up() -> None:
    """Kills ``remaining <= 0`` made ``== 0``: a real clock reads past the deadline, never exactly on it,
    and the wait went round again with a negative timeout until the lock was let go."""
    rt = Runtime()
    async with rt.locks.hold("node", "n-1"):

        async def waiter() -> bool:
            return await rt.locks.acquire("node", "n-1", timeout=0.05)

        assert await asyncio.wait_for(asyncio.create_task(waiter()), 5.0) is False


async def test_releasing_one_of_two_locks_of_a_kind_keeps_the_other_in_the_order() -> None:
    """Kills ``if not slots`` made ``if slots``: the release forgot the locks its holder still held."""
    rt = Runtime()
    async with rt.locks.hold("node", "n-1"):
        async with rt.locks.hold("node", "n-2"):
            pass
        assert rt.locks.is_locked("node", "n-1") and not rt.locks.is_locked("node", "n-2")
        with pytest.raises(LockOrderViolation) as raised:
            await rt.locks.acquire("instance", "i-1")
    assert raised.value.held == ("node", "n-1")
    async with rt.locks.hold("instance", "i-1"):  # all released: the order starts afresh
        assert rt.locks.is_locked("instance", "i-1")


async def test_only_the_holder_releases_a_lock() -> None:
    """Kills ``slot in self._held`` made ``not slot in``: another task released a lock it did not hold."""
    rt = Runtime()
    await rt.locks.acquire("node", "n-1")

    async def intruder() -> None:
        rt.locks.release("node", "n-1")

    with pytest.raises(LockMisuse, match="does not hold it"):
        await asyncio.create_task(intruder())
    assert rt.locks.is_locked("node", "n-1")
    rt.locks.release("node", "n-1")
    assert not rt.locks.is_locked("node", "n-1")


async def test_try_acquire_says_no_to_a_held_lock_and_takes_a_free_one() -> None:
    """Kills ``return False`` made ``return True`` in ``try_acquire``: a held lock was reported taken."""
    rt = Runtime()
    async with rt.locks.hold("port", "p-1"):
        me = rt.locks.holder("port", "p-1")

        async def other() -> tuple[bool, bool]:
            return rt.locks.try_acquire("port", "p-1"), rt.locks.try_acquire("port", "p-2")

        assert await asyncio.create_task(other()) == (False, True)
        assert rt.locks.holder("port", "p-1") is me and rt.locks.holder("port", "p-2") is not me


class _Kernel:
    """Just enough of ``Signals`` to see what a lock wait asks of it: a wait times out at once."""

    def __init__(self) -> None:
        self.time, self.running = 0.0, "a"
        self.waits: list[tuple[Hashable, float | None, str, bool]] = []

    def now(self) -> float:
        return self.time

    def owner(self) -> object:
        return self.running

    async def wait(self, key: Hashable, timeout: float | None, point: str = "wait", *, guard: bool = False) -> bool:
        self.waits.append((key, timeout, point, guard))
        self.time += timeout or 0.0
        return False

    def notify(self, key: Hashable) -> None:
        pass


async def test_a_lock_wait_is_a_memoryless_loop_the_explorer_may_skip() -> None:
    """Kills ``guard=True`` made ``False``: the explorer would re-order every turn of a lock wait.

    The wait loop re-reads who holds the lock each turn and keeps only its deadline, which is
    the promise ``guard`` makes (``Runtime.wait``); the wait is named for the kind of lock.
    """
    kernel = _Kernel()
    locks = MemoryLocks(kernel)
    assert locks.try_acquire("node", "n-1")
    kernel.running = "b"
    assert not await locks.acquire("node", "n-1", timeout=2.0)
    assert kernel.waits == [(("lock", "node", "n-1"), 2.0, "lock.wait.node", True)]
    assert locks.holder("node", "n-1") == "a"


@pytest.fixture
def delete_taking_the_node_lock_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: a bare-metal delete that locks the node before the instance."""
    run = Delete.run

    async def node_first(self: Delete, uuid: str, request_id: str) -> None:
        instance = await self.instances.live(uuid)
        if instance is None or not instance.node:
            await run(self, uuid, request_id)
            return
        async with self.rt.locks.hold("node", instance.node):
            await run(self, uuid, request_id)

    monkeypatch.setattr(Delete, "run", node_first)


async def test_a_delete_that_locks_the_node_first_turns_the_scenario_red(
        delete_taking_the_node_lock_first: None) -> None:
    result = await run_scenario(SCENARIOS["terminate-races-port-delete"])
    assert not result.passed
    assert any("LockOrderViolation" in error and "instance lock" in error and "node lock" in error
               for error in result.errors), result.errors


async def test_a_delete_that_locks_the_node_first_turns_the_explorer_red(
        delete_taking_the_node_lock_first: None) -> None:
    report = await explore(SCENARIOS["terminate-races-port-delete"], ExploreOptions(max_schedules=5))
    assert "operation-error" in report.violations
    assert "LockOrderViolation" in report.violations["operation-error"].evidence
