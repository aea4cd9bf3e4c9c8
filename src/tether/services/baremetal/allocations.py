"""Allocations: ask for a node by resource class, traits and candidates, as metal3 and standalone users do.

After ironic's ``conductor/allocations.py``: the candidates are the available,
unassociated nodes not in maintenance of the resource class (and of the
allocation's owner), among the named candidates if any, that have every
requested trait; they are tried in random order (a node named like the
allocation first), each under its lock and checked again there, and the one
reserved gets the allocation's uuid as its ``instance_uuid``. An allocation
that finds no node ends in ``error`` with ironic's words. Deleting an
allocation frees its node; ironic does it at once rather than through a
conductor, and so does Tether.
"""

from __future__ import annotations

import random
from dataclasses import KW_ONLY, dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import ALLOCATION_ACTIVE, ALLOCATION_ERROR, Allocation, Node
from tether.domain.baremetal_states import ACTIVE, AVAILABLE, DEPLOYFAIL, ERROR
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.lookup import NodeLookup, get_node
from tether.services.baremetal.node_lock import NodeLock
from tether.services.baremetal.transitions import node_key
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

# ironic's states.UPDATE_ALLOWED_STATES, as far as Tether has them.
_UPDATE_ALLOWED_STATES = (DEPLOYFAIL, "clean failed", "inspect failed", ERROR)


class AllocationFailed(Exception):
    def __init__(self, uuid: str, error: str) -> None:
        super().__init__(f"Failed to process allocation {uuid}: {error}.")


async def get_allocation(conn: StoreConnection, ident: str) -> Allocation:
    """An allocation by uuid or by name."""
    if isinstance(ident, str) and ident:
        found = (await repos.allocations.get(conn, ident.lower()) if is_uuid_like(ident)
                 else await repos.allocations.first(conn, name=ident))
        if found is not None:
            return found
    raise be.AllocationNotFound(allocation=ident)


def _traits_match(traits: list[str], node: Node) -> bool:
    return set(node.traits).issuperset(traits)


def _usable(node: Node, allocation: Allocation) -> bool:
    """ironic's _verify_node: the node still satisfies the request (checked again under its lock)."""
    return (node.is_free and node.resource_class == allocation.resource_class
            and _traits_match(allocation.traits, node)
            and (not allocation.candidate_nodes or node.uuid in allocation.candidate_nodes)
            and (allocation.owner is None or allocation.owner in (node.owner, node.lessee)))


@dataclass(eq=False)
class Allocations:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    lookup: NodeLookup
    lock: NodeLock

    async def list_allocations(self, ctx: RequestContext) -> list[Allocation]:
        require_admin(ctx, "baremetal:allocation:list")
        async with self.store.begin() as conn:
            return await repos.allocations.find(conn, order_by=("created_at", "uuid"))

    async def get_allocation(self, ctx: RequestContext, ident: str) -> Allocation:
        require_admin(ctx, "baremetal:allocation:get")
        async with self.store.begin() as conn:
            return await get_allocation(conn, ident)

    async def create_allocation(
        self, ctx: RequestContext, *, resource_class: str | None, name: str | None = None, uuid: str | None = None,
        traits: list[str] | None = None, candidate_nodes: list[str] | None = None,
        extra: dict[str, Any] | None = None, owner: str | None = None, node: str | None = None,
    ) -> Allocation:
        """Record the allocation, then reserve a node for it (or, with ``node``, backfill it for that active
        node). The allocation is returned as recorded, in ``allocating``, as ironic's API returns it; the
        reservation is done by the time the call returns."""
        require_admin(ctx, "baremetal:allocation:create")
        backfilled = None
        if node is not None:
            async with self.store.begin() as conn:
                try:
                    backfilled = await get_node(conn, node)
                except be.NodeNotFound as error:
                    raise be.InvalidParameterValue(err=error.message) from None  # ironic: 400, not 404
            resource_class = resource_class or backfilled.resource_class
            if uuid is None and backfilled.instance_uuid is not None:
                uuid = backfilled.instance_uuid  # ironic: the backfilled allocation takes the instance's uuid
        if not resource_class:
            raise be.Invalid(reason="The resource_class field is mandatory when not backfilling")
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        candidates: list[str] = []
        async with self.store.begin() as conn:
            for ident in candidate_nodes or []:
                try:
                    node = await get_node(conn, ident)
                except be.NodeNotFound as error:
                    raise be.InvalidParameterValue(err=error.message) from None  # ironic: 400, not 404
                if node.uuid not in candidates:
                    candidates.append(node.uuid)
        now = self.rt.now()
        allocation = Allocation(uuid=uuid, name=name, resource_class=resource_class, traits=sorted(set(traits or [])),
                                candidate_nodes=candidates, extra=dict(extra or {}), owner=owner,
                                created_at=now, updated_at=now)
        try:
            async with self.store.begin() as conn:
                if await repos.allocations.get(conn, uuid) is not None:
                    raise be.AllocationAlreadyExists(uuid=uuid)
                if name is not None and await repos.allocations.first(conn, name=name) is not None:
                    raise be.AllocationDuplicateName(name=name)
                await repos.allocations.add(conn, allocation)
        except IntegrityError:
            raise be.AllocationDuplicateName(name=name) from None
        if backfilled is not None:
            await self._backfill(allocation, backfilled.uuid)
            return await self.get_allocation(ctx, uuid)  # ironic backfills before it answers
        await self._allocate(allocation)
        return allocation

    async def _backfill(self, allocation: Allocation, node_uuid: str) -> None:
        """ironic's _do_backfill_allocation; a node that does not match refuses it, and nothing is kept."""
        async with self.lock.locked(node_uuid) as node:
            problems = []
            if node.provision_state != ACTIVE:
                problems.append(f'Node must be in the "active" state, but the current state is '
                                f'"{node.provision_state}"')
            if allocation.resource_class and node.resource_class != allocation.resource_class:
                problems.append(f"Resource class {node.resource_class} does not match the requested resource "
                                f"class {allocation.resource_class}")
            if allocation.traits and not _traits_match(allocation.traits, node):
                problems.append(f"List of traits {node.traits} does not match the requested traits "
                                f"{allocation.traits}")
            if allocation.candidate_nodes and node.uuid not in allocation.candidate_nodes:
                problems.append(f"Candidate nodes must be empty or contain the target node, but got "
                                f"{allocation.candidate_nodes}")
            if node.instance_uuid is not None and node.instance_uuid != allocation.uuid:
                problems.append(f"the node is associated with instance {node.instance_uuid}")
            if problems:
                async with self.store.begin() as conn:
                    await repos.allocations.delete(conn, allocation.uuid)
                failure = AllocationFailed(allocation.uuid, f"Cannot backfill an allocation for node {node.uuid}: "
                                                            f"{'; '.join(problems)}")
                raise be.InvalidParameterValue(err=str(failure))
            async with self.store.begin() as conn:
                now = self.rt.now()
                await repos.nodes.update(conn, node.uuid, instance_uuid=allocation.uuid,
                                         allocation_uuid=allocation.uuid, updated_at=now)
                await repos.allocations.update(conn, allocation.uuid, state=ALLOCATION_ACTIVE, node_uuid=node.uuid,
                                               updated_at=now)
        self.rt.notify(node_key(node_uuid))

    async def _allocate(self, allocation: Allocation) -> None:
        try:
            nodes = await self._candidates(allocation)
            for node in nodes:
                if await self._reserve(allocation, node.uuid):
                    self.rt.note(f"node {node.uuid}: reserved for allocation {allocation.uuid}")
                    return
            raise AllocationFailed(allocation.uuid, f"could not reserve any of {len(nodes)} suitable nodes")
        except AllocationFailed as failure:
            async with self.store.begin() as conn:
                await repos.allocations.update(conn, allocation.uuid, state=ALLOCATION_ERROR, node_uuid=None,
                                               last_error=str(failure), updated_at=self.rt.now())

    async def _candidates(self, allocation: Allocation) -> list[Node]:
        async with self.store.begin() as conn:
            nodes = await repos.nodes.find(conn, order_by=("created_at", "uuid"), provision_state=AVAILABLE,
                                           maintenance=False, instance_uuid=None,
                                           resource_class=allocation.resource_class)
        nodes = [node for node in nodes if (not allocation.candidate_nodes or node.uuid in allocation.candidate_nodes)
                 and (allocation.owner is None or allocation.owner in (node.owner, node.lessee))]
        if not nodes:
            what = ("none of the requested nodes are available and match the resource class"
                    if allocation.candidate_nodes else "no available nodes match the resource class")
            raise AllocationFailed(allocation.uuid, f"{what} {allocation.resource_class}")
        if allocation.traits:
            nodes = [node for node in nodes if _traits_match(allocation.traits, node)]
            if not nodes:
                raise AllocationFailed(allocation.uuid, "no suitable nodes have the requested traits "
                                                        f"{', '.join(allocation.traits)}")
        # Parallel allocations do not try the nodes in the same order; a node named like the allocation goes first.
        self.rng.shuffle(nodes)
        nodes.sort(key=lambda node: allocation.name is None or node.name != allocation.name)
        return nodes

    async def _reserve(self, allocation: Allocation, node_uuid: str) -> bool:
        try:
            async with self.lock.locked(node_uuid) as node:
                if not _usable(node, allocation):
                    return False
                now = self.rt.now()
                async with self.store.begin() as conn:
                    won = await repos.nodes.update(conn, node.uuid, expect={"instance_uuid": None},
                                                   instance_uuid=allocation.uuid, allocation_uuid=allocation.uuid,
                                                   updated_at=now)
                    if won:
                        await repos.allocations.update(conn, allocation.uuid, state=ALLOCATION_ACTIVE,
                                                       node_uuid=node.uuid, last_error=None, updated_at=now)
        except (be.NodeLocked, be.NodeNotFound):
            return False
        except IntegrityError:
            return False  # the allocation's uuid is some other node's instance already
        if won:
            self.rt.notify(node_key(node_uuid))
        return bool(won)

    async def update_allocation(self, ctx: RequestContext, ident: str, changes: dict[str, Any]) -> Allocation:
        """Change an allocation's name or extra (the only fields ironic lets a PATCH touch)."""
        require_admin(ctx, "baremetal:allocation:update")
        try:
            async with self.store.begin() as conn:
                allocation = await get_allocation(conn, ident)
                name = changes.get("name", allocation.name)
                if name is not None and name != allocation.name:
                    other = await repos.allocations.first(conn, name=name)
                    if other is not None:
                        raise be.AllocationDuplicateName(name=name)
                await repos.allocations.update(conn, allocation.uuid, updated_at=self.rt.now(), **changes)
        except IntegrityError:
            raise be.AllocationDuplicateName(name=changes.get("name")) from None
        return await self.get_allocation(ctx, allocation.uuid)

    async def delete_allocation(self, ctx: RequestContext, ident: str) -> None:
        """Delete the allocation and free its node (ironic's verify_node_for_deallocation first)."""
        require_admin(ctx, "baremetal:allocation:delete")
        async with self.store.begin() as conn:
            allocation = await get_allocation(conn, ident)
            node_gone = allocation.node_uuid is None or await repos.nodes.get(conn, allocation.node_uuid) is None
            if node_gone:
                await repos.allocations.delete(conn, allocation.uuid)
        if node_gone:
            return
        assert allocation.node_uuid is not None
        async with self.lock.locked(allocation.node_uuid) as node:
            if not node.maintenance:
                if node.target_provision_state and node.provision_state not in _UPDATE_ALLOWED_STATES:
                    raise be.InvalidState(
                        f"Cannot remove allocation {allocation.uuid} for node {node.uuid}, because the node is in "
                        f"state {node.provision_state} where updates are not allowed (and maintenance mode is off)")
                if node.provision_state == ACTIVE:
                    raise be.InvalidState(
                        f"Cannot remove allocation {allocation.uuid} for node {node.uuid}, because the node is "
                        "active (and maintenance mode is off)")
            async with self.store.begin() as conn:
                if node.allocation_uuid == allocation.uuid:
                    await repos.nodes.update(conn, node.uuid, allocation_uuid=None, instance_uuid=None,
                                             updated_at=self.rt.now())
                await repos.allocations.delete(conn, allocation.uuid)
        self.rt.notify(node_key(node.uuid))
