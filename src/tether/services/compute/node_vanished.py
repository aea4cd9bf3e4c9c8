"""Rule 3 (seed 003): a node that vanishes under a build is its own failure, never 'instance not found'.

Nova's ironic driver raised InstanceNotFound when the node was deleted or torn
down out of band, and the compute manager took that for the user's delete,
leaving the instance in BUILD for ever. Here it is ``NodeVanished``, which
fails the build (InstanceDeployFailure) and releases what it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain import baremetal_states as bms
from tether.domain.baremetal import Node
from tether.domain.compute import Instance

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService

_TORN_DOWN = (bms.AVAILABLE, bms.DELETING, bms.CLEANING, bms.CLEANWAIT, bms.MANAGEABLE, bms.ENROLL)


class NodeVanished(Exception):
    """The node under a build was torn down, deleted or disassociated by someone else."""

    def __init__(self, node_uuid: str, how: str) -> None:
        super().__init__(f"the node {node_uuid} was {how} during the build")
        self.node_uuid, self.how = node_uuid, how


async def node_still_ours(baremetal: BaremetalService, instance: Instance, node_uuid: str) -> Node:
    """The instance's node as it is now; NodeVanished if it is gone, torn down or someone else's."""
    node = await baremetal.find_node(node_uuid)
    if node is None:
        raise NodeVanished(node_uuid, "deleted")
    if node.instance_uuid != instance.uuid:
        raise NodeVanished(node_uuid, "torn down" if node.provision_state in _TORN_DOWN else "disassociated")
    if node.provision_state in _TORN_DOWN or node.target_provision_state in (bms.AVAILABLE, "deleted"):
        raise NodeVanished(node_uuid, "torn down")
    return node
