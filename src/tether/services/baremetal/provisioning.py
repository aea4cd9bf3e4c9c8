"""Provisioning requests, and the conductor jobs they start, resume and expire.

A request checks the state table, moves the node into its transient state
under the node's lock and returns at once (ironic's 202); a conductor job does
the work in the background. The provision state written first is the durable
intent (rule 5): after a restart every node in a transient state gets its job
back and resumes from the hardware's truth.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from functools import partial

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import (
    AVAILABLE,
    CLEANING,
    CLEANWAIT,
    DELETING,
    DEPLOYING,
    DEPLOYWAIT,
    INSPECTING,
    MANAGEABLE,
    PROVISION_STATES,
    TRANSIENT_STATES,
    VERBS,
)
from tether.domain.errors import baremetal as be
from tether.runtime.runtime import Runtime
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.cleaning import CLEAN_TIMEOUT_ERROR, Cleaning
from tether.services.baremetal.deploy import Deploy
from tether.services.baremetal.jobs import ConductorJobs
from tether.services.baremetal.lookup import NodeLookup
from tether.services.baremetal.node_lock import NodeHold, NodeLock
from tether.services.baremetal.teardown import Teardown
from tether.services.baremetal.transitions import NodeChanged, Transitions, refuse_illegal
from tether.services.baremetal.vifs import Vifs
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

_ABORTED = {DEPLOYWAIT: "Deploy operation aborted for node {node}.",
            CLEANWAIT: "Clean operation aborted for node {node}."}
_TIMED_OUT = {
    DEPLOYING: "Timeout reached while deploying node {node}",
    DEPLOYWAIT: "Timeout reached while waiting for callback for node {node}",
    DELETING: "Failed to tear down: timeout reached while tearing down node {node}",
    CLEANING: CLEAN_TIMEOUT_ERROR,
    CLEANWAIT: CLEAN_TIMEOUT_ERROR,
    INSPECTING: "Timeout reached while inspecting the node. Please retry the inspection.",
}


@dataclass(eq=False)
class Provisioning:
    store: Store
    rt: Runtime
    _: KW_ONLY
    lookup: NodeLookup
    lock: NodeLock
    transitions: Transitions
    jobs: ConductorJobs
    vifs: Vifs
    deploy: Deploy
    teardown: Teardown
    cleaning: Cleaning

    async def set_provision_state(self, ctx: RequestContext, ident: str, target: str) -> None:
        require_admin(ctx, "baremetal:node:set_provision_state")
        event = VERBS.get(target) if isinstance(target, str) else None
        if event is None:
            raise be.InvalidParameterValue(
                err=f"Invalid input for field/attribute target. Value: '{target}'. "
                    f"Value should be one of: {', '.join(VERBS)}"
            )
        # Refuse what the state table refuses before waiting for the lock, as ironic's API does.
        self._check_request(await self.lookup.read(ident), target, event)
        async with self.lock.locked(ident) as node:
            self._check_request(node, target, event)
            await self._start_provisioning(node, event)

    def _check_request(self, node: Node, target: str, event: str) -> None:
        refuse_illegal(node, target, event)
        if event in ("deploy", "rebuild") and node.maintenance:
            raise be.NodeInMaintenance(op="provisioning", node=node.uuid)
        if event in ("rebuild", "delete") and node.protected:
            raise be.NodeProtected(node=node.uuid)
        if event == "provide" and node.retired:
            raise be.NodeIsRetired(op="providing", node=node.uuid)
        if event == "inspect" and node.inspect_interface == "no-inspect":
            raise be.UnsupportedDriverExtension(driver=node.driver, extension="inspect")

    async def _start_provisioning(self, node: Node, event: str) -> Node:
        if event == "abort":
            reason = _ABORTED.get(node.provision_state, "Operation aborted for node {node}.")
            return await self.transitions.apply(node, event, last_error=reason.format(node=node.uuid))
        if event == "manage":
            return await self.transitions.apply(node, event, last_error=None)
        if event in ("provide", "clean", "inspect"):
            target = AVAILABLE if event == "provide" else MANAGEABLE
            node = await self.transitions.apply(node, event, target=target, last_error=None)
        else:  # deploy, rebuild, delete
            node = await self.transitions.apply(node, event, last_error=None)
        self.start_job_for(node)
        return node

    def start_job_for(self, node: Node, *, resume: bool = False) -> None:
        """Start the job that carries ``node`` out of its transient state."""
        if node.provision_state in (DEPLOYING, DEPLOYWAIT):
            self.jobs.start(node.uuid, "deploy", self.deploy.job)
        elif node.provision_state == DELETING:
            self.jobs.start(node.uuid, "teardown", self.teardown.job)
        elif node.provision_state in (CLEANING, CLEANWAIT):
            self.jobs.start(node.uuid, "clean", partial(self.cleaning.job, resume=resume))
        elif node.provision_state == INSPECTING:
            self.jobs.start(node.uuid, "inspect", self._inspect)

    async def _inspect(self, uuid: str, token: object) -> None:
        """fake-hardware's inspection: ironic's fake inspect interface finds nothing to record and is done."""
        hold = NodeHold(self.lock, uuid)
        try:
            await hold.take()
            node = await self.jobs.current(uuid, token, (INSPECTING,))
            await self.transitions.apply(node, "done")
        finally:
            await hold.give()

    async def resume_conductor_jobs(self) -> None:
        """After a restart: forget the dead process's locks and give every transient node its job back.

        Nodes in maintenance stay as they are until an operator lets them go
        (leaving maintenance resumes them).
        """
        async with self.store.begin() as conn:
            await self.lock.forget_dead_reservations(conn)
            nodes = await repos.nodes.find(
                conn, order_by=("created_at", "uuid"), provision_state=list(TRANSIENT_STATES), maintenance=False
            )
        await self.vifs.recover_intents()
        for node in nodes:
            if not self.jobs.running(node.uuid):
                self.rt.note(f"node {node.uuid}: resuming its job in {node.provision_state}")
                self.start_job_for(node, resume=True)

    async def expire_transient(self, node_uuid: str) -> bool:
        """Fail a node that sits in a transient state past its deadline (rule 3's backstop).

        Returns whether it did; a node whose job holds its lock is left to that job.
        """
        node = await self.lookup.find(node_uuid)
        if node is None or node.provision_state not in TRANSIENT_STATES:
            return False
        try:
            await self.lock.acquire(node_uuid)
        except be.NodeLocked:
            return False
        try:
            node = await self.lookup.find(node_uuid)
            if node is None or node.provision_state not in TRANSIENT_STATES:
                return False
            state = PROVISION_STATES.states[node.provision_state]
            if self.rt.now() <= node.provision_updated_at + (state.deadline or 0.0):
                return False
            self.jobs.retire(node_uuid)  # whatever job still waits on it is retired
            reason = _TIMED_OUT.get(node.provision_state, "Timeout reached for node {node}")
            await self.transitions.apply(node, state.on_timeout or "fail", last_error=reason.format(node=node_uuid))
            return True
        except NodeChanged:
            return False
        finally:
            await self.lock.release(node_uuid)
