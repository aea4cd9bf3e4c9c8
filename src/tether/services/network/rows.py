"""Reading and writing the network tables inside a transaction.

Ports come back with ``fixed_ips`` filled from ``ip_allocations`` (the one
source of truth for addresses). Rows that a transaction is about to decide on
are read ``FOR UPDATE`` / ``FOR SHARE``: on PostgreSQL that serialises
workers in several processes, and SQLite, which runs one writer at a time,
leaves the clause out. Whatever hands out addresses or changes subnets holds
its network's row ``FOR UPDATE`` (several networks in id order; a network
always before its ports), so two workers never pick the same free address.
The database's unique constraints have the last word on MACs and addresses;
their violations come back as neutron's errors.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from tether.domain import ipam
from tether.domain.errors.network import IpAddressInUse, MacAddressGenerationFailure, MacAddressInUse
from tether.domain.ids import new_mac
from tether.domain.network import IpAllocation, Network, Port, Subnet
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

# How each backend names the constraints in its IntegrityError text.
MAC_CONSTRAINT = ("uq_ports_network_mac", "ports.network_id, ports.mac_address")
IP_CONSTRAINT = ("ip_allocations_pkey", "ip_allocations.subnet_id, ip_allocations.ip_address")
# Neutron gives up after this many random MACs that are all taken.
MAC_ATTEMPTS = 16


def violates(error: IntegrityError, constraint: tuple[str, ...]) -> bool:
    text = str(error.orig)
    return any(marker in text for marker in constraint)


# -- reading ------------------------------------------------------------------


async def _one(conn: StoreConnection, repo: Any, key: str, lock: str | None) -> Any:
    if not isinstance(key, str):
        return None
    return await repo.get(conn, key, lock=lock)


async def network(conn: StoreConnection, network_id: str, lock: str | None = None) -> Network | None:
    """``lock`` is None, "share" (the network must outlive this transaction) or "update" (its addresses)."""
    return await _one(conn, repos.networks, network_id, lock)


async def subnet(conn: StoreConnection, subnet_id: str, lock: str | None = None) -> Subnet | None:
    return await _one(conn, repos.subnets, subnet_id, lock)


async def subnets_of(conn: StoreConnection, network_id: str) -> list[Subnet]:
    return await repos.subnets.find(conn, order_by=("created_at", "id"), network_id=network_id)


async def port(conn: StoreConnection, port_id: str, lock: str | None = None) -> Port | None:
    found = await _one(conn, repos.ports, port_id, lock)
    if found is None:
        return None
    (loaded,) = await with_fixed_ips(conn, [found])
    return loaded


async def with_fixed_ips(conn: StoreConnection, ports: list[Port]) -> list[Port]:
    if not ports:
        return ports
    by_port: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in await repos.ip_allocations.find(conn, port_id=[p.id for p in ports]):
        by_port[row.port_id].append({"subnet_id": row.subnet_id, "ip_address": row.ip_address})
    for found in ports:
        found.fixed_ips = sorted(by_port.get(found.id, []), key=lambda ip: ipam.sort_key(ip["ip_address"]))
    return ports


async def allocations_of(conn: StoreConnection, port_id: str) -> list[IpAllocation]:
    return await repos.ip_allocations.find(conn, order_by=("subnet_id", "ip_address"), port_id=port_id)


async def addresses_in_use(conn: StoreConnection, subnet_id: str) -> set[str]:
    return {row.ip_address for row in await repos.ip_allocations.find(conn, subnet_id=subnet_id)}


# -- writing ------------------------------------------------------------------


async def fresh_mac(conn: StoreConnection, rng: random.Random, network_id: str) -> str:
    """A neutron-style MAC no port on the network has.

    A restarted incarnation may replay a seeded generator, so a clash is
    possible and is simply drawn again.
    """
    for _ in range(MAC_ATTEMPTS):
        mac = new_mac(rng)
        if await repos.ports.count(conn, network_id=network_id, mac_address=mac) == 0:
            return mac
    raise MacAddressGenerationFailure(net_id=network_id)


async def insert_port(conn: StoreConnection, new: Port) -> None:
    try:
        await repos.ports.add(conn, new)
    except IntegrityError as error:
        if violates(error, MAC_CONSTRAINT):
            raise MacAddressInUse(net_id=new.network_id, mac=new.mac_address) from None
        raise


async def update_port(conn: StoreConnection, current: Port, **values: Any) -> None:
    try:
        await repos.ports.update(conn, current.id, **values)
    except IntegrityError as error:
        if violates(error, MAC_CONSTRAINT):
            mac = values.get("mac_address", current.mac_address)
            raise MacAddressInUse(net_id=current.network_id, mac=mac) from None
        raise


async def insert_allocation(conn: StoreConnection, allocation: IpAllocation) -> None:
    try:
        await repos.ip_allocations.add(conn, allocation)
    except IntegrityError as error:
        if violates(error, IP_CONSTRAINT):
            raise IpAddressInUse(net_id=allocation.network_id, ip_address=allocation.ip_address) from None
        raise


async def release_addresses(conn: StoreConnection, port_id: str) -> int:
    return await repos.ip_allocations.delete_where(conn, port_id=port_id)


async def delete_port(conn: StoreConnection, port_id: str) -> None:
    # rule 2: a port's addresses go in the same transaction as the port, never after it
    await release_addresses(conn, port_id)
    await repos.resource_tags.delete_where(conn, resource_id=port_id)
    # rule 2: a floating IP is let go of, not left pointing at a port that is gone
    await repos.floating_ips.update_where(conn, {"port_id": port_id}, port_id=None, fixed_ip_address=None,
                                          router_id=None, status="DOWN")
    await repos.ports.delete(conn, port_id)


async def delete_allocation(conn: StoreConnection, allocation: IpAllocation) -> None:
    await repos.ip_allocations.delete_where(
        conn, subnet_id=allocation.subnet_id, ip_address=allocation.ip_address
    )
