"""Mend nodes: stale VIFs, and associations that point at nothing."""

from __future__ import annotations

from tether.domain import baremetal_states as bms
from tether.domain.errors import baremetal as be
from tether.domain.invariants import Violation
from tether.reconcile.base import Reconciler
from tether.services.context import RequestContext


class StaleVifs(Reconciler):
    invariant = "stale-vif"
    kinds = ("node",)

    async def mend(self, violation: Violation) -> bool:
        node_uuid, vif = violation.resources["node"], violation.resources["vif"]
        baremetal, compute = self.cloud.baremetal, self.cloud.compute
        node = await baremetal.find_node(node_uuid)
        if node is None:
            return False
        if node.instance_uuid and await compute.live_instance(node.instance_uuid) is not None:
            return await compute.reconcile_network(node.instance_uuid)
        try:
            # rule 1 (seed 000): the node's own list is the truth; nobody owns this VIF.
            await baremetal.vif_detach(RequestContext.internal(), node_uuid, vif)
        except (be.VifNotAttached, be.NodeNotFound):
            return False
        except be.NodeLocked:
            return False  # busy: the next pass looks again
        return True


class Associations(Reconciler):
    invariant = "association"
    kinds = ("node", "instance")

    async def mend(self, violation: Violation) -> bool:
        node_uuid = violation.resources.get("node", "")
        instance_uuid = violation.resources.get("instance", "")
        baremetal, compute = self.cloud.baremetal, self.cloud.compute
        node = await baremetal.find_node(node_uuid)
        instance = await compute.live_instance(instance_uuid)
        if node is not None and node.instance_uuid == instance_uuid and instance is None:
            if node.provision_state in bms.UNPROVISION_STATES:
                await baremetal.set_provision_state(RequestContext.internal(), node_uuid, "deleted")
            else:
                await baremetal.release_node(node_uuid, instance_uuid)
            return True
        if instance is not None and (node is None or node.instance_uuid != instance_uuid):
            return await compute.forget_node(instance_uuid, node_uuid)
        return False
