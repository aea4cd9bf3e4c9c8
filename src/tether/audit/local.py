"""A snapshot of a Tether cloud: its database and its hardware, read as they are."""

from __future__ import annotations

from tether.cloud import Cloud
from tether.domain.invariants import Snapshot
from tether.services.orchestration.ownership import ports_stacks_list
from tether.store import repos


async def collect(cloud: Cloud) -> Snapshot:
    async with cloud.store.begin() as conn:
        ports = await repos.ports.find(conn)
        allocations = await repos.ip_allocations.find(conn, order_by=("subnet_id", "ip_address"))
        by_port: dict[str, list[dict[str, str]]] = {}
        for allocation in allocations:
            by_port.setdefault(allocation.port_id, []).append(
                {"subnet_id": allocation.subnet_id, "ip_address": allocation.ip_address})
        for port in ports:
            port.fixed_ips = by_port.get(port.id, [])
        snapshot = Snapshot(
            now=cloud.rt.now(),
            instances=await repos.instances.find(conn),
            vifs=await repos.instance_vifs.find(conn, order_by=("instance_uuid", "position")),
            ports=ports,
            ip_allocations=allocations,
            nodes=await repos.nodes.find(conn),
            node_ports=await repos.node_ports.find(conn),
            portgroups=await repos.portgroups.find(conn),
            orchestration_ports=await ports_stacks_list(conn),
            stacks=await repos.stacks.find(conn, deleted_at=None),
            network_ids={network.id for network in await repos.networks.find(conn)},
            image_ids={image.id for image in await repos.images.find(conn) if image.status != "deleted"},
            keypair_ids={str(keypair.id) for keypair in await repos.keypairs.find(conn)},
            server_groups=await repos.server_groups.find(conn),
            group_members=await repos.server_group_members.find(conn),
            subnet_ids={subnet.id for subnet in await repos.subnets.find(conn)},
            routers=await repos.routers.find(conn),
            floating_ips=await repos.floating_ips.find(conn),
            security_groups=await repos.security_groups.find(conn),
            security_group_rules=await repos.security_group_rules.find(conn),
        )
    snapshot.guest_devices = cloud.world.hypervisor.interfaces()
    return snapshot
