"""A node's traits: list, replace, add one, remove one or all (ironic's NodeTraitsController)."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.baremetal_traits import check_count
from tether.domain.errors import baremetal as be
from tether.runtime.runtime import Runtime
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.lookup import NodeLookup
from tether.services.baremetal.node_lock import NodeLock
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class NodeTraits:
    store: Store
    rt: Runtime
    lookup: NodeLookup
    lock: NodeLock

    async def list_traits(self, ctx: RequestContext, ident: str) -> list[str]:
        require_admin(ctx, "baremetal:node:traits:list")
        return list((await self.lookup.read(ident)).traits)

    async def set_traits(self, ctx: RequestContext, ident: str, traits: list[str]) -> None:
        """Replace every trait of the node (duplicates ignored)."""
        require_admin(ctx, "baremetal:node:traits:set")
        async with self.lock.locked(ident) as node:
            await self._write(node.uuid, check_count(node.uuid, traits))

    async def add_trait(self, ctx: RequestContext, ident: str, trait: str) -> None:
        """Add one trait; adding one the node has is no change."""
        require_admin(ctx, "baremetal:node:traits:set")
        async with self.lock.locked(ident) as node:
            if trait not in node.traits:
                await self._write(node.uuid, check_count(node.uuid, [*node.traits, trait]))

    async def remove_traits(self, ctx: RequestContext, ident: str, trait: str | None = None) -> None:
        """Remove ``trait`` (NodeTraitNotFound if the node lacks it), or every trait when None."""
        require_admin(ctx, "baremetal:node:traits:delete")
        async with self.lock.locked(ident) as node:
            if trait is not None and trait not in node.traits:
                raise be.NodeTraitNotFound(node_id=node.uuid, trait=trait)
            await self._write(node.uuid, [t for t in node.traits if trait is not None and t != trait])

    async def _write(self, node_uuid: str, traits: list[str]) -> None:
        async with self.store.begin() as conn:
            await repos.nodes.update(conn, node_uuid, traits=traits, updated_at=self.rt.now())
