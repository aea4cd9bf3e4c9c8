"""The conductor's cleaning: wipe the disks, then the node is available (or manageable) again."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import CLEAN_TIMEOUT, CLEANING, CLEANWAIT, MANAGEABLE
from tether.drivers.hardware import FakeHardware
from tether.runtime.runtime import Runtime
from tether.services.baremetal.jobs import ConductorJobs, JobFailed
from tether.services.baremetal.node_lock import NodeHold, NodeLock
from tether.services.baremetal.transitions import NodeChanged, Transitions

CLEAN_TIMEOUT_ERROR = (
    "Timeout reached while cleaning the node. Please check if the ramdisk responsible for "
    "the cleaning is running on the node."
)


@dataclass(eq=False)
class Cleaning:
    rt: Runtime
    _: KW_ONLY
    hardware: FakeHardware
    lock: NodeLock
    transitions: Transitions
    jobs: ConductorJobs

    async def job(self, uuid: str, token: object, *, resume: bool = False) -> None:
        """Clean a node that provide/clean (or a restart) left in cleaning."""
        hold = NodeHold(self.lock, uuid)
        try:
            await hold.take()
            node = await self.jobs.current(uuid, token, (CLEANING, CLEANWAIT))
            if node.provision_state == CLEANWAIT:
                node = await self.transitions.apply(node, "resume", target=node.target_provision_state)
            await self.clean(node, resume=resume)
        finally:
            await hold.give()

    async def clean(self, node: Node, *, resume: bool) -> None:
        """Clean ``node`` (in cleaning, its lock held throughout, as ironic's cleaning holds it).

        With ``resume``, a clean the hardware started since the node entered
        cleaning is waited for rather than started again.
        """
        uuid = node.uuid
        try:
            done_at = self.hardware.clean_done_at(uuid)
            started_at = self.hardware.clean_started_at(uuid)
            ours = started_at is not None and started_at >= node.provision_updated_at
            if not (resume and ours and done_at is not None):
                done_at = self.hardware.start_clean(uuid, self.rt.now())
            # rule 3: cleaning ends by its deadline even if the hardware never finishes.
            deadline = node.provision_updated_at + CLEAN_TIMEOUT
            while True:
                await self.rt.checkpoint("baremetal.clean.wait")
                now = self.rt.now()
                if now >= done_at:
                    break
                if now >= deadline:
                    raise JobFailed(CLEAN_TIMEOUT_ERROR)
                await self.rt.sleep(min(done_at, deadline) - now)
            # ironic: a retired node is never made available again.
            done = "manage" if node.target_provision_state == MANAGEABLE or node.retired else "done"
            await self.transitions.apply(node, done)
        except NodeChanged:
            raise
        except Exception as error:
            reason = str(error) if isinstance(error, JobFailed) else f"Failed to clean node {uuid}: {error}"
            await self.transitions.apply(node, "fail", last_error=reason)
