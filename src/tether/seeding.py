"""A demo cloud: what `tether serve` starts with and what every scenario builds on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tether.cloud import Cloud
from tether.domain import baremetal_states as bms
from tether.services.context import RequestContext

ADMIN_ROLES = frozenset({"admin", "member", "reader"})
PHYSNET = "physnet1"
PUBLIC_NETWORK_ID = "5e1d7c3a-0b9f-4c2e-8a61-7f3d2b4c9e10"
PUBLIC_SUBNET_ID = "9a4b6c2d-3e8f-4a1b-b5c7-0d2e6f8a1c34"
# The seeded cirros image's data: small, but real, so its size and checksums are true.
CIRROS_CONTENT = b"".join(f"tether demo image, block {block:04d}\n".encode().ljust(64, b".") for block in range(64))


@dataclass(frozen=True)
class DemoShape:
    nodes: int = 4
    nics_per_node: int = 1
    hypervisors: int = 2
    admin_password: str | None = "admin"
    demo_password: str | None = "demo"


@dataclass
class Seeded:
    admin: RequestContext
    names: dict[str, str] = field(default_factory=dict)


async def admin_context(cloud: Cloud) -> RequestContext:
    project = await cloud.identity.find_project("admin")
    user = await cloud.identity.find_user("admin")
    return RequestContext(user_id=user.id, project_id=project.id, roles=ADMIN_ROLES)


async def seed_demo_cloud(cloud: Cloud, shape: DemoShape = DemoShape()) -> Seeded:
    """Create the demo cloud; nodes are enrolled, managed and provided (cleaned) in the background."""
    await cloud.identity.bootstrap(admin_password=shape.admin_password, demo_password=shape.demo_password)
    admin = await admin_context(cloud)
    seeded = Seeded(admin=admin)
    names = seeded.names
    compute, network, baremetal = cloud.compute, cloud.network, cloud.baremetal
    for name, vcpus, ram, disk, flavor_id, resource_class in (
        ("m1.tiny", 1, 512, 1, "1", None),
        ("m1.small", 1, 2048, 20, "2", None),
        ("baremetal", 1, 4096, 40, "3", "baremetal"),
    ):
        flavor = await compute.create_flavor(admin, name=name, vcpus=vcpus, ram=ram, disk=disk, id=flavor_id,
                                             resource_class=resource_class)
        names[name] = flavor.id
    image = await cloud.image.create_image(admin, name="cirros", visibility="public", disk_format="qcow2",
                                           container_format="bare")
    await cloud.image.data.upload(admin, image.id, _once(CIRROS_CONTENT))
    names["cirros"] = image.id
    net = await network.create_network(admin, name="private", shared=True, provider_physical_network=PHYSNET)
    names["private"] = net.id
    subnet = await network.create_subnet(admin, network_id=net.id, name="private-subnet", cidr="10.0.0.0/24")
    names["private-subnet"] = subnet.id
    for index in range(1, shape.hypervisors + 1):
        await compute.create_hypervisor(hostname=f"compute-{index}", vcpus=64, memory_mb=262144, local_gb=4000)
    for index in range(1, shape.nodes + 1):
        node = await baremetal.create_node(admin, name=f"node-{index}", resource_class="baremetal",
                                           properties={"cpus": 8, "memory_mb": 32768, "local_gb": 500})
        names[node.name or node.uuid] = node.uuid
        for nic in range(shape.nics_per_node):
            await baremetal.create_port(
                admin, address=f"52:54:00:00:{index:02x}:{nic:02x}", node_uuid=node.uuid,
                physical_network=PHYSNET,
                local_link_connection={"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": f"Eth1/{index}/{nic}",
                                       "switch_info": "tor-1"})
        await baremetal.set_provision_state(admin, node.uuid, "manage")
        await baremetal.set_provision_state(admin, node.uuid, "provide")
    # floating IPs and router gateways come from here (devstack's public network); fixed ids, so the seeded
    # generator draws what it drew before and every scenario's ids stay as they were
    public = await network.create_network(admin, name="public", external=True, network_id=PUBLIC_NETWORK_ID)
    names["public"] = public.id
    public_subnet = await network.create_subnet(admin, network_id=public.id, name="public-subnet",
                                                cidr="172.24.4.0/24", enable_dhcp=False, subnet_id=PUBLIC_SUBNET_ID)
    names["public-subnet"] = public_subnet.id
    return seeded


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def wait_for_nodes(cloud: Cloud, seeded: Seeded, timeout: float = 3600.0) -> None:
    """Wait until every seeded node has finished cleaning and is available."""
    deadline = cloud.rt.now() + timeout
    while cloud.rt.now() < deadline:
        nodes = await cloud.baremetal.list_nodes(seeded.admin)
        if all(node.provision_state == bms.AVAILABLE for node in nodes):
            return
        await cloud.rt.sleep(1.0)
    raise TimeoutError("nodes did not become available")
