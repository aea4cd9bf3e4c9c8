"""What is true of a few servers and ports right now: the state a reply is judged against.

Read when an operation answers, in the same step (under the deterministic
scheduler nothing runs in between), so the facts are those the reply was
given in. It reads only the rows around the resources the operation names
(a port's VIF on a node only through the node of a server named: the end
state, read whole, shows the rest).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tether.domain.invariants import Snapshot

if TYPE_CHECKING:
    from tether.cloud import Cloud


async def around(cloud: Cloud, servers: Iterable[str] = (), ports: Iterable[str] = ()) -> Snapshot:
    servers, ports = sorted(set(servers) - {""}), sorted(set(ports) - {""})
    snap = Snapshot(now=cloud.rt.now())
    async with cloud.store.begin() as uow:
        if servers:
            snap.instances += await uow.instances.find(uuid=servers)
            snap.vifs += await uow.instance_vifs.find(instance_uuid=servers)
            snap.ports += await uow.ports.find(device_id=servers)
            nodes = {node.uuid: node for node in await uow.nodes.find(instance_uuid=servers)}
            wanted = sorted({i.node for i in snap.instances if i.is_baremetal and i.node} - set(nodes))
            if wanted:
                nodes.update((node.uuid, node) for node in await uow.nodes.find(uuid=wanted))
            snap.nodes += list(nodes.values())
            if nodes:
                snap.node_ports += await uow.node_ports.find(node_uuid=sorted(nodes))
                snap.portgroups += await uow.portgroups.find(node_uuid=sorted(nodes))
        if ports:
            known = {port.id for port in snap.ports}
            snap.ports += [port for port in await uow.ports.find(id=ports) if port.id not in known]
            cached = {(entry.instance_uuid, entry.port_id) for entry in snap.vifs}
            snap.vifs += [entry for entry in await uow.instance_vifs.find(port_id=ports)
                          if (entry.instance_uuid, entry.port_id) not in cached]
    hypervisor = cloud.world.hypervisor
    snap.guest_devices = [device for uuid in servers for device in hypervisor.interfaces(instance_uuid=uuid)]
    if ports:
        snap.guest_devices += [device for device in hypervisor.interfaces()
                               if device.port_id in ports and device.instance_uuid not in servers]
    return snap
