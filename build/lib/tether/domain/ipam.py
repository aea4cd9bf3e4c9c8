"""IP address management for subnets: pure functions over netaddr, after neutron's ``ipam/utils.py``.

A subnet is a CIDR, an optional gateway and allocation pools (neutron's
``[{"start", "end"}]``). Pools only bound *automatic* allocation: an address
asked for by name may be anywhere usable in the CIDR, as in neutron. Nothing
here touches the database; the caller passes the addresses already in use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import netaddr

from tether.domain.errors.network import (
    GatewayConflictWithAllocationPools,
    InvalidAllocationPool,
    InvalidAttribute,
    InvalidInput,
    OutOfBoundsAllocationPool,
    OverlappingAllocationPools,
)

IP_VERSIONS = (4, 6)
SLAAC = "slaac"
DHCPV6_STATEFUL = "dhcpv6-stateful"
DHCPV6_STATELESS = "dhcpv6-stateless"
IPV6_MODES = (DHCPV6_STATEFUL, DHCPV6_STATELESS, SLAAC)
# Subnets whose addresses hosts derive from their MAC (EUI-64) rather than being handed out.
IPV6_AUTO_ADDRESS_MODES = (SLAAC, DHCPV6_STATELESS)

Pool = dict[str, str]


def parse_ip(value: object, attr: str = "ip_address") -> netaddr.IPAddress:
    if isinstance(value, str) and value.strip() == value:
        try:
            return netaddr.IPAddress(value)
        except (netaddr.AddrFormatError, ValueError, TypeError):
            pass
    raise InvalidAttribute(attr=attr, reason=f"'{value}' is not a valid IP address")


def normalize_ip(value: object, attr: str = "ip_address") -> str:
    return str(parse_ip(value, attr))


def parse_cidr(cidr: object, ip_version: int) -> netaddr.IPNetwork:
    """The subnet's network, refusing what neutron-lib's ``validate_subnet`` refuses."""
    if not isinstance(cidr, str):
        raise InvalidAttribute(attr="cidr", reason=f"'{cidr}' is not a valid IP subnet")
    try:
        net = netaddr.IPNetwork(cidr)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise InvalidAttribute(attr="cidr", reason=f"'{cidr}' is not a valid IP subnet") from None
    if "/" not in cidr or net.ip != net.network:
        raise InvalidAttribute(
            attr="cidr",
            reason=f"'{cidr}' isn't a recognized IP subnet cidr, '{net.cidr}' is recommended",
        )
    check_version(ip_version, net.version, "cidr", cidr)
    return net.cidr


def check_version(ip_version: int, actual: int, name: str, value: object) -> None:
    if actual != ip_version:
        raise InvalidInput(error_message=f"{name} '{value}' does not match the ip_version '{ip_version}'")


def sort_key(ip_address: str) -> tuple[int, int]:
    """IPv4 before IPv6, then numerically: the order a port lists its fixed IPs in."""
    ip = netaddr.IPAddress(ip_address)
    return ip.version, int(ip)


def _broadcast(net: netaddr.IPNetwork) -> netaddr.IPAddress | None:
    return net.broadcast if net.version == 4 else None


def is_usable(cidr: str, ip_address: str) -> bool:
    """Whether a port may hold ``ip_address`` on the subnet (neutron's ``check_subnet_ip``)."""
    net = netaddr.IPNetwork(cidr)
    ip = netaddr.IPAddress(ip_address)
    if ip.version != net.version or ip not in net:
        return False
    if ip == net.network and net.size > 1:
        return False
    return ip != _broadcast(net)


def default_gateway(cidr: str) -> str | None:
    """The first host address, as neutron picks it; None when the subnet has no room for one."""
    net = netaddr.IPNetwork(cidr)
    if net.size < 2:
        return None
    return str(netaddr.IPAddress(net.first + 1, net.version))


def validate_gateway(cidr: str, gateway_ip: object) -> str:
    """Normalise an explicit gateway. Like neutron, one outside the CIDR is allowed."""
    net = netaddr.IPNetwork(cidr)
    ip = parse_ip(gateway_ip, "gateway_ip")
    check_version(net.version, ip.version, "gateway_ip", gateway_ip)
    if ip in net and net.size > 1 and (ip == _broadcast(net) or (net.version == 4 and ip == net.network)):
        raise InvalidInput(error_message="Gateway is not valid on subnet")
    return str(ip)


def _as_pool(ip_range: netaddr.IPRange) -> Pool:
    return {"start": str(netaddr.IPAddress(ip_range.first, ip_range.version)),
            "end": str(netaddr.IPAddress(ip_range.last, ip_range.version))}


def default_pools(cidr: str, gateway_ip: str | None) -> list[Pool]:
    """Every host address but the gateway (neutron's ``generate_pools``)."""
    net = netaddr.IPNetwork(cidr)
    first = netaddr.IPAddress(net.first, net.version)
    last = netaddr.IPAddress(net.last, net.version)
    if first == last:
        return [_as_pool(netaddr.IPRange(first, last))]
    first_host = first + 1
    last_host = last - 1 if net.version == 4 else last
    if first_host >= last_host:
        return []
    hosts = netaddr.IPSet(netaddr.IPRange(first_host, last_host))
    if gateway_ip is not None:
        hosts.remove(netaddr.IPAddress(gateway_ip))
    return [_as_pool(ip_range) for ip_range in hosts.iter_ipranges()]


def _pool_range(pool: object) -> netaddr.IPRange:
    if not isinstance(pool, dict) or set(pool) != {"start", "end"}:
        provided = sorted(pool) if isinstance(pool, dict) else pool
        raise InvalidAttribute(
            attr="allocation_pools",
            reason="Validation of dictionary's keys failed. "
            f"Expected keys: ['end', 'start'] Provided keys: {provided}",
        )
    start = parse_ip(pool["start"], "allocation_pools")
    end = parse_ip(pool["end"], "allocation_pools")
    if start.version != end.version or start > end:
        raise InvalidAllocationPool(pool=f"{pool['start']}-{pool['end']}")
    return netaddr.IPRange(start, end)


def validate_pools(cidr: str, pools: object, gateway_ip: str | None) -> list[Pool]:
    """Normalised pools, refused as neutron refuses them: out of the CIDR, overlapping, on the gateway."""
    if not isinstance(pools, (list, tuple)):
        raise InvalidAttribute(attr="allocation_pools", reason=f"'{pools}' is not a list")
    net = netaddr.IPNetwork(cidr)
    lowest = net.first + 1
    highest = net.last - (net.version == 4)
    ranges = [_pool_range(pool) for pool in pools]
    for ip_range in ranges:
        if ip_range.version != net.version:
            raise InvalidAllocationPool(pool=ip_range)
        if ip_range.first < lowest or ip_range.last > highest:
            raise OutOfBoundsAllocationPool(pool=ip_range, subnet_cidr=cidr)
    for index, left in enumerate(ranges):
        for right in ranges[index + 1:]:
            if left.first <= right.last and right.first <= left.last:
                raise OverlappingAllocationPools(pool_1=left, pool_2=right, subnet_cidr=cidr)
    if gateway_ip is not None:
        gateway = netaddr.IPAddress(gateway_ip)
        for ip_range in ranges:
            if gateway in ip_range:
                raise GatewayConflictWithAllocationPools(ip_address=gateway_ip, pool=ip_range)
    return [_as_pool(ip_range) for ip_range in ranges]


def in_pools(ip_address: str, pools: Sequence[Pool]) -> bool:
    ip = netaddr.IPAddress(ip_address)
    return any(ip in netaddr.IPRange(pool["start"], pool["end"]) for pool in pools)


def next_free(pools: Sequence[Pool], in_use: Iterable[str]) -> str | None:
    """The lowest address of the pools (in their order) not in ``in_use``; None when all are taken.

    Costs O(k log k) in the addresses in use, never in the size of a pool, so an
    IPv6 /64 is as cheap as an IPv4 /29.
    """
    used = {netaddr.IPAddress(ip) for ip in in_use}
    for pool in pools:
        ip_range = netaddr.IPRange(pool["start"], pool["end"])
        taken = sorted(int(ip) for ip in used if ip.version == ip_range.version and ip in ip_range)
        candidate = ip_range.first
        for address in taken:
            if address > candidate:
                break
            candidate = address + 1
        if candidate <= ip_range.last:
            return str(netaddr.IPAddress(candidate, ip_range.version))
    return None


def cidrs_overlap(cidr: str, other: str) -> bool:
    a, b = netaddr.IPNetwork(cidr), netaddr.IPNetwork(other)
    return a.version == b.version and a.first <= b.last and b.first <= a.last


# -- IPv6 address modes --------------------------------------------------------


def is_auto_address(ipv6_address_mode: str | None, ipv6_ra_mode: str | None) -> bool:
    return ipv6_address_mode in IPV6_AUTO_ADDRESS_MODES or ipv6_ra_mode in IPV6_AUTO_ADDRESS_MODES


def validate_ipv6_modes(
    net: netaddr.IPNetwork, ipv6_address_mode: object, ipv6_ra_mode: object, enable_dhcp: bool
) -> None:
    for attr, mode in (("ipv6_address_mode", ipv6_address_mode), ("ipv6_ra_mode", ipv6_ra_mode)):
        if mode is not None and mode not in IPV6_MODES:
            raise InvalidAttribute(attr=attr, reason=f"{mode} is not in {list(IPV6_MODES)}")
    if ipv6_address_mode is None and ipv6_ra_mode is None:
        return
    if net.version == 4:
        raise InvalidInput(error_message="ipv6_ra_mode or ipv6_address_mode cannot be set when ip_version is 4")
    if not enable_dhcp:
        raise InvalidInput(
            error_message="ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp is set to False"
        )
    if ipv6_address_mode is not None and ipv6_ra_mode is not None and ipv6_address_mode != ipv6_ra_mode:
        raise InvalidInput(
            error_message=f"ipv6_ra_mode set to '{ipv6_ra_mode}' with ipv6_address_mode set to "
            f"'{ipv6_address_mode}' is not valid. If both attributes are set, they must be the same value"
        )
    if is_auto_address(ipv6_address_mode, ipv6_ra_mode) and net.prefixlen != 64:
        raise InvalidInput(
            error_message=f"Invalid CIDR {net} for IPv6 address mode. OpenStack uses the EUI-64 "
            "address format, which requires the prefix to be /64"
        )


def eui64_address(cidr: str, mac_address: str) -> str:
    """The SLAAC address a host with ``mac_address`` takes on a /64."""
    net = netaddr.IPNetwork(cidr)
    return str(netaddr.EUI(mac_address).ipv6(net.first))
