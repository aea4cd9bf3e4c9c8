"""What one key's reconciliation reads: the rows around that key, never the whole system.

Each snapshot holds the key's own row and its neighbours in the ownership
graph (a node's NICs, the ports its VIFs name, the instance it runs; an
instance's cache, its ports, its node, its guest devices; a port's owner and
the NICs that share its MAC), so the design's invariants, run over it,
report exactly the disagreements that concern the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain.compute import Instance
from tether.domain.invariants import Snapshot
from tether.domain.network import CREATED_BY_ORCHESTRATION, Port
from tether.reconcile.queue import Key
from tether.services.orchestration.ownership import ports_stacks_list
from tether.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from tether.cloud import Cloud


async def snapshot_around(cloud: Cloud, key: Key) -> Snapshot:
    snapshot = Snapshot(now=cloud.rt.now())
    async with cloud.store.begin() as uow:
        if key.kind == "node":
            await _node(uow, snapshot, key.id)
        elif key.kind == "instance":
            await _instance(uow, snapshot, key.id)
        elif key.kind == "port":
            await _port(uow, snapshot, key.id)
        else:
            raise ValueError(f"no reconciler looks at a {key.kind}")
        await _with_fixed_ips(uow, snapshot.ports)
        made_by_stacks = sorted({port.id for port in snapshot.ports if port.created_by == CREATED_BY_ORCHESTRATION})
        if made_by_stacks:
            snapshot.orchestration_ports = await ports_stacks_list(uow, made_by_stacks)
    instances = {instance.uuid for instance in snapshot.instances} | ({key.id} if key.kind == "instance" else set())
    snapshot.guest_devices = [device for uuid in sorted(instances)
                              for device in cloud.world.hypervisor.interfaces(instance_uuid=uuid)]
    if key.kind == "port":
        snapshot.guest_devices += [device for device in cloud.world.hypervisor.interfaces()
                                   if device.port_id == key.id and device.instance_uuid not in instances]
    return snapshot


async def _node(uow: UnitOfWork, snapshot: Snapshot, uuid: str) -> None:
    node = await uow.nodes.get(uuid)
    if node is None:
        return
    snapshot.nodes.append(node)
    snapshot.node_ports += await uow.node_ports.find(node_uuid=uuid)
    snapshot.portgroups += await uow.portgroups.find(node_uuid=uuid)
    vifs = sorted({nic.vif for nic in [*snapshot.node_ports, *snapshot.portgroups] if nic.vif})
    if vifs:
        snapshot.ports += await uow.ports.find(id=vifs)
    instances = await uow.instances.find(node=uuid)
    if node.instance_uuid and all(instance.uuid != node.instance_uuid for instance in instances):
        named = await uow.instances.get(node.instance_uuid)
        if named is not None:
            instances.append(named)
    await _add_instances(uow, snapshot, instances)


async def _instance(uow: UnitOfWork, snapshot: Snapshot, uuid: str) -> None:
    instance = await uow.instances.get(uuid)
    if instance is None:
        # Gone: what still names it (ports, guest devices) is judged against its absence.
        snapshot.ports += await uow.ports.find(device_id=uuid)
        return
    await _add_instances(uow, snapshot, [instance])
    cached = sorted({entry.port_id for entry in snapshot.vifs} - {port.id for port in snapshot.ports})
    if cached:
        snapshot.ports += await uow.ports.find(id=cached)
    if instance.is_baremetal and instance.node:
        node = await uow.nodes.get(instance.node)
        if node is not None:
            snapshot.nodes.append(node)
            snapshot.node_ports += await uow.node_ports.find(node_uuid=node.uuid)
            snapshot.portgroups += await uow.portgroups.find(node_uuid=node.uuid)


async def _port(uow: UnitOfWork, snapshot: Snapshot, port_id: str) -> None:
    port = await uow.ports.get(port_id)
    if port is None:
        return
    snapshot.ports.append(port)
    if port.device_id:
        owner = await uow.instances.get(port.device_id)
        if owner is not None:
            snapshot.instances.append(owner)
            snapshot.vifs += await uow.instance_vifs.find(order_by=("position",), instance_uuid=owner.uuid)
    # The invariant compares MACs without case; so does this read.
    spellings = sorted({port.mac_address, port.mac_address.lower(), port.mac_address.upper()})
    snapshot.node_ports += await uow.node_ports.find(address=spellings)
    snapshot.ports += [other for other in await uow.ports.find(network_id=port.network_id,
                                                               mac_address=port.mac_address)
                       if other.id != port.id]


async def _add_instances(uow: UnitOfWork, snapshot: Snapshot, instances: list[Instance]) -> None:
    known = {instance.uuid for instance in snapshot.instances}
    for instance in instances:
        if instance.uuid in known:
            continue
        known.add(instance.uuid)
        snapshot.instances.append(instance)
        snapshot.vifs += await uow.instance_vifs.find(order_by=("position",), instance_uuid=instance.uuid)
        seen = {port.id for port in snapshot.ports}
        snapshot.ports += [port for port in await uow.ports.find(device_id=instance.uuid) if port.id not in seen]


async def _with_fixed_ips(uow: UnitOfWork, ports: list[Port]) -> None:
    if not ports:
        return
    by_port: dict[str, list[dict[str, str]]] = {}
    for allocation in await uow.ip_allocations.find(order_by=("subnet_id", "ip_address"),
                                                    port_id=sorted({port.id for port in ports})):
        by_port.setdefault(allocation.port_id, []).append(
            {"subnet_id": allocation.subnet_id, "ip_address": allocation.ip_address})
    for port in ports:
        port.fixed_ips = by_port.get(port.id, [])
