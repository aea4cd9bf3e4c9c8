"""Which instances a restart must look at: those whose stored facts disagree, found by the database.

A restart cannot afford to reconcile every instance of a large cloud (tens of
thousands, each a handful of reads) before it is useful; most are settled and
agree with their ports. What a dead process can have left half-done without an
intent is a disagreement the database can see by itself: a cache entry whose
port is gone or bound elsewhere, a port bound to a live instance that its
cache does not list, an instance in a server action's step, a bare-metal
instance whose node no longer names it, or whose cache lists a port its node
has no VIF for; and, against the devices the driver reports, a device the cache
does not list or a cached port with no device. Each is one statement that joins
through primary keys and indexes; no row comes back that does not need a look.
The periodic, sliced resync remains the backstop for what only a driver knows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, exists, false, or_, select, true

from tether.domain import compute_states as vm
from tether.domain.baremetal import TENANT_VIF_KEY
from tether.store import tables

if TYPE_CHECKING:
    from tether.store.connection import StoreConnection

# Instances asked about at a time when the caller brings pairs of its own (a driver's plugged devices).
_CHUNK = 500


async def caches_out_of_line(conn: StoreConnection) -> set[str]:
    """Live instances whose info cache names a port that is gone or bound to something else, and those
    a port is bound to that their cache does not list."""
    vifs, ports, instances = tables.instance_vifs, tables.ports, tables.instances
    stale = (select(vifs.c.instance_uuid).distinct()
             .select_from(vifs.outerjoin(ports, ports.c.id == vifs.c.port_id))
             .where(or_(ports.c.id.is_(None), ports.c.device_id.is_(None),
                        ports.c.device_id != vifs.c.instance_uuid)))
    unlisted = (select(ports.c.device_id).distinct()
                .select_from(ports.join(instances, and_(instances.c.uuid == ports.c.device_id,
                                                        instances.c.deleted == false()))
                             .outerjoin(vifs, and_(vifs.c.instance_uuid == ports.c.device_id,
                                                   vifs.c.port_id == ports.c.id)))
                .where(vifs.c.port_id.is_(None)))
    found = {row[0] for row in await conn.execute(stale)}
    found.update(row[0] for row in await conn.execute(unlisted))
    return found


async def in_action_steps(conn: StoreConnection) -> set[str]:
    """Live instances with a task state: a server action's step a dead process may have left."""
    instances = tables.instances
    statement = select(instances.c.uuid).where(instances.c.deleted == false(), instances.c.task_state.is_not(None))
    return {row[0] for row in await conn.execute(statement)}


async def nodes_forgotten(conn: StoreConnection) -> list[tuple[str, str]]:
    """(instance, node) of each live bare-metal instance whose node is gone or no longer names it."""
    instances, nodes = tables.instances, tables.nodes
    statement = (select(instances.c.uuid, instances.c.node)
                 .select_from(instances.outerjoin(nodes, nodes.c.uuid == instances.c.node))
                 .where(instances.c.deleted == false(), instances.c.is_baremetal == true(),
                        instances.c.node.is_not(None),
                        or_(nodes.c.uuid.is_(None), nodes.c.instance_uuid.is_(None),
                            nodes.c.instance_uuid != instances.c.uuid))
                 .order_by(instances.c.uuid))
    return [(row[0], row[1]) for row in await conn.execute(statement)]


async def unplugged(conn: StoreConnection, pairs: Iterable[tuple[str, str]]) -> set[str]:
    """Live VM instances at rest whose cache lists a port that is not among ``pairs`` (instance, port:
    devices a driver has plugged): zombie-interface's second half, which a detach cut short leaves."""
    have = set(pairs)
    vifs, instances = tables.instance_vifs, tables.instances
    statement = (select(vifs.c.instance_uuid, vifs.c.port_id)
                 .select_from(vifs.join(instances, instances.c.uuid == vifs.c.instance_uuid))
                 .where(instances.c.deleted == false(), instances.c.is_baremetal == false(),
                        instances.c.vm_state == vm.ACTIVE, instances.c.task_state.is_(None)))
    return {uuid for uuid, port in await conn.execute(statement) if (uuid, port) not in have}


async def unplugged_on_nodes(conn: StoreConnection) -> set[str]:
    """Live bare-metal instances at rest whose cache lists a port that no NIC or portgroup of their node
    has as its VIF: zombie-interface's bare-metal half, which a VIF detach cut short by a crash leaves."""
    vifs, instances = tables.instance_vifs, tables.instances

    def names_the_vif(nics: Any) -> Any:
        return exists().where(nics.c.node_uuid == instances.c.node,
                              nics.c.internal_info[TENANT_VIF_KEY].as_string() == vifs.c.port_id)

    statement = (select(vifs.c.instance_uuid).distinct()
                 .select_from(vifs.join(instances, instances.c.uuid == vifs.c.instance_uuid))
                 .where(instances.c.deleted == false(), instances.c.is_baremetal == true(),
                        instances.c.vm_state == vm.ACTIVE, instances.c.task_state.is_(None),
                        ~names_the_vif(tables.node_ports), ~names_the_vif(tables.portgroups)))
    return {row[0] for row in await conn.execute(statement)}


async def uncached(conn: StoreConnection, pairs: Iterable[tuple[str, str]]) -> set[str]:
    """The instances of ``pairs`` (instance, port: devices a driver has plugged) whose cache lacks that port."""
    wanted: dict[str, set[str]] = {}
    for instance_uuid, port_id in pairs:
        wanted.setdefault(instance_uuid, set()).add(port_id)
    vifs = tables.instance_vifs
    found: set[str] = set()
    names = sorted(wanted)
    for at in range(0, len(names), _CHUNK):
        chunk = names[at:at + _CHUNK]
        cached: dict[str, set[str]] = {}
        for instance_uuid, port_id in await conn.execute(
                select(vifs.c.instance_uuid, vifs.c.port_id).where(vifs.c.instance_uuid.in_(chunk))):
            cached.setdefault(instance_uuid, set()).add(port_id)
        found.update(name for name in chunk if not wanted[name] <= cached.get(name, set()))
    return found
