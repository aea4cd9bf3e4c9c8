"""Running the reconcilers: a work queue fed by the bus and a slow, sliced resync (serve), or the
keys of the violations a judge found (the scenario harness and the explorer)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.domain.events import ComputeNotified, GuestDevicePlugged, GuestDeviceUnplugged, InstanceReleased
from tether.domain.invariants import Violation
from tether.reconcile.controller import Controller, Outcome
from tether.reconcile.queue import Key, WorkQueue

if TYPE_CHECKING:
    from tether.cloud import Cloud

log = logging.getLogger(__name__)

# What a resync tick reads of each kind: the whole system comes by in slices, never at once.
RESYNC_SLICE = 100
# News is acted on this long after it arrives: the operation that made it has usually finished by
# then, and the news of one burst (a server's boot, its delete) coalesces into one look per key.
SETTLE_SECONDS = 1.0
KINDS = ("instance", "node", "port")


@dataclass
class Pass:
    mended: list[Violation] = field(default_factory=list)
    failed: list[tuple[Violation, str]] = field(default_factory=list)


async def mend(cloud: Cloud, violations: list[Violation]) -> Pass:
    """Reconcile the keys of ``violations``, each once, in the reconcilers' order."""
    controller = Controller(cloud)
    order = {reconciler.invariant: rank for rank, reconciler in enumerate(controller.reconcilers)}
    keys: dict[Key, Violation] = {}
    for violation in sorted(violations, key=lambda v: order.get(v.invariant, len(order))):
        for key in controller.keys_of(violation):
            keys.setdefault(key, violation)
    result = Pass()
    for key, violation in keys.items():
        try:
            result.mended += (await controller.reconcile(key)).mended
        except Exception as error:  # one bad key must not stop the others
            result.failed.append((violation, str(error)))
    await cloud.rt.drain()
    return result


class ReconcileLoop:
    """`tether serve`'s reconcilers: keys from the bus and from a sliced resync, one at a time."""

    def __init__(self, cloud: Cloud, *, resync_interval: float) -> None:
        self.cloud = cloud
        self.controller = Controller(cloud)
        self.queue = WorkQueue(cloud.rt)
        self.resync_interval = resync_interval
        self._cursors: dict[str, str] = {}
        bus = cloud.bus
        bus.subscribe(ComputeNotified, self._notified)
        bus.subscribe(InstanceReleased, self._released)
        bus.subscribe(GuestDevicePlugged, lambda plugged: self._news(Key("port", plugged.port_id)))
        bus.subscribe(GuestDeviceUnplugged, lambda unplugged: self._news(Key("port", unplugged.port_id)))

    def _news(self, key: Key) -> None:
        self.queue.add_after(key, SETTLE_SECONDS)

    def _released(self, released: InstanceReleased) -> None:
        self._news(Key("instance", released.instance_uuid))
        self._news(Key("node", released.node_uuid))

    def _notified(self, notified: ComputeNotified) -> None:
        for event in notified.events:
            self._news(Key("instance", event.server_uuid))
            self._news(Key("port", event.port_id))

    async def work(self) -> None:
        while self.cloud.rt.alive:
            await self.turn(await self.queue.get())

    async def turn(self, key: Key) -> Outcome | None:
        """One queue turn: reconcile ``key`` and decide when to look at it again; None if it failed."""
        outcome = None
        try:
            outcome = await self.controller.reconcile(key)
        except Exception:
            # Logged and retried with back-off, never dropped.
            log.exception("reconciling %s failed", key)
            self.queue.add_rate_limited(key)
        else:
            if outcome.unsettled:
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
                if outcome.requeue_after is not None:
                    self.queue.add_after(key, outcome.requeue_after)
        finally:
            self.queue.done(key)
        return outcome

    async def resync(self) -> None:
        while self.cloud.rt.alive:
            await self.resync_slice()
            await self.cloud.rt.sleep(self.resync_interval)

    async def resync_slice(self) -> None:
        """The next ``RESYNC_SLICE`` keys of each kind, from where the last slice stopped."""
        async with self.cloud.store.begin() as uow:
            for kind, rows in zip(KINDS, (uow.instances, uow.nodes, uow.ports), strict=True):
                ids = await rows.keys_after(self._cursors.get(kind, ""), RESYNC_SLICE)
                self._cursors[kind] = ids[-1] if len(ids) == RESYNC_SLICE else ""
                for ident in ids:
                    self.queue.add(Key(kind, ident))
