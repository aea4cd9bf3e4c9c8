"""Finding a node: by uuid or name for the API, by uuid alone for the other services."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.baremetal import Node
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.store import repos
from tether.store.database import Store, StoreConnection


async def get_node(conn: StoreConnection, ident: str) -> Node:
    """A node by uuid or by name."""
    if isinstance(ident, str) and ident:
        if is_uuid_like(ident):
            node = await repos.nodes.get(conn, ident.lower())
        else:
            node = await repos.nodes.first(conn, name=ident)
        if node is not None:
            return node
    raise be.NodeNotFound(node=ident)


@dataclass(eq=False)
class NodeLookup:
    store: Store

    async def read(self, ident: str) -> Node:
        """The node ``ident`` names (uuid or name), in a transaction of its own; NodeNotFound if none."""
        async with self.store.begin() as conn:
            return await get_node(conn, ident)

    async def find(self, uuid: str) -> Node | None:
        """The node with this uuid, or None (internal: no context, no lookup by name)."""
        async with self.store.begin() as conn:
            return await repos.nodes.get(conn, uuid)
