"""A port's fixed IPs: what was asked for, checked, chosen and written to ``ip_allocations``.

Requests come in neutron's three shapes, ``{"subnet_id", "ip_address"}``,
``{"subnet_id"}`` and ``{"ip_address"}``. With no request at all a port gets
what neutron gives it: one address from the first IPv4 subnet with room, one
from the first stateful IPv6 subnet with room, and its EUI-64 address on every
SLAAC subnet. Everything runs inside the caller's transaction, so a failure
half-way leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain import ipam
from tether.domain.errors.network import (
    InvalidAttribute,
    InvalidInput,
    InvalidIpForNetwork,
    InvalidIpForSubnet,
    IpAddressGenerationFailure,
)
from tether.domain.network import IpAllocation, Port, Subnet
from tether.services.network import rows, validation

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


@dataclass(frozen=True)
class Request:
    subnet_id: str | None
    ip_address: str | None


def parse(value: object) -> list[Request] | None:
    """Check the shape of a ``fixed_ips`` value before any transaction; None means "the default"."""
    if value is None:
        return None
    requests = []
    for item in validation.list_of("fixed_ips", value):
        if not isinstance(item, dict) or not item or set(item) - {"subnet_id", "ip_address"}:
            raise InvalidAttribute(
                attr="fixed_ips",
                reason=f"'{item}' is not a dictionary with keys from ['ip_address', 'subnet_id']",
            )
        subnet_id = item.get("subnet_id")
        if subnet_id is not None:
            validation.uuid("fixed_ips", subnet_id)
        ip_address = item.get("ip_address")
        if ip_address is not None:
            ip_address = ipam.normalize_ip(ip_address)
        if subnet_id is None and ip_address is None:
            raise InvalidAttribute(attr="fixed_ips", reason=f"'{item}' names neither a subnet nor an address")
        requests.append(Request(subnet_id, ip_address))
    return requests


def is_auto_address(subnet: Subnet) -> bool:
    return subnet.ip_version == 6 and ipam.is_auto_address(subnet.ipv6_address_mode, subnet.ipv6_ra_mode)


class Allocator:
    """Allocates for ports of one network inside one transaction, which holds the network's row lock."""

    def __init__(self, conn: StoreConnection, network_id: str, subnets: list[Subnet]) -> None:
        self.conn = conn
        self.network_id = network_id
        self.subnets = subnets
        self._by_id = {subnet.id: subnet for subnet in subnets}
        self.written = 0

    async def allocate(self, port: Port, requests: list[Request] | None) -> int:
        """Addresses for a new port; how many it got."""
        self.written = 0
        if requests is None:
            await self._allocate_default(port)
        else:
            for request in requests:
                await self._allocate_one(port, request)
        return self.written

    async def _allocate_default(self, port: Port) -> None:
        ipv4 = [s for s in self.subnets if s.ip_version == 4]
        ipv6_stateful = [s for s in self.subnets if s.ip_version == 6 and not is_auto_address(s)]
        for group in (ipv4, ipv6_stateful):
            if not group:
                continue
            for subnet in group:
                if await self._allocate_free(port, subnet):
                    break
            else:
                raise IpAddressGenerationFailure(net_id=self.network_id)
        for subnet in self.subnets:
            if is_auto_address(subnet):
                await self._write(port, subnet, ipam.eui64_address(subnet.cidr, port.mac_address))

    async def _allocate_one(self, port: Port, request: Request) -> None:
        if request.subnet_id is not None:
            subnet = self._by_id.get(request.subnet_id)
            if subnet is None:
                raise InvalidInput(
                    error_message=f"Failed to create port on network {self.network_id}, "
                    f"because fixed_ips included invalid subnet {request.subnet_id}"
                )
        else:
            subnet = self._subnet_holding(request.ip_address)  # type: ignore[arg-type]
        if request.ip_address is None:
            if is_auto_address(subnet):
                await self._write(port, subnet, ipam.eui64_address(subnet.cidr, port.mac_address))
            elif not await self._allocate_free(port, subnet):
                raise IpAddressGenerationFailure(net_id=self.network_id)
            return
        self._check_requested(port, subnet, request.ip_address)
        await self._write(port, subnet, request.ip_address)

    def _subnet_holding(self, ip_address: str) -> Subnet:
        for subnet in self.subnets:
            if ipam.is_usable(subnet.cidr, ip_address):
                return subnet
        raise InvalidIpForNetwork(ip_address=ip_address)

    def _check_requested(self, port: Port, subnet: Subnet, ip_address: str) -> None:
        if is_auto_address(subnet):
            raise InvalidInput(
                error_message=f"IPv6 address {ip_address} cannot be directly assigned to a port on subnet "
                f"{subnet.id} since the subnet is configured for automatic addresses"
            )
        if not ipam.is_usable(subnet.cidr, ip_address):
            raise InvalidIpForSubnet(ip_address=ip_address)
        if ip_address == subnet.gateway_ip and not port.owned_by_network:
            raise InvalidIpForSubnet(ip_address=ip_address)

    async def _allocate_free(self, port: Port, subnet: Subnet) -> bool:
        in_use = await rows.addresses_in_use(self.conn, subnet.id)
        if subnet.gateway_ip is not None:
            in_use.add(subnet.gateway_ip)
        address = ipam.next_free(subnet.allocation_pools, in_use)
        if address is None:
            return False
        await self._write(port, subnet, address)
        return True

    async def _write(self, port: Port, subnet: Subnet, ip_address: str) -> None:
        await rows.insert_allocation(self.conn, IpAllocation(subnet.id, ip_address, self.network_id, port.id))
        self.written += 1

    # -- changing an existing port ---------------------------------------------

    async def replace(self, port: Port, requests: list[Request]) -> None:
        """Make the port hold what ``requests`` asks for, keeping the addresses it already has that fit."""
        current = await rows.allocations_of(self.conn, port.id)
        kept: list[IpAllocation] = []
        fresh: list[Request] = []
        for request in requests:
            match = next((a for a in current if a not in kept and _satisfies(a, request)), None)
            if match is None:
                fresh.append(request)
            else:
                kept.append(match)
        for allocation in current:
            if allocation not in kept:
                await self._release(allocation)
        for request in fresh:
            await self._allocate_one(port, request)

    async def readdress(self, port: Port) -> None:
        """Follow a MAC change on SLAAC subnets, where the address is derived from the MAC."""
        for allocation in await rows.allocations_of(self.conn, port.id):
            subnet = self._by_id.get(allocation.subnet_id)
            if subnet is None or not is_auto_address(subnet):
                continue
            await self._release(allocation)
            await self._write(port, subnet, ipam.eui64_address(subnet.cidr, port.mac_address))

    async def _release(self, allocation: IpAllocation) -> None:
        await rows.delete_allocation(self.conn, allocation)


def _satisfies(allocation: IpAllocation, request: Request) -> bool:
    if request.subnet_id is not None and request.subnet_id != allocation.subnet_id:
        return False
    return request.ip_address is None or request.ip_address == allocation.ip_address
