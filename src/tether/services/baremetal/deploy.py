"""The conductor's deploy: boot the ramdisk, wait for its call-back, then the node is active.

Seed 003 lives here on ironic's side: a node undeployed or deleted while it
waits for the call-back ends the deploy job at once (rule 3); the job never
carries on with, or touches, a node that moved on under it.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import CALLBACK_TIMEOUT, DEPLOYING, DEPLOYWAIT
from tether.drivers.hardware import FakeHardware
from tether.runtime.runtime import Runtime
from tether.services.baremetal.jobs import ConductorJobs, JobFailed
from tether.services.baremetal.node_lock import NodeHold, NodeLock
from tether.services.baremetal.transitions import NodeChanged, Transitions, node_key


@dataclass(eq=False)
class Deploy:
    rt: Runtime
    _: KW_ONLY
    hardware: FakeHardware
    lock: NodeLock
    transitions: Transitions
    jobs: ConductorJobs

    async def job(self, uuid: str, token: object) -> None:
        hold = NodeHold(self.lock, uuid)
        try:
            await hold.take()
            node = await self.jobs.current(uuid, token, (DEPLOYING, DEPLOYWAIT))
            try:
                if node.provision_state == DEPLOYING:
                    await self.rt.checkpoint("baremetal.deploy.start")
                    self.hardware.start_deploy(uuid, self.rt.now())
                    node = await self.transitions.apply(node, "wait")
                # ironic lets go of the node while the ramdisk works; others may act on it meanwhile.
                await hold.give()
                await self.rt.checkpoint("baremetal.deploy.wait_callback")
                await self._wait_for_callback(uuid, token)
                await hold.take()
                node = await self.jobs.current(uuid, token, (DEPLOYWAIT,))
                if node.maintenance:
                    raise NodeChanged(uuid)
                node = await self.transitions.apply(node, "resume")
                await self.rt.checkpoint("baremetal.deploy.before_active")
                power_state = self.hardware.set_power(uuid, True)
                await self.transitions.apply(node, "done", power_state=power_state)
            except NodeChanged:
                raise
            except Exception as error:
                await self._fail(uuid, token, hold, error)
        finally:
            await hold.give()

    async def _wait_for_callback(self, uuid: str, token: object) -> Node:
        """Sleep until the hardware's call-back time, re-reading the node at every wake-up."""
        while True:
            # rule 3 (seed 003): undeployed, deleted or aborted meanwhile: NodeChanged ends the job.
            node = await self.jobs.current(uuid, token, (DEPLOYWAIT,))
            if node.maintenance:
                raise NodeChanged(uuid)  # an operator froze it; leaving maintenance resumes us
            due = self.hardware.deploy_callback_at(uuid)
            if due is None:
                raise JobFailed(f"Failed to deploy: the ramdisk of node {uuid} is not running")
            now = self.rt.now()
            if now >= due:
                return node
            deadline = node.provision_updated_at + CALLBACK_TIMEOUT
            if now >= deadline:
                raise JobFailed(f"Timeout reached while waiting for callback for node {uuid}")
            await self.rt.wait(node_key(uuid), min(due, deadline) - now, guard=True)

    async def _fail(self, uuid: str, token: object, hold: NodeHold, error: Exception) -> None:
        await hold.take()
        node = await self.jobs.current(uuid, token, (DEPLOYING, DEPLOYWAIT))
        reason = str(error) if isinstance(error, JobFailed) else f"Failed to deploy: {error}"
        await self.transitions.apply(node, "fail", last_error=reason)
