"""The conductor's tear-down: detach every VIF, forget the instance, power off, clean.

Seed 000's fix lives here (ironic 3a4e259a37 and 85456f788): tear-down
detaches every VIF the node itself lists, whatever compute's cache says, and
fails loudly into ``error`` rather than reach ``available`` with one left.
"""

from __future__ import annotations

from tether.domain.baremetal_states import AVAILABLE, DELETING
from tether.domain.events import InstanceReleased
from tether.services.baremetal.base import NodeChanged, NodeHold
from tether.services.baremetal.cleaning import CleaningMixin
from tether.services.baremetal.vifs import VifsMixin
from tether.store import repos


class TeardownMixin(CleaningMixin, VifsMixin):
    async def _teardown_job(self, uuid: str, token: object) -> None:
        hold = NodeHold(self, uuid)
        try:
            await hold.take()
            node = await self._current(uuid, token, (DELETING,))
            try:
                await self.rt.checkpoint("baremetal.teardown.before_vif_detach")
                await self.steps.detach_vifs_on_teardown(self, uuid)  # type: ignore[arg-type]
                await self._forget_instance(uuid)
                power_state = self.hardware.set_power(uuid, False)
                async with self.store.begin() as conn:
                    await repos.nodes.update(conn, uuid, power_state=power_state, updated_at=self.now())
                await self.rt.checkpoint("baremetal.teardown.before_clean")
            except NodeChanged:
                raise
            except Exception as error:
                # rule 3 (seed 000): fail loudly; never reach available with a VIF left.
                await self._transition(node, "fail", last_error=f"Failed to tear down: {error}")
                return
            node = await self._transition(node, "clean", target=AVAILABLE)
            await self._clean(node, resume=False)
        finally:
            await hold.give()

    async def _forget_instance(self, uuid: str) -> None:
        async with self.store.begin() as uow:
            node = await uow.nodes.get(uuid)
            forgotten = await uow.nodes.update(
                uuid, expect={"provision_state": DELETING}, instance_uuid=None, instance_info={},
                updated_at=self.now(),
            )
            if forgotten and node is not None and node.instance_uuid is not None:
                uow.emit(InstanceReleased(node.instance_uuid, uuid))
        if not forgotten or node is None:
            raise NodeChanged(uuid)
        self._notify(uuid)
