"""The conductor's tear-down: detach every VIF, forget the instance, power off, clean.

Seed 000's fix lives here (ironic 3a4e259a37 and 85456f788): tear-down
detaches every VIF the node itself lists, whatever compute's cache says, and
fails loudly into ``error`` rather than reach ``available`` with one left.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass

from tether.domain.baremetal_states import AVAILABLE, DELETING
from tether.domain.events import InstanceReleased
from tether.drivers.hardware import FakeHardware
from tether.runtime.runtime import Runtime
from tether.services.baremetal.cleaning import Cleaning
from tether.services.baremetal.jobs import ConductorJobs
from tether.services.baremetal.node_lock import NodeHold, NodeLock
from tether.services.baremetal.transitions import NodeChanged, Transitions, node_key
from tether.services.baremetal.vifs import Vifs
from tether.store import repos
from tether.store.database import Store

# How tear-down takes a node's VIFs off (``BaremetalSteps.detach_vifs_on_teardown``).
DetachVifsOnTeardown = Callable[[Vifs, str], Awaitable[None]]


@dataclass(eq=False)
class Teardown:
    store: Store
    rt: Runtime
    _: KW_ONLY
    hardware: FakeHardware
    lock: NodeLock
    transitions: Transitions
    jobs: ConductorJobs
    vifs: Vifs
    cleaning: Cleaning
    detach_vifs: DetachVifsOnTeardown

    async def job(self, uuid: str, token: object) -> None:
        hold = NodeHold(self.lock, uuid)
        try:
            await hold.take()
            node = await self.jobs.current(uuid, token, (DELETING,))
            try:
                await self.rt.checkpoint("baremetal.teardown.before_vif_detach")
                if self.rt.protection_on("baremetal.teardown.detach_vifs"):
                    await self.detach_vifs(self.vifs, uuid)
                await self._forget_instance(uuid)
                power_state = self.hardware.set_power(uuid, False)
                async with self.store.begin() as conn:
                    await repos.nodes.update(conn, uuid, power_state=power_state, updated_at=self.rt.now())
                await self.rt.checkpoint("baremetal.teardown.before_clean")
            except NodeChanged:
                raise
            except Exception as error:
                # rule 3 (seed 000): fail loudly; never reach available with a VIF left.
                await self.transitions.apply(node, "fail", last_error=f"Failed to tear down: {error}")
                return
            node = await self.transitions.apply(node, "clean", target=AVAILABLE)
            await self.cleaning.clean(node, resume=False)
        finally:
            await hold.give()

    async def _forget_instance(self, uuid: str) -> None:
        async with self.store.begin() as uow:
            node = await uow.nodes.get(uuid)
            forgotten = await uow.nodes.update(
                uuid, expect={"provision_state": DELETING}, instance_uuid=None, instance_info={},
                allocation_uuid=None, updated_at=self.rt.now(),
            )
            if forgotten and node is not None and node.allocation_uuid is not None:
                await uow.allocations.delete(node.allocation_uuid)  # ironic's tear-down ends the allocation too
            if forgotten and node is not None and node.instance_uuid is not None:
                uow.emit(InstanceReleased(node.instance_uuid, uuid))
        if not forgotten or node is None:
            raise NodeChanged(uuid)
        self.rt.notify(node_key(uuid))
