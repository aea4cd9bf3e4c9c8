"""Mend ports: orphans go back to their creator's rules, and NIC MACs are given up."""

from __future__ import annotations

from tether.domain.errors import TetherError
from tether.domain.invariants import Violation
from tether.domain.network import CREATED_BY_ORCHESTRATION
from tether.reconcile.base import Reconciler
from tether.services.context import RequestContext


class OrphanPorts(Reconciler):
    invariant = "orphan-port"
    kinds = ("port",)

    async def mend(self, violation: Violation) -> bool:
        port_id = violation.resources["port"]
        network = self.cloud.network
        port = await network.find_port(port_id)
        if port is None:
            return False
        compute = self.cloud.compute
        if port.created_by == CREATED_BY_ORCHESTRATION:
            if port.device_id and await compute.live_instance(port.device_id) is not None:
                return False  # its server still uses it: deleting it would take it off a live server
            # rule 2: no live stack lists it, and what an owner created goes with the owner
            await network.delete_port(RequestContext.internal(project_id=port.project_id), port_id)
            return True
        if port.device_id and await compute.live_instance(port.device_id) is not None:
            return await compute.reconcile_network(port.device_id)
        # rule 2: the owner is gone; delete what it created, release what the user brought.
        await compute.give_back_port(port)
        return True


class NicMacs(Reconciler):
    invariant = "mac-conflict"
    kinds = ("port",)

    async def mend(self, violation: Violation) -> bool:
        port_id = violation.resources.get("port")
        if port_id is None:
            return False  # two ports with one MAC: the database forbids it; nothing safe to do
        port = await self.cloud.network.find_port(port_id)
        if port is None or port.is_bound:
            return False
        # rule 2 (seed 001): a released port gives the NIC's MAC back and gets a fresh one.
        try:
            await self.cloud.network.update_port(RequestContext.internal(port.project_id), port_id, mac_address=None)
        except TetherError:
            return False  # bound or gone meanwhile: the next pass looks again
        return True
