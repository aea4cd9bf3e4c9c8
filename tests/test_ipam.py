"""IP address management as pure functions: pools, gateways, the next free address, EUI-64."""

from __future__ import annotations

import netaddr
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tether.domain import ipam
from tether.domain.errors.network import (
    GatewayConflictWithAllocationPools,
    InvalidAllocationPool,
    InvalidAttribute,
    InvalidInput,
    OutOfBoundsAllocationPool,
    OverlappingAllocationPools,
)

# -- defaults -------------------------------------------------------------------


def test_default_gateway_is_the_first_host_and_pools_are_the_rest() -> None:
    assert ipam.default_gateway("10.0.0.0/24") == "10.0.0.1"
    assert ipam.default_pools("10.0.0.0/24", "10.0.0.1") == [{"start": "10.0.0.2", "end": "10.0.0.254"}]


def test_a_gateway_inside_the_range_splits_the_pool() -> None:
    assert ipam.default_pools("10.0.0.0/24", "10.0.0.100") == [
        {"start": "10.0.0.1", "end": "10.0.0.99"},
        {"start": "10.0.0.101", "end": "10.0.0.254"},
    ]


def test_without_a_gateway_the_pool_covers_every_host() -> None:
    assert ipam.default_pools("192.168.1.0/29", None) == [{"start": "192.168.1.1", "end": "192.168.1.6"}]


def test_ipv6_pools_keep_the_last_address_and_skip_the_subnet_router_anycast() -> None:
    assert ipam.default_gateway("fd00::/64") == "fd00::1"
    assert ipam.default_pools("fd00::/64", "fd00::1") == [{"start": "fd00::2", "end": "fd00::ffff:ffff:ffff:ffff"}]


def test_a_slash_31_has_no_pool() -> None:
    assert ipam.default_pools("10.0.0.0/31", ipam.default_gateway("10.0.0.0/31")) == []


# -- CIDRs and gateways ---------------------------------------------------------


def test_cidr_with_host_bits_is_refused_in_neutrons_words() -> None:
    with pytest.raises(InvalidAttribute) as error:
        ipam.parse_cidr("10.0.0.1/24", 4)
    assert error.value.message == (
        "Invalid input for cidr. Reason: '10.0.0.1/24' isn't a recognized IP subnet cidr, "
        "'10.0.0.0/24' is recommended."
    )


@pytest.mark.parametrize("cidr", ["nonsense", "10.0.0.0/33", "", "10.0.0.0", 42, None])
def test_things_that_are_not_cidrs_are_refused(cidr: object) -> None:
    with pytest.raises(InvalidAttribute):
        ipam.parse_cidr(cidr, 4)


def test_cidr_must_match_the_ip_version() -> None:
    with pytest.raises(InvalidInput) as error:
        ipam.parse_cidr("fd00::/64", 4)
    assert "does not match the ip_version '4'" in error.value.message


def test_a_gateway_on_the_network_or_broadcast_address_is_refused() -> None:
    for gateway in ("10.0.0.0", "10.0.0.255"):
        with pytest.raises(InvalidInput, match="Gateway is not valid on subnet"):
            ipam.validate_gateway("10.0.0.0/24", gateway)
    # Like neutron, a gateway outside the subnet is allowed (reached through a host route).
    assert ipam.validate_gateway("10.0.0.0/24", "10.1.0.1") == "10.1.0.1"


# -- pools ----------------------------------------------------------------------


def test_pools_are_refused_when_they_overlap() -> None:
    pools = [{"start": "10.0.0.2", "end": "10.0.0.50"}, {"start": "10.0.0.40", "end": "10.0.0.60"}]
    with pytest.raises(OverlappingAllocationPools) as error:
        ipam.validate_pools("10.0.0.0/24", pools, "10.0.0.1")
    assert error.value.message == (
        "Found overlapping allocation pools: 10.0.0.2-10.0.0.50 10.0.0.40-10.0.0.60 for subnet 10.0.0.0/24."
    )


def test_pools_are_refused_outside_the_cidr_or_on_the_broadcast_address() -> None:
    for end in ("10.0.1.5", "10.0.0.255"):
        with pytest.raises(OutOfBoundsAllocationPool):
            ipam.validate_pools("10.0.0.0/24", [{"start": "10.0.0.2", "end": end}], "10.0.0.1")


def test_pools_are_refused_when_they_hold_the_gateway() -> None:
    with pytest.raises(GatewayConflictWithAllocationPools) as error:
        ipam.validate_pools("10.0.0.0/24", [{"start": "10.0.0.1", "end": "10.0.0.9"}], "10.0.0.1")
    assert error.value.message == "Gateway ip 10.0.0.1 conflicts with allocation pool 10.0.0.1-10.0.0.9."


@pytest.mark.parametrize("pool", [
    {"start": "10.0.0.9", "end": "10.0.0.2"},
    {"start": "10.0.0.2", "end": "fd00::9"},
])
def test_backwards_or_mixed_pools_are_invalid(pool: dict[str, str]) -> None:
    with pytest.raises(InvalidAllocationPool):
        ipam.validate_pools("10.0.0.0/24", [pool], "10.0.0.1")


@pytest.mark.parametrize("pools", ["10.0.0.2-10.0.0.9", [{"start": "10.0.0.2"}], [{"start": "x", "end": "y"}]])
def test_malformed_pools_are_bad_input(pools: object) -> None:
    with pytest.raises(InvalidAttribute):
        ipam.validate_pools("10.0.0.0/24", pools, "10.0.0.1")


def test_valid_pools_come_back_normalised() -> None:
    pools = [{"start": "fd00:0::0010", "end": "fd00::20"}]
    assert ipam.validate_pools("fd00::/64", pools, "fd00::1") == [{"start": "fd00::10", "end": "fd00::20"}]


# -- choosing addresses ---------------------------------------------------------


def test_next_free_skips_what_is_in_use_and_moves_to_the_next_pool() -> None:
    pools = [{"start": "10.0.0.2", "end": "10.0.0.3"}, {"start": "10.0.0.10", "end": "10.0.0.11"}]
    assert ipam.next_free(pools, []) == "10.0.0.2"
    assert ipam.next_free(pools, ["10.0.0.2"]) == "10.0.0.3"
    assert ipam.next_free(pools, ["10.0.0.2", "10.0.0.3"]) == "10.0.0.10"
    assert ipam.next_free(pools, ["10.0.0.2", "10.0.0.3", "10.0.0.10", "10.0.0.11"]) is None


def test_next_free_is_cheap_in_a_huge_ipv6_pool() -> None:
    pools = ipam.default_pools("fd00::/64", "fd00::1")
    used = [f"fd00::{n:x}" for n in range(2, 2000)]
    assert ipam.next_free(pools, used) == "fd00::7d0"


def test_usable_addresses_exclude_network_and_broadcast() -> None:
    assert ipam.is_usable("10.0.0.0/24", "10.0.0.7")
    assert not ipam.is_usable("10.0.0.0/24", "10.0.0.0")
    assert not ipam.is_usable("10.0.0.0/24", "10.0.0.255")
    assert not ipam.is_usable("10.0.0.0/24", "10.0.1.7")
    assert not ipam.is_usable("10.0.0.0/24", "fd00::7")
    assert ipam.is_usable("fd00::/64", "fd00::ffff:ffff:ffff:ffff")


def test_in_pools() -> None:
    pools = [{"start": "10.0.0.10", "end": "10.0.0.20"}]
    assert ipam.in_pools("10.0.0.10", pools) and ipam.in_pools("10.0.0.20", pools)
    assert not ipam.in_pools("10.0.0.9", pools) and not ipam.in_pools("10.0.0.21", pools)


def test_fixed_ips_sort_ipv4_first_then_numerically() -> None:
    addresses = ["fd00::2", "10.0.0.10", "10.0.0.9"]
    assert sorted(addresses, key=ipam.sort_key) == ["10.0.0.9", "10.0.0.10", "fd00::2"]


# -- IPv6 modes -----------------------------------------------------------------


def test_eui64_address_is_derived_from_the_mac() -> None:
    # The interface seed 004 lists: fa:16:3e:b8:f1:4c on fde5:2b4:b028::/64.
    assert ipam.eui64_address("fde5:2b4:b028::/64", "fa:16:3e:b8:f1:4c") == "fde5:2b4:b028:0:f816:3eff:feb8:f14c"


def test_ipv6_modes_are_checked() -> None:
    v6, v4 = netaddr.IPNetwork("fd00::/64"), netaddr.IPNetwork("10.0.0.0/24")
    ipam.validate_ipv6_modes(v6, "slaac", "slaac", True)
    with pytest.raises(InvalidAttribute):
        ipam.validate_ipv6_modes(v6, "magic", None, True)
    with pytest.raises(InvalidInput, match="must be the same value"):
        ipam.validate_ipv6_modes(v6, "slaac", "dhcpv6-stateful", True)
    with pytest.raises(InvalidInput, match="when ip_version is 4"):
        ipam.validate_ipv6_modes(v4, "slaac", None, True)
    with pytest.raises(InvalidInput, match="requires the prefix to be /64"):
        ipam.validate_ipv6_modes(netaddr.IPNetwork("fd00::/80"), "slaac", None, True)
    with pytest.raises(InvalidInput, match="enable_dhcp"):
        ipam.validate_ipv6_modes(v6, "dhcpv6-stateful", None, False)


# -- properties -----------------------------------------------------------------


@st.composite
def subnets_with_use(draw: st.DrawFn) -> tuple[str, str | None, list[str]]:
    version = draw(st.sampled_from([4, 6]))
    if version == 4:
        prefix = draw(st.integers(min_value=22, max_value=30))
        base = draw(st.integers(min_value=0, max_value=2**32 - 1))
    else:
        prefix = draw(st.integers(min_value=64, max_value=126))
        base = draw(st.integers(min_value=0, max_value=2**128 - 1))
    cidr = str(netaddr.IPNetwork((base, prefix), version=version).cidr)
    net = netaddr.IPNetwork(cidr)
    gateway = draw(st.one_of(st.none(), st.just(ipam.default_gateway(cidr))))
    offsets = draw(st.lists(st.integers(min_value=0, max_value=min(net.size - 1, 300)), max_size=40))
    used = [str(netaddr.IPAddress(net.first + offset, version)) for offset in offsets]
    return cidr, gateway, used


@given(subnets_with_use())
def test_next_free_is_in_a_pool_unused_and_the_lowest_such(case: tuple[str, str | None, list[str]]) -> None:
    cidr, gateway, used = case
    pools = ipam.default_pools(cidr, gateway)
    chosen = ipam.next_free(pools, used)
    assume(chosen is not None)
    assert chosen not in used and chosen != gateway
    assert ipam.in_pools(chosen, pools)
    assert ipam.is_usable(cidr, chosen)
    first = netaddr.IPAddress(pools[0]["start"])
    below = (str(netaddr.IPAddress(n, first.version)) for n in range(int(first), int(netaddr.IPAddress(chosen))))
    assert all(ip in used or ip == gateway or not ipam.in_pools(ip, pools) for ip in below)


@settings(deadline=None)
@given(st.integers(min_value=26, max_value=30), st.booleans())
def test_allocating_until_exhausted_never_repeats_and_stays_in_the_pools(prefix: int, gateway_first: bool) -> None:
    cidr = f"10.20.0.0/{prefix}"
    gateway = ipam.default_gateway(cidr) if gateway_first else None
    pools = ipam.default_pools(cidr, gateway)
    taken: list[str] = []
    while (chosen := ipam.next_free(pools, taken)) is not None:
        assert ipam.in_pools(chosen, pools) and chosen != gateway
        taken.append(chosen)
    assert len(taken) == len(set(taken)) == sum(
        netaddr.IPRange(p["start"], p["end"]).size for p in pools
    )


@given(subnets_with_use())
def test_default_pools_are_valid_pools(case: tuple[str, str | None, list[str]]) -> None:
    cidr, gateway, _ = case
    pools = ipam.default_pools(cidr, gateway)
    assert ipam.validate_pools(cidr, pools, gateway) == pools
    assert all(ipam.is_usable(cidr, pool[end]) for pool in pools for end in ("start", "end"))
