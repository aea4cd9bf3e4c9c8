"""Mend an instance's network from truth: zombie guest interfaces and ports it does not list."""

from __future__ import annotations

from tether.domain.invariants import Violation
from tether.reconcile.base import Reconciler


class ZombieInterfaces(Reconciler):
    invariant = "zombie-interface"
    kinds = ("instance",)

    async def mend(self, violation: Violation) -> bool:
        uuid = violation.resources.get("instance", "")
        compute = self.cloud.compute
        if await compute.live_instance(uuid) is not None:
            return await compute.reconcile_network(uuid)
        # The instance is gone: nothing owns these devices any more.
        hypervisor = self.cloud.world.hypervisor
        gone = hypervisor.interfaces(instance_uuid=uuid)
        for interface in gone:
            hypervisor.unplug(interface.host, uuid, interface.port_id)
        for host, domain in hypervisor.domains():
            if domain == uuid:
                hypervisor.destroy_domain(host, domain)
        return bool(gone)
