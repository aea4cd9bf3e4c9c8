"""The network service on both backends, driven the way compute and bare metal drive it."""

from __future__ import annotations

import asyncio
import random
import re
import uuid
from dataclasses import dataclass
from typing import Any

import netaddr
import pytest

from tether.domain.errors.network import (
    BadRequest,
    GatewayConflictWithAllocationPools,
    InvalidAttribute,
    InvalidFilter,
    InvalidInput,
    InvalidIpForNetwork,
    InvalidIpForSubnet,
    IpAddressGenerationFailure,
    IpAddressInUse,
    MacAddressInUse,
    MacChangeOnBoundPort,
    NetworkInUse,
    NetworkNotFound,
    NotAuthorized,
    PortInUse,
    PortNotFound,
    ReadOnlyAttribute,
    SubnetInUse,
    SubnetNotFound,
    UnrecognizedAttribute,
)
from tether.domain.events import ComputeNotified, NetworkChanged, VifDeleted, VifPlugged, VifUnplugged
from tether.domain.network import ACTIVE, CREATED_BY_COMPUTE, DOWN, Network, Port, Subnet
from tether.runtime.bus import MessageBus
from tether.runtime.errors import InjectedFault
from tether.runtime.faults import FaultPlan
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import NetworkService
from tether.store import repos
from tether.store.database import Store

ADMIN = RequestContext(user_id="admin", project_id="p-admin", roles=frozenset({"admin", "member"}))
ALICE = RequestContext(user_id="alice", project_id="p-alice", roles=frozenset({"member"}))
BOB = RequestContext(user_id="bob", project_id="p-bob", roles=frozenset({"member"}))
READER = RequestContext(user_id="carol", project_id="p-alice", roles=frozenset({"reader"}))
INTERNAL = RequestContext.internal()
NEUTRON_MAC = re.compile(r"^fa:16:3e(:[0-9a-f]{2}){3}$")


@dataclass
class Env:
    net: NetworkService
    events: list[dict[str, str]]
    rt: Runtime

    async def snapshot(self) -> dict[str, list[Any]]:
        """Every network row there is: what 'nothing changed' is compared against."""
        async with self.net.store.begin() as conn:
            return {
                "networks": await repos.networks.find(conn),
                "subnets": await repos.subnets.find(conn),
                "ports": await repos.ports.find(conn),
                "ip_allocations": await repos.ip_allocations.find(conn, order_by=("subnet_id", "ip_address")),
            }

    async def count(self, table: str) -> int:
        return len((await self.snapshot())[table])

    async def network(self, ctx: RequestContext = ALICE, cidr: str | None = "10.0.0.0/24", **kw: Any) -> Network:
        network = await self.net.create_network(ctx, name="net", **kw)
        if cidr is not None:
            await self.net.create_subnet(ctx, network_id=network.id, cidr=cidr)
        return network

    async def compute_port(self, network: Network, device_id: str | None = None, **kw: Any) -> Port:
        """A port as compute creates one for a server it builds."""
        return await self.net.create_port(
            RequestContext.internal(network.project_id), network_id=network.id,
            device_id=device_id or server_uuid(), device_owner="compute:nova", created_by=CREATED_BY_COMPUTE, **kw)


def server_uuid() -> str:
    return str(uuid.uuid4())


def compute_ear(events: list[dict[str, str]]) -> MessageBus:
    """A bus on which what compute is told lands in ``events``, as nova's API bodies."""
    bus = MessageBus()
    bus.subscribe(ComputeNotified, lambda sent: events.extend(event.as_body() for event in sent.events))
    return bus


@pytest.fixture
async def env(database) -> Env:
    runtime = Runtime()
    events: list[dict[str, str]] = []
    service = NetworkService(Store(database, runtime), runtime, random.Random(1234), bus=compute_ear(events))
    return Env(service, events, runtime)


def addresses(port: Port) -> list[str]:
    return [ip["ip_address"] for ip in port.fixed_ips]


# -- addresses ------------------------------------------------------------------


async def test_ipv4_addresses_are_unique_and_inside_the_pool(env: Env) -> None:
    network = await env.net.create_network(ALICE, name="n")
    subnet = await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.0.0.0/28",
                                         allocation_pools=[{"start": "10.0.0.5", "end": "10.0.0.12"}])
    ports = [await env.net.create_port(ALICE, network_id=network.id) for _ in range(8)]
    taken = [address for port in ports for address in addresses(port)]
    assert taken == [f"10.0.0.{n}" for n in range(5, 13)]
    assert all(port.fixed_ips[0]["subnet_id"] == subnet.id for port in ports)


async def test_exhausted_pool_raises_and_writes_nothing(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/29")  # .2 to .6: five addresses
    for _ in range(5):
        await env.net.create_port(ALICE, network_id=network.id)
    before = await env.snapshot()
    with pytest.raises(IpAddressGenerationFailure) as error:
        await env.net.create_port(ALICE, network_id=network.id, name="one too many")
    assert error.value.message == f"No more IP addresses available on network {network.id}."
    assert error.value.status == 409
    assert await env.snapshot() == before


async def test_released_addresses_are_reused(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/29")
    ports = [await env.net.create_port(ALICE, network_id=network.id) for _ in range(5)]
    await env.net.delete_port(ALICE, ports[1].id)
    assert await env.count("ip_allocations") == 4
    again = await env.net.create_port(ALICE, network_id=network.id)
    assert addresses(again) == addresses(ports[1]) == ["10.0.0.3"]


async def test_a_second_ipv4_subnet_takes_over_when_the_first_is_full(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/30")  # a single address: .2
    second = await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.0.1.0/24")
    first_port = await env.net.create_port(ALICE, network_id=network.id)
    second_port = await env.net.create_port(ALICE, network_id=network.id)
    assert addresses(first_port) == ["10.0.0.2"]
    assert second_port.fixed_ips == [{"subnet_id": second.id, "ip_address": "10.0.1.2"}]


async def test_ipv6_stateful_and_slaac_addresses(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/24")
    stateful = await env.net.create_subnet(ALICE, network_id=network.id, cidr="fd00:1::/64", ip_version=6)
    slaac = await env.net.create_subnet(ALICE, network_id=network.id, cidr="fd00:2::/64", ip_version=6,
                                        ipv6_address_mode="slaac", ipv6_ra_mode="slaac")
    ports = [await env.net.create_port(ALICE, network_id=network.id) for _ in range(4)]
    for port in ports:
        by_subnet = {ip["subnet_id"]: ip["ip_address"] for ip in port.fixed_ips}
        assert len(port.fixed_ips) == 3
        # EUI-64: the prefix, then the MAC split around ff:fe with its universal/local bit flipped.
        m = [int(octet, 16) for octet in port.mac_address.split(":")]
        interface_id = [(m[0] ^ 2) << 8 | m[1], m[2] << 8 | 0xFF, 0xFE << 8 | m[3], m[4] << 8 | m[5]]
        slaac_address = netaddr.IPAddress(by_subnet[slaac.id])
        assert list(slaac_address.words) == [0xFD00, 2, 0, 0, *interface_id]
    stateful_ips = [ip["ip_address"] for p in ports for ip in p.fixed_ips if ip["subnet_id"] == stateful.id]
    assert stateful_ips == ["fd00:1::2", "fd00:1::3", "fd00:1::4", "fd00:1::5"]
    assert addresses(ports[0])[0] == "10.0.0.2"  # IPv4 first, as neutron lists them


async def test_explicit_addresses_are_honoured_and_checked(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/24")
    subnet = (await env.net.list_subnets(ALICE, network_id=network.id))[0]
    port = await env.net.create_port(ALICE, network_id=network.id, fixed_ips=[{"ip_address": "10.0.0.77"}])
    assert port.fixed_ips == [{"subnet_id": subnet.id, "ip_address": "10.0.0.77"}]
    # Outside the pool but inside the subnet is allowed for an explicit request, as in neutron.
    await env.net.update_subnet(ALICE, subnet.id, allocation_pools=[{"start": "10.0.0.2", "end": "10.0.0.50"}])
    other = await env.net.create_port(ALICE, network_id=network.id,
                                      fixed_ips=[{"subnet_id": subnet.id, "ip_address": "10.0.0.200"}])
    assert addresses(other) == ["10.0.0.200"]

    before = await env.snapshot()
    with pytest.raises(IpAddressInUse) as in_use:
        await env.net.create_port(ALICE, network_id=network.id, fixed_ips=[{"ip_address": "10.0.0.77"}])
    assert in_use.value.message == (
        f"Unable to complete operation for network {network.id}. The IP address 10.0.0.77 is in use."
    )
    with pytest.raises(InvalidIpForNetwork):
        await env.net.create_port(ALICE, network_id=network.id, fixed_ips=[{"ip_address": "192.168.0.5"}])
    for bad in ("10.0.0.255", "10.0.0.1", "10.0.1.5"):  # broadcast, gateway, another subnet
        with pytest.raises(InvalidIpForSubnet):
            await env.net.create_port(ALICE, network_id=network.id,
                                      fixed_ips=[{"subnet_id": subnet.id, "ip_address": bad}])
    with pytest.raises(InvalidInput, match="fixed_ips included invalid subnet"):
        await env.net.create_port(ALICE, network_id=network.id, fixed_ips=[{"subnet_id": server_uuid()}])
    assert await env.snapshot() == before


async def test_empty_fixed_ips_means_no_address(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id, fixed_ips=[])
    assert port.fixed_ips == []
    assert await env.count("ip_allocations") == 0


async def test_update_fixed_ips_keeps_what_fits_and_releases_the_rest(env: Env) -> None:
    network = await env.network()
    subnet = (await env.net.list_subnets(ALICE, network_id=network.id))[0]
    port = await env.net.create_port(ALICE, network_id=network.id)
    assert addresses(port) == ["10.0.0.2"]
    both = await env.net.update_port(ALICE, port.id, fixed_ips=[{"subnet_id": subnet.id},
                                                                {"ip_address": "10.0.0.9"}])
    assert addresses(both) == ["10.0.0.2", "10.0.0.9"]
    only = await env.net.update_port(ALICE, port.id, fixed_ips=[{"ip_address": "10.0.0.9"}])
    assert addresses(only) == ["10.0.0.9"]
    reused = await env.net.create_port(ALICE, network_id=network.id)
    assert addresses(reused) == ["10.0.0.2"]


async def test_concurrent_creates_never_share_an_address(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/26")
    ports = await asyncio.gather(*(env.net.create_port(ALICE, network_id=network.id) for _ in range(12)))
    taken = [address for port in ports for address in addresses(port)]
    assert len(taken) == len(set(taken)) == 12


# -- MAC addresses --------------------------------------------------------------


async def test_generated_macs_are_neutron_style_and_distinct(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/24")
    macs = [(await env.net.create_port(ALICE, network_id=network.id)).mac_address for _ in range(20)]
    assert all(NEUTRON_MAC.match(mac) for mac in macs)
    assert len(set(macs)) == 20


async def test_a_mac_is_unique_per_network_not_globally(env: Env) -> None:
    first, second = await env.network(), await env.network(cidr="10.1.0.0/24")
    await env.net.create_port(ALICE, network_id=first.id, mac_address="52:54:00:12:34:56")
    on_other = await env.net.create_port(ALICE, network_id=second.id, mac_address="52:54:00:12:34:56")
    assert on_other.mac_address == "52:54:00:12:34:56"
    before = await env.snapshot()
    with pytest.raises(MacAddressInUse) as error:
        await env.net.create_port(ALICE, network_id=first.id, mac_address="52:54:00:12:34:56")
    assert error.value.message == (
        f"Unable to complete operation for network {first.id}. The mac address 52:54:00:12:34:56 is in use."
    )
    assert error.value.status == 409
    assert await env.snapshot() == before


async def test_a_mac_clash_on_update_is_refused(env: Env) -> None:
    network = await env.network()
    taken = await env.net.create_port(ALICE, network_id=network.id, mac_address="52:54:00:00:00:01")
    port = await env.net.create_port(ALICE, network_id=network.id)
    before = await env.snapshot()
    with pytest.raises(MacAddressInUse):
        await env.net.update_port(ALICE, port.id, mac_address=taken.mac_address.upper())
    with pytest.raises(MacAddressInUse):
        await env.net.set_mac_address(port.id, taken.mac_address)
    assert await env.snapshot() == before


@pytest.mark.parametrize("mac", ["nonsense", "00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", "52:54:00:12:34", 7])
async def test_invalid_macs_are_refused(env: Env, mac: object) -> None:
    network = await env.network()
    with pytest.raises(InvalidAttribute) as error:
        await env.net.create_port(ALICE, network_id=network.id, mac_address=mac)  # type: ignore[arg-type]
    assert error.value.message == f"Invalid input for mac_address. Reason: '{mac}' is not a valid MAC address."
    assert await env.count("ports") == 0


async def test_mac_change_on_a_bound_port_is_refused_like_neutron(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network, binding_host_id="compute-1")
    with pytest.raises(MacChangeOnBoundPort) as error:
        await env.net.update_port(ADMIN, port.id, mac_address="52:54:00:aa:bb:cc")
    assert error.value.message == (
        f"Unable to complete operation on port {port.id}, port is already bound, port type: ovs, "
        f"old_mac {port.mac_address}, new_mac 52:54:00:aa:bb:cc."
    )
    assert (await env.net.find_port(port.id)).mac_address == port.mac_address  # type: ignore[union-attr]


async def test_mac_address_none_generates_a_fresh_one(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id, mac_address="52:54:00:12:34:56")
    reset = await env.net.update_port(ALICE, port.id, mac_address=None)
    assert NEUTRON_MAC.match(reset.mac_address)


# -- binding, unbinding and releasing (compute and bare metal) --------------------


async def test_unbind_with_reset_mac_clears_the_binding_then_takes_a_fresh_mac(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id)
    node_mac = "52:54:00:53:b5:b9"
    device = server_uuid()
    await env.net.set_mac_address(port.id, node_mac)
    bound = await env.net.bind_port(port.id, device_id=device, device_owner="compute:nova", host_id="node-1",
                                    vnic_type="baremetal", profile={"local_link_information": [{"port_id": "1"}]})
    assert (bound.binding_host_id, bound.binding_vif_type, bound.mac_address) == ("node-1", "other", node_mac)
    unbound = await env.net.unbind_port(port.id, reset_mac=True)
    assert unbound is not None
    assert (unbound.binding_host_id, unbound.binding_profile, unbound.binding_vif_type, unbound.status) == (
        "", {}, "unbound", DOWN)
    assert unbound.mac_address != node_mac and NEUTRON_MAC.match(unbound.mac_address)
    assert unbound.device_id == device  # unbinding is not releasing
    assert unbound.fixed_ips == port.fixed_ips
    # Seed 001: a new port with the NIC's MAC no longer clashes.
    again = await env.net.create_port(ALICE, network_id=network.id, mac_address=node_mac)
    assert again.mac_address == node_mac


async def test_unbind_without_reset_keeps_the_mac(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network, binding_host_id="compute-1")
    unbound = await env.net.unbind_port(port.id, reset_mac=False)
    assert unbound is not None and unbound.mac_address == port.mac_address and not unbound.is_bound


async def test_release_hands_the_port_back_unbound_and_without_a_device(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id)
    await env.net.bind_port(port.id, device_id=server_uuid(), device_owner="compute:nova", host_id="compute-1")
    released = await env.net.release_port(port.id, reset_mac=True)
    assert released is not None
    assert (released.device_id, released.device_owner, released.binding_host_id) == ("", "", "")
    assert released.mac_address != port.mac_address
    assert addresses(released) == addresses(port)  # a user's port keeps its address


async def test_unbind_and_release_of_a_vanished_port_return_none(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id)
    await env.net.delete_port(ALICE, port.id)
    assert await env.net.unbind_port(port.id, reset_mac=True) is None
    assert await env.net.release_port(port.id, reset_mac=False) is None
    with pytest.raises(PortNotFound):
        await env.net.bind_port(port.id, device_id=server_uuid(), device_owner="compute:nova", host_id="h")
    with pytest.raises(PortNotFound):
        await env.net.set_mac_address(port.id, "52:54:00:12:34:56")


async def test_set_mac_address_on_a_bound_port_unbinds_it_first(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network, binding_host_id="compute-1",
                                  binding_profile={"local_link_information": [{"port_id": "Gig0/1"}]})
    moved = await env.net.set_mac_address(port.id, "52:54:00:AB:CD:EF")
    assert moved.mac_address == "52:54:00:ab:cd:ef"
    assert (moved.binding_host_id, moved.binding_profile, moved.binding_vif_type) == ("", {}, "unbound")
    assert moved.device_id == port.device_id


async def test_set_mac_address_on_an_unbound_port_only_sets_the_mac(env: Env) -> None:
    network = await env.network()
    port = await env.net.create_port(ALICE, network_id=network.id, name="keep")
    moved = await env.net.set_mac_address(port.id, "52:54:00:ab:cd:ef")
    assert (moved.mac_address, moved.name, moved.status) == ("52:54:00:ab:cd:ef", "keep", DOWN)


async def test_bind_refuses_a_port_another_device_has(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network)
    with pytest.raises(PortInUse) as error:
        await env.net.bind_port(port.id, device_id=server_uuid(), device_owner="compute:nova", host_id="h")
    assert error.value.message == (
        f"Unable to complete operation on port {port.id} for network {network.id}. "
        f"Port already has an attached device {port.device_id}."
    )
    same = await env.net.bind_port(port.id, device_id=port.device_id, device_owner="compute:nova", host_id="h")
    assert same.binding_host_id == "h"


# -- isolation between projects ---------------------------------------------------


async def test_another_projects_port_is_not_found_exactly_like_a_missing_one(env: Env) -> None:
    network = await env.network(ALICE)
    port = await env.net.create_port(ALICE, network_id=network.id)
    missing = server_uuid()
    for call in (
        lambda port_id: env.net.get_port(BOB, port_id),
        lambda port_id: env.net.update_port(BOB, port_id, name="mine now"),
        lambda port_id: env.net.delete_port(BOB, port_id),
    ):
        with pytest.raises(PortNotFound) as theirs:
            await call(port.id)
        with pytest.raises(PortNotFound) as nobodys:
            await call(missing)
        assert theirs.value.message.replace(port.id, "X") == nobodys.value.message.replace(missing, "X")
        assert theirs.value.status == nobodys.value.status == 404
    assert await env.net.list_ports(BOB) == []
    assert [p.id for p in await env.net.list_ports(ALICE)] == [port.id]
    assert (await env.net.get_port(ALICE, port.id)).name == ""


async def test_private_networks_are_invisible_and_shared_ones_usable(env: Env) -> None:
    private = await env.network(ALICE)
    shared = await env.network(ADMIN, cidr="10.9.0.0/24", shared=True)
    with pytest.raises(NetworkNotFound):
        await env.net.get_network(BOB, private.id)
    with pytest.raises(NetworkNotFound):
        await env.net.create_port(BOB, network_id=private.id)
    assert {n.id for n in await env.net.list_networks(BOB)} == {shared.id}
    port = await env.net.create_port(BOB, network_id=shared.id)
    assert port.project_id == BOB.project_id
    assert len(await env.net.list_subnets(BOB)) == 1
    with pytest.raises(NotAuthorized):  # visible, but not Bob's to change
        await env.net.update_network(BOB, shared.id, name="bob's")
    with pytest.raises(NotAuthorized):  # choosing a MAC needs the network's owner
        await env.net.create_port(BOB, network_id=shared.id, mac_address="52:54:00:12:34:56")
    subnet = (await env.net.list_subnets(ALICE, network_id=private.id))[0]
    with pytest.raises(SubnetNotFound):
        await env.net.get_subnet(BOB, subnet.id)


async def test_writes_need_a_writer_and_admin_only_attributes_need_an_admin(env: Env) -> None:
    network = await env.network(ALICE)
    port = await env.net.create_port(ALICE, network_id=network.id)
    before = await env.snapshot()
    with pytest.raises(NotAuthorized) as error:
        await env.net.create_port(READER, network_id=network.id)
    assert error.value.status == 403
    with pytest.raises(NotAuthorized):
        await env.net.delete_port(READER, port.id)
    with pytest.raises(NotAuthorized):
        await env.net.create_network(ALICE, name="everyone's", shared=True)
    with pytest.raises(NotAuthorized):
        await env.net.update_port(ALICE, port.id, binding_host_id="compute-1")
    with pytest.raises(NotAuthorized):
        await env.net.create_port(ALICE, network_id=network.id, project_id=BOB.project_id)
    assert await env.snapshot() == before
    assert (await env.net.get_port(READER, port.id)).id == port.id  # readers still read


# -- bulk -------------------------------------------------------------------------


async def test_bulk_create_is_all_or_nothing(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/24")
    before = await env.snapshot()
    bad_batches: list[list[dict[str, Any]]] = [
        [{"network_id": network.id, "name": "a"}, {"network_id": network.id, "mac_address": "52:54:00:00:00:01"},
         {"network_id": network.id, "mac_address": "52:54:00:00:00:01"}],
        [{"network_id": network.id}, {"network_id": server_uuid()}],
        [{"network_id": network.id}, {"network_id": network.id, "fixed_ips": [{"ip_address": "10.0.0.2"}]}],
        [{"network_id": network.id}, {"network_id": network.id, "colour": "blue"}],
        [{"network_id": network.id}, {"name": "no network"}],
    ]
    expected = [MacAddressInUse, NetworkNotFound, IpAddressInUse, UnrecognizedAttribute, BadRequest]
    for batch, error in zip(bad_batches, expected, strict=True):
        with pytest.raises(error):
            await env.net.create_ports(ALICE, batch)
        assert await env.snapshot() == before
    created = await env.net.create_ports(ALICE, [{"network_id": network.id, "name": f"p{n}"} for n in range(3)])
    assert [p.name for p in created] == ["p0", "p1", "p2"]
    assert [addresses(p) for p in created] == [["10.0.0.2"], ["10.0.0.3"], ["10.0.0.4"]]


async def test_bulk_create_that_exhausts_the_pool_writes_nothing(env: Env) -> None:
    network = await env.network(cidr="10.0.0.0/29")  # five addresses
    with pytest.raises(IpAddressGenerationFailure):
        await env.net.create_ports(ALICE, [{"network_id": network.id}] * 6)
    assert await env.count("ports") == 0 and await env.count("ip_allocations") == 0


# -- notifications to compute -------------------------------------------------------


async def test_deleting_a_compute_port_tells_compute(env: Env) -> None:
    network = await env.network()
    device = server_uuid()
    port = await env.compute_port(network, device_id=device)
    await env.net.delete_port(ADMIN, port.id)
    assert env.events == [{"server_uuid": device, "name": VifDeleted.name, "tag": port.id}]
    assert await env.net.find_port(port.id) is None
    assert await env.count("ip_allocations") == 0


async def test_ports_not_owned_by_compute_produce_no_events(env: Env) -> None:
    network = await env.network()
    plain = await env.net.create_port(ALICE, network_id=network.id)
    dhcp = await env.net.create_port(ADMIN, network_id=network.id, device_owner="network:dhcp",
                                     device_id=server_uuid(), project_id=ALICE.project_id)
    named = await env.net.create_port(ADMIN, network_id=network.id, device_owner="compute:nova",
                                      device_id="not-a-uuid", project_id=ALICE.project_id)
    for port in (plain, dhcp, named):
        await env.net.update_port(ADMIN, port.id, name="renamed")
        await env.net.delete_port(ADMIN, port.id)
    assert env.events == []


async def test_notify_comes_after_the_commit_and_the_checkpoint(database) -> None:
    runtime = Runtime(faults=FaultPlan.parse(["network.port_delete.before_notify=error*1"]))
    events: list[dict[str, str]] = []
    service = NetworkService(Store(database, runtime), runtime, random.Random(5), bus=compute_ear(events))
    env = Env(service, events, runtime)
    network = await env.network()
    port = await env.compute_port(network)
    with pytest.raises(InjectedFault):
        await env.net.delete_port(ADMIN, port.id)
    assert await env.net.find_port(port.id) is None  # committed before the checkpoint
    assert events == []  # and compute is told only after it


async def test_an_update_tells_compute_network_changed(env: Env) -> None:
    network = await env.network()
    first, second = server_uuid(), server_uuid()
    port = await env.compute_port(network, device_id=first)
    await env.net.update_port(ADMIN, port.id, name="same name")
    await env.net.update_port(ADMIN, port.id, name="same name")  # no change, no event
    assert env.events == [{"server_uuid": first, "name": NetworkChanged.name, "tag": port.id}]
    env.events.clear()
    await env.net.update_port(ADMIN, port.id, device_id=second)
    assert sorted(e["server_uuid"] for e in env.events) == sorted([first, second])
    assert {e["name"] for e in env.events} == {NetworkChanged.name}


async def test_the_agent_reports_plugged_and_unplugged(env: Env) -> None:
    network = await env.network()
    device = server_uuid()
    port = await env.compute_port(network, device_id=device, binding_host_id="compute-1")
    await env.net.port_plugged(port.id)
    assert (await env.net.find_port(port.id)).status == ACTIVE  # type: ignore[union-attr]
    await env.net.port_unplugged(port.id)
    assert (await env.net.find_port(port.id)).status == DOWN  # type: ignore[union-attr]
    assert env.events == [
        {"server_uuid": device, "name": VifPlugged.name, "tag": port.id, "status": "completed"},
        {"server_uuid": device, "name": VifUnplugged.name, "tag": port.id, "status": "completed"},
    ]


async def test_an_unbound_port_does_not_go_active(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network)
    await env.net.port_plugged(port.id)
    assert (await env.net.find_port(port.id)).status == DOWN  # type: ignore[union-attr]
    assert env.events == []


async def test_port_plugged_after_the_port_was_deleted_does_nothing(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network, binding_host_id="compute-1")
    await env.net.delete_port(ADMIN, port.id)
    env.events.clear()
    before = await env.snapshot()
    await env.net.port_plugged(port.id)
    await env.net.port_unplugged(port.id)
    assert env.events == []
    assert await env.snapshot() == before


async def test_a_failing_receiver_does_not_undo_the_change(database) -> None:
    runtime = Runtime()

    def broken(_sent: ComputeNotified) -> None:
        raise RuntimeError("compute is down")

    bus = MessageBus()
    bus.subscribe(ComputeNotified, broken)
    service = NetworkService(Store(database, runtime), runtime, random.Random(3), bus=bus)
    env = Env(service, [], runtime)
    port = await env.compute_port(await env.network())
    await service.delete_port(ADMIN, port.id)
    assert await service.find_port(port.id) is None


# -- networks and subnets -------------------------------------------------------------


async def test_delete_network_refuses_while_compute_ports_remain(env: Env) -> None:
    network = await env.network()
    port = await env.compute_port(network)
    await env.net.create_port(ADMIN, network_id=network.id, device_owner="network:dhcp",
                              project_id=ALICE.project_id)
    before = await env.snapshot()
    with pytest.raises(NetworkInUse) as error:
        await env.net.delete_network(ALICE, network.id)
    assert error.value.message == (
        f"Unable to complete operation on network {network.id}. "
        "There are one or more ports still in use on the network."
    )
    assert await env.snapshot() == before
    await env.net.delete_port(ADMIN, port.id)
    await env.net.delete_network(ALICE, network.id)
    assert await env.snapshot() == {"networks": [], "subnets": [], "ports": [], "ip_allocations": []}


async def test_delete_subnet_refuses_while_addresses_are_allocated(env: Env) -> None:
    network = await env.network()
    subnet = (await env.net.list_subnets(ALICE))[0]
    port = await env.net.create_port(ALICE, network_id=network.id)
    with pytest.raises(SubnetInUse) as error:
        await env.net.delete_subnet(ALICE, subnet.id)
    assert error.value.message == (
        f"Unable to complete operation on subnet {subnet.id}: "
        "One or more ports have an IP allocation from this subnet."
    )
    await env.net.delete_port(ALICE, port.id)
    await env.net.delete_subnet(ALICE, subnet.id)
    assert await env.net.list_subnets(ALICE) == []


async def test_subnet_defaults_and_validation(env: Env) -> None:
    network = await env.net.create_network(ALICE, name="n")
    subnet = await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.0.0.0/24",
                                         dns_nameservers=["8.8.8.8"])
    assert (subnet.gateway_ip, subnet.allocation_pools, subnet.project_id) == (
        "10.0.0.1", [{"start": "10.0.0.2", "end": "10.0.0.254"}], ALICE.project_id)
    no_gateway = await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.1.0.0/29", gateway_ip=None)
    assert (no_gateway.gateway_ip, no_gateway.allocation_pools) == (None, [{"start": "10.1.0.1", "end": "10.1.0.6"}])
    before = await env.snapshot()
    with pytest.raises(InvalidInput, match="overlaps with another subnet"):
        await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.0.0.128/25")
    with pytest.raises(GatewayConflictWithAllocationPools):
        await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.2.0.0/24", gateway_ip="10.2.0.5",
                                    allocation_pools=[{"start": "10.2.0.2", "end": "10.2.0.9"}])
    with pytest.raises(InvalidAttribute):
        await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.3.0.1/24")
    with pytest.raises(InvalidAttribute):
        await env.net.create_subnet(ALICE, network_id=network.id, cidr="10.3.0.0/24", ip_version=5)
    with pytest.raises(NetworkNotFound):
        await env.net.create_subnet(ALICE, network_id=server_uuid(), cidr="10.3.0.0/24")
    with pytest.raises(ReadOnlyAttribute):
        await env.net.update_subnet(ALICE, subnet.id, cidr="10.9.0.0/24")
    with pytest.raises(GatewayConflictWithAllocationPools):
        await env.net.update_subnet(ALICE, subnet.id, gateway_ip="10.0.0.7")
    assert await env.snapshot() == before


async def test_update_network_and_unsharing_in_use(env: Env) -> None:
    shared = await env.network(ADMIN, shared=True)
    renamed = await env.net.update_network(ADMIN, shared.id, name="renamed", mtu=9000)
    assert (renamed.name, renamed.mtu) == ("renamed", 9000)
    await env.net.create_port(BOB, network_id=shared.id)
    from tether.domain.errors.network import InvalidSharedSetting

    with pytest.raises(InvalidSharedSetting):
        await env.net.update_network(ADMIN, shared.id, shared=False)
    assert (await env.net.get_network(BOB, shared.id)).shared


# -- listing --------------------------------------------------------------------------


async def test_list_ports_filters(env: Env) -> None:
    network = await env.network()
    device = server_uuid()
    first = await env.compute_port(network, device_id=device)
    second = await env.compute_port(network, device_id=device)
    other = await env.net.create_port(ALICE, network_id=network.id, name="other")
    assert {p.id for p in await env.net.list_ports(ADMIN, device_id=device)} == {first.id, second.id}
    assert [p.id for p in await env.net.list_ports(ADMIN, ip_address=addresses(second)[0])] == [second.id]
    assert {p.id for p in await env.net.list_ports(ADMIN, ip_address=[addresses(first)[0], addresses(other)[0]])} == {
        first.id, other.id}
    subnet_id = first.fixed_ips[0]["subnet_id"]
    assert len(await env.net.list_ports(ADMIN, subnet_id=subnet_id)) == 3
    assert [p.id for p in await env.net.list_ports(ADMIN, name=["other", "nope"])] == [other.id]
    assert len(await env.net.list_ports(ADMIN, admin_state_up="true")) == 3
    assert await env.net.list_ports(ADMIN, id=first.id, ip_address=addresses(other)[0]) == []
    with pytest.raises(InvalidFilter) as error:
        await env.net.list_ports(ADMIN, colour="blue")
    assert error.value.message == "[colour] is invalid attribute for filtering"
    with pytest.raises(InvalidAttribute):
        await env.net.list_ports(ADMIN, admin_state_up="perhaps")


# -- bad input never changes anything ---------------------------------------------------


BAD_CALLS = {
    "port on an unknown network": lambda n, p, s: n.create_port(ALICE, network_id=server_uuid()),
    "port with a non-uuid network": lambda n, p, s: n.create_port(ALICE, network_id="private"),
    "port with a wrong type name": lambda n, p, s: n.create_port(ALICE, network_id=p.network_id, name=5),
    "port with a bad vnic type": lambda n, p, s: n.create_port(ADMIN, network_id=p.network_id,
                                                               binding_vnic_type="warp"),
    "port with malformed fixed_ips": lambda n, p, s: n.create_port(ALICE, network_id=p.network_id,
                                                                   fixed_ips=[{"ip": "10.0.0.9"}]),
    "port with an invalid address": lambda n, p, s: n.create_port(ALICE, network_id=p.network_id,
                                                                  fixed_ips=[{"ip_address": "10.0.0.300"}]),
    "update of an unknown attribute": lambda n, p, s: n.update_port(ALICE, p.id, colour="blue"),
    "update of a read-only attribute": lambda n, p, s: n.update_port(ALICE, p.id, network_id=server_uuid()),
    "update with a bad mac": lambda n, p, s: n.update_port(ALICE, p.id, mac_address="zz"),
    "update to an address outside the subnet": lambda n, p, s: n.update_port(
        ALICE, p.id, fixed_ips=[{"subnet_id": s.id, "ip_address": "10.9.9.9"}]),
    "update to an address in use": lambda n, p, s: n.update_port(ALICE, p.id, fixed_ips=[{"ip_address": "10.0.0.3"}]),
    "update with fixed_ips of None": lambda n, p, s: n.update_port(ALICE, p.id, fixed_ips=None),
    "update of an unknown port": lambda n, p, s: n.update_port(ALICE, server_uuid(), name="x"),
    "delete of an unknown port": lambda n, p, s: n.delete_port(ALICE, server_uuid()),
    "delete of a non-string port id": lambda n, p, s: n.delete_port(ALICE, ["x"]),
    "network with a tiny mtu": lambda n, p, s: n.create_network(ALICE, name="n", mtu=10),
    "network with a bad type": lambda n, p, s: n.create_network(ADMIN, name="n", provider_network_type="token-ring"),
    "network with an out-of-range vlan": lambda n, p, s: n.create_network(
        ADMIN, name="n", provider_network_type="vlan", provider_segmentation_id=5000),
    "subnet with a bad pool": lambda n, p, s: n.update_subnet(
        ALICE, s.id, allocation_pools=[{"start": "10.0.0.2", "end": "10.0.1.9"}]),
    "bind with a bad profile": lambda n, p, s: n.bind_port(p.id, device_id="d", device_owner="o", host_id="h",
                                                           profile="nope"),
    "set an invalid mac": lambda n, p, s: n.set_mac_address(p.id, "nope"),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
async def test_bad_input_changes_nothing(env: Env, name: str) -> None:
    network = await env.network()
    subnet: Subnet = (await env.net.list_subnets(ALICE))[0]
    port = await env.net.create_port(ALICE, network_id=network.id)
    await env.net.create_port(ALICE, network_id=network.id)  # holds 10.0.0.3
    before = await env.snapshot()
    with pytest.raises((BadRequest, InvalidInput, PortNotFound, NetworkNotFound, IpAddressInUse, InvalidIpForSubnet)):
        await BAD_CALLS[name](env.net, port, subnet)
    assert await env.snapshot() == before
    assert env.events == []
