"""Rule 4's lock order (stack, instance, node, port) refused at run time, in serve and under the explorer."""

from __future__ import annotations

import pytest

from tether.runtime.clock import VirtualClock
from tether.runtime.locks import ORDER, LockMisuse, LockOrderViolation
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
