"""What compute (nova's ironic driver) uses to pick a node and hold on to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import Node
from tether.domain.baremetal_states import AVAILABLE
from tether.runtime.runtime import Runtime
from tether.services.baremetal.transitions import node_key
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class Claims:
    store: Store
    rt: Runtime

    async def find_free_nodes(self, resource_class: str) -> list[Node]:
        """Available nodes of ``resource_class`` nobody holds, oldest first."""
        async with self.store.begin() as conn:
            nodes = await repos.nodes.find(
                conn, order_by=("created_at", "uuid"), provision_state=AVAILABLE, maintenance=False,
                instance_uuid=None, resource_class=resource_class,
            )
        return [node for node in nodes if node.is_free]

    async def claim_node(
        self, node_uuid: str, instance_uuid: str, instance_info: dict[str, Any] | None = None
    ) -> bool:
        """Give the node to ``instance_uuid`` if it is still free; False when someone else won."""
        free = {"provision_state": AVAILABLE, "maintenance": False, "instance_uuid": None}
        try:
            async with self.store.begin() as conn:
                holding = await repos.nodes.first(conn, instance_uuid=instance_uuid)
                if holding is not None:
                    return holding.uuid == node_uuid  # one node per instance; asking twice is fine
                won = await repos.nodes.update(
                    conn, node_uuid, expect=free, instance_uuid=instance_uuid,
                    instance_info=dict(instance_info or {}), updated_at=self.rt.now(),
                )
        except IntegrityError:
            return False  # the instance was given another node at the same moment
        if won:
            self.rt.note(f"node {node_uuid}: claimed by instance {instance_uuid}")
            self.rt.notify(node_key(node_uuid))
        return won

    async def release_node(self, node_uuid: str, instance_uuid: str) -> None:
        """Forget ``instance_uuid`` on the node, if the node still carries it."""
        async with self.store.begin() as conn:
            released = await repos.nodes.update(
                conn, node_uuid, expect={"instance_uuid": instance_uuid},
                instance_uuid=None, instance_info={}, updated_at=self.rt.now(),
            )
        if released:
            self.rt.note(f"node {node_uuid}: released by instance {instance_uuid}")
            self.rt.notify(node_key(node_uuid))
