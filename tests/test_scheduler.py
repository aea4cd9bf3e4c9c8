"""The deterministic scheduler: one actor at a time, virtual time, reproducible traces."""

from __future__ import annotations

import pytest

from tether.runtime.clock import VirtualClock
from tether.runtime.runtime import Runtime
from tether.sim.scheduler import Deadlock, FifoStrategy, RandomStrategy, ReplayStrategy, Scheduler, scheduled_runtime


def make_runtime(strategy=None) -> Runtime:
    return scheduled_runtime(Scheduler(VirtualClock(0.0), strategy or FifoStrategy()))


async def two_writers(rt: Runtime, log: list[str]) -> None:
    async def writer(tag: str) -> None:
        for step in range(3):
            log.append(f"{tag}{step}")
            await rt.checkpoint("compute.build.after_schedule")

    rt.spawn(writer("a"), name="a")
    rt.spawn(writer("b"), name="b")
    await rt.executor.scheduler.run()


async def test_fifo_alternates_between_actors() -> None:
    log: list[str] = []
    await two_writers(make_runtime(), log)
    assert log == ["a0", "b0", "a1", "b1", "a2", "b2"]


async def test_same_seed_gives_same_interleaving_and_replay_reproduces_it() -> None:
    first: list[str] = []
    rt = make_runtime(RandomStrategy(seed=7))
    await two_writers(rt, first)
    second: list[str] = []
    await two_writers(make_runtime(RandomStrategy(seed=7)), second)
    assert first == second
    replayed: list[str] = []
    await two_writers(make_runtime(ReplayStrategy([s.actor for s in rt.executor.scheduler.trace])), replayed)
    assert replayed == first


async def test_sleep_advances_virtual_time_without_waiting() -> None:
    rt = make_runtime()
    order: list[tuple[str, float]] = []

    async def sleeper(tag: str, seconds: float) -> None:
        await rt.sleep(seconds)
        order.append((tag, rt.now()))

    rt.spawn(sleeper("long", 3600.0), name="long")
    rt.spawn(sleeper("short", 5.0), name="short")
    await rt.executor.scheduler.run()
    assert order == [("short", 5.0), ("long", 3600.0)]


async def test_lock_waiters_run_after_release_and_order_is_enforced() -> None:
    rt = make_runtime()
    log: list[str] = []

    async def holder(tag: str) -> None:
        async with rt.locks.hold("instance", "i1"):
            log.append(f"{tag}-in")
            await rt.checkpoint("compute.delete.before_unplug")
            log.append(f"{tag}-out")

    rt.spawn(holder("a"), name="a")
    rt.spawn(holder("b"), name="b")
    await rt.executor.scheduler.run()
    assert log == ["a-in", "a-out", "b-in", "b-out"]

    async def wrong_order() -> None:
        async with rt.locks.hold("port", "p1"), rt.locks.hold("instance", "i1"):
            pass

    actor_rt = make_runtime()
    actor_rt.spawn(wrong_order(), name="w")
    await actor_rt.executor.scheduler.run()
    assert "taken while holding" in str(actor_rt.executor.scheduler.actors[0].error)


async def test_waiting_forever_is_reported_as_deadlock() -> None:
    rt = make_runtime()

    async def stuck() -> None:
        await rt.wait("never", None)

    rt.spawn(stuck(), name="stuck")
    with pytest.raises(Deadlock):
        await rt.executor.scheduler.run()


async def test_crash_stops_every_actor_and_kills_the_incarnation() -> None:
    from tether.runtime.faults import FaultPlan

    rt = scheduled_runtime(
        Scheduler(VirtualClock(0.0)),
        faults=FaultPlan.parse(["compute.delete.before_unplug=crash*1"]),
    )
    reached: list[str] = []

    async def victim() -> None:
        await rt.checkpoint("compute.delete.before_unplug")
        reached.append("after crash")

    async def bystander() -> None:
        await rt.sleep(1.0)
        reached.append("bystander ran on")

    rt.spawn(victim(), name="victim")
    rt.spawn(bystander(), name="bystander")
    await rt.executor.scheduler.run()
    assert reached == []
    assert not rt.alive
