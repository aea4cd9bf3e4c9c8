"""Ending what nothing drives any more: recovery after a restart (rule 5), and transients past their deadline.

After a restart every unfinished build is failed and its resources released
(nothing can resume a build's in-memory wait), every unfinished delete is run
again (it is idempotent), and every unfinished interface attach is rolled
back by reconciling the instance's network from truth.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from tether.domain import compute_states as vm
from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute.delete import Delete
from tether.services.compute.failure import InstanceFailure
from tether.services.compute.instances import Instances
from tether.services.compute.network_sync import NetworkSync
from tether.services.compute.node_vanished import NodeVanished, node_still_ours
from tether.services.compute.plugging import Plugging
from tether.services.compute.server_action import ServerActions
from tether.store import intents, suspects
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService


@dataclass(eq=False)
class Recovery:
    store: Store
    rt: Runtime
    _: KW_ONLY
    instances: Instances
    failure: InstanceFailure
    delete: Delete
    sync: NetworkSync
    plugging: Plugging
    baremetal: BaremetalService
    actions: ServerActions

    async def recover(self) -> int:
        """Spawn the recovery of every pending intent; returns how many there were."""
        async with self.store.begin() as conn:
            pending = await intents.pending(conn)
        for intent in pending:
            request_id = intent.payload.get("request_id", "")
            if intent.kind == "build":
                self.rt.spawn(self._recover_build(intent.key, request_id), name=f"recover.build:{intent.key[:8]}")
            elif intent.kind == "delete":
                self.rt.spawn(self.delete.run(intent.key, request_id), name=f"recover.delete:{intent.key[:8]}")
            elif intent.kind == "action":
                # rule 5: an action's in-memory work died with the process; end it from the driver's truth
                reason = ce.ComputeError(message="the control plane restarted during the action")
                self.rt.spawn(self._recover_action(intent.key, request_id, reason),
                              name=f"recover.action:{intent.key[:8]}")
            elif intent.kind == "attach":
                self.rt.spawn(self._recover_attach(intent.key, intent.id), name=f"recover.attach:{intent.key[:8]}")
        # Events in flight died with the process (a port-deleted notice, a cache refresh): level-triggered,
        # a resync of every instance whose facts disagree replaces them all. The database finds those
        # (store.suspects); the sliced resync of the reconcilers comes by every other one in time.
        self.rt.spawn(self._resync_suspects(), name="recover.resync")
        return len(pending)

    async def _resync_suspects(self) -> None:
        async with self.store.begin() as conn:
            forgotten = await suspects.nodes_forgotten(conn)
            # a guest's device the cache does not list (zombie-interface): the hypervisor knows its devices
            plugged = [(iface.instance_uuid, iface.port_id) for iface in self.plugging.hypervisor.interfaces()]
            others = await suspects.caches_out_of_line(conn) | await suspects.in_action_steps(conn) \
                | await suspects.uncached(conn, plugged) | await suspects.unplugged(conn, plugged) \
                | await suspects.unplugged_on_nodes(conn)
        for uuid, node in forgotten:
            # A node deleted or torn down just before the crash: its notice died with us.
            await self.node_released(uuid, node)
            others.discard(uuid)
        for uuid in sorted(others):
            await self.sync.reconcile(uuid)

    async def _recover_build(self, uuid: str, request_id: str) -> None:
        async with self.rt.locks.hold("instance", uuid):
            instance = await self.instances.live(uuid)
            if instance is None or instance.vm_state != vm.BUILDING or instance.task_state == vm.DELETING:
                # Nothing to fail: it is gone or built, or the pending delete finishes the job.
                async with self.store.begin() as conn:
                    await intents.forget(conn, f"build:{uuid}")
                return
            await self.failure.fail(uuid, request_id, ce.BuildAbortException(
                instance_uuid=uuid, reason="the control plane restarted during the build"))

    async def _recover_action(self, uuid: str, request_id: str, reason: BaseException) -> None:
        async with self.rt.locks.hold("instance", uuid):
            await self.actions.abandon(uuid, request_id, reason)

    async def _recover_attach(self, uuid: str, intent_id: str) -> None:
        await self.sync.reconcile(uuid)
        async with self.store.begin() as conn:
            await intents.forget(conn, intent_id)

    async def expire_transient(self, uuid: str) -> bool:
        """Rule 3: end an instance's transient state that nothing is driving any more."""
        if not self.rt.locks.try_acquire("instance", uuid):
            return False  # a live operation holds it and enforces its own deadline
        respawn_delete = False
        try:
            instance = await self.instances.live(uuid)
            if instance is None:
                return False
            if instance.task_state == vm.DELETING:
                respawn_delete = True
            elif instance.vm_state == vm.BUILDING:
                reason: BaseException = ce.BuildAbortException(
                    instance_uuid=uuid, reason="the build did not finish before its deadline")
                if instance.is_baremetal and instance.node:
                    try:
                        await node_still_ours(self.baremetal, instance, instance.node)
                    except NodeVanished as vanished:
                        reason = ce.InstanceDeployFailure(instance_uuid=uuid, reason=str(vanished))
                await self.failure.fail(uuid, "", reason)
            elif instance.task_state is not None:
                # rule 3: a server action past its deadline is given up; the driver says where the guest is
                await self.actions.abandon(uuid, "", ce.ComputeError(
                    message=f"the {instance.task_state} did not finish before its deadline"))
            else:
                return False
        finally:
            self.rt.locks.release("instance", uuid)
        if respawn_delete:
            await self.delete.run(uuid, "")
        return True

    async def forget_node(self, uuid: str, node_uuid: str) -> bool:
        """The instance names a node that no longer names it: it has lost its machine."""
        if not self.rt.locks.try_acquire("instance", uuid):
            return False
        try:
            return await self._lose_node(uuid, node_uuid)
        finally:
            self.rt.locks.release("instance", uuid)

    async def node_released(self, uuid: str, node_uuid: str) -> bool:
        """The node's tear-down forgot the instance: unless an operation of ours ends it, it is lost.

        rule 3: an operator's undeploy under a running instance ends that
        instance now (NodeLost), not when the association reconciler comes by.
        """
        async with self.rt.locks.hold("instance", uuid):
            return await self._lose_node(uuid, node_uuid)

    async def _lose_node(self, uuid: str, node_uuid: str) -> bool:
        instance = await self.instances.live(uuid)
        if instance is None or instance.node != node_uuid or \
                (instance.task_state is not None and instance.task_state not in vm.ACTION_STEPS):
            return False  # gone, moved on, or owned by a build or delete that ends it
        # (a server action's work is not under way while this holds the instance lock: the node is lost)
        await self.failure.fail(uuid, "", ce.NodeLost(node=node_uuid, instance_uuid=uuid))
        return True
