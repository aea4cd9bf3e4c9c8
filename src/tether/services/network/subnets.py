"""Subnets: a CIDR on a network, its gateway and the pools addresses are handed out from."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import netaddr

from tether.domain import ipam
from tether.domain.errors.network import (
    GatewayIpInUse,
    HostRoutesExhausted,
    InvalidAttribute,
    InvalidInput,
    SubnetInUse,
)
from tether.domain.ids import new_uuid
from tether.domain.listing import ListQuery
from tether.domain.network import Subnet
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import policy, quota_usage, rows, validation
from tether.services.network.filters import column_filters, listed
from tether.services.network.lookups import owned_network, owned_subnet, visible_subnet
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


class _Derived:
    def __repr__(self) -> str:
        return "DERIVED"


# "Work it out as neutron would": the first host for a gateway (None means no gateway at all).
DERIVED: Final = _Derived()

UPDATABLE = ("name", "description", "gateway_ip", "allocation_pools", "enable_dhcp", "dns_nameservers",
             "host_routes")
# neutron's max_subnet_host_routes default
MAX_HOST_ROUTES = 20
READ_ONLY = ("id", "network_id", "project_id", "ip_version", "cidr", "ipv6_address_mode", "ipv6_ra_mode",
             "created_at", "updated_at")


def _nameservers(value: object, version: int) -> list[str]:
    servers = []
    for server in validation.list_of("dns_nameservers", value):
        address = ipam.parse_ip(server, "dns_nameservers")
        ipam.check_version(version, address.version, "dns_nameserver", server)
        servers.append(str(address))
    if len(set(servers)) != len(servers):
        raise InvalidAttribute(attr="dns_nameservers", reason=f"Duplicate nameserver in {servers}")
    return servers


def _host_routes(value: object, version: int, subnet_id: str | None) -> list[dict[str, str]]:
    """neutron-lib's ``validate_hostroutes``, then the subnet's own checks (count, IP version)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidAttribute(attr="host_routes", reason=f"Invalid data format for hostroute: '{value}'")
    routes: list[dict[str, str]] = []
    for route in value:
        if not isinstance(route, dict):
            raise InvalidAttribute(attr="host_routes", reason=f"Invalid input. '{route}' must be a dictionary with "
                                   "keys: ['destination', 'nexthop']")
        if set(route) != {"destination", "nexthop"}:
            raise InvalidAttribute(attr="host_routes", reason="Validation of dictionary's keys failed. Expected "
                                   f"keys: {{'destination', 'nexthop'}} Provided keys: {set(route)}")
        destination = _route_cidr(route["destination"])
        nexthop = ipam.parse_ip(route["nexthop"], "host_routes")
        if route in routes:
            raise InvalidAttribute(attr="host_routes", reason=f"Duplicate hostroute '{route}'")
        routes.append(route)
        ipam.check_version(version, nexthop.version, "nexthop", route["nexthop"])
        ipam.check_version(version, destination.version, "destination", route["destination"])
    if len(routes) > MAX_HOST_ROUTES:
        raise HostRoutesExhausted(subnet_id=subnet_id, quota=MAX_HOST_ROUTES)
    return [{"destination": str(_route_cidr(route["destination"])), "nexthop": str(ipam.parse_ip(route["nexthop"]))}
            for route in routes]


def _route_cidr(value: object) -> netaddr.IPNetwork:
    """neutron-lib's ``validate_route_cidr``: a network address with its prefix, host bits zero."""
    try:
        network = netaddr.IPNetwork(value)  # type: ignore[arg-type]
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise InvalidAttribute(attr="host_routes", reason=f"'{value}' is not a valid IP subnet") from None
    if not isinstance(value, str) or "/" not in value or str(network.cidr) != value:
        raise InvalidAttribute(attr="host_routes",
                               reason=f"'{value}' is not a recognized CIDR, '{network.cidr}' is recommended")
    return network.cidr


def _gateway(cidr: str, gateway_ip: object) -> str | None:
    if gateway_ip is DERIVED:
        return ipam.default_gateway(cidr)
    if gateway_ip is None:
        return None
    return ipam.validate_gateway(cidr, gateway_ip)


@dataclass(eq=False)
class Subnets:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_subnet(
        self,
        ctx: RequestContext,
        *,
        network_id: str,
        cidr: str,
        ip_version: int = 4,
        name: str = "",
        gateway_ip: str | _Derived | None = DERIVED,
        allocation_pools: list[dict[str, str]] | None = None,
        enable_dhcp: bool = True,
        dns_nameservers: list[str] | tuple[str, ...] = (),
        ipv6_address_mode: str | None = None,
        ipv6_ra_mode: str | None = None,
        project_id: str | None = None,
        description: str = "",
        subnet_id: str | None = None,  # internal callers that name it first (a stack, rule 5)
        host_routes: list[dict[str, str]] | None = None,
    ) -> Subnet:
        policy.require_write(ctx)
        validation.uuid("network_id", network_id)
        validation.string("name", name)
        validation.string("description", description)
        validation.boolean("enable_dhcp", enable_dhcp)
        validation.one_of("ip_version", ip_version, ipam.IP_VERSIONS)
        net = ipam.parse_cidr(cidr, ip_version)
        cidr = str(net)
        ipam.validate_ipv6_modes(net, ipv6_address_mode, ipv6_ra_mode, enable_dhcp)
        gateway = _gateway(cidr, gateway_ip)
        if allocation_pools is None:
            pools = ipam.default_pools(cidr, gateway)
        else:
            pools = ipam.validate_pools(cidr, allocation_pools, gateway)
        nameservers = _nameservers(dns_nameservers, ip_version)
        routes = _host_routes(host_routes, ip_version, subnet_id)
        async with self.store.begin() as conn:
            network = await owned_network(conn, ctx, network_id, lock="update")
            await quota_usage.check(conn, policy.project_for(ctx, project_id, network.project_id), "subnet", 1)
            for other in await rows.subnets_of(conn, network.id):
                if ipam.cidrs_overlap(cidr, other.cidr):
                    raise InvalidInput(
                        error_message=f"Requested subnet with cidr: {cidr} for network: {network.id} "
                        "overlaps with another subnet"
                    )
            now = self.rt.now()
            subnet = Subnet(
                id=subnet_id or new_uuid(self.rng), name=name, network_id=network.id,
                project_id=policy.project_for(ctx, project_id, network.project_id),
                ip_version=ip_version, cidr=cidr, gateway_ip=gateway, allocation_pools=pools,
                enable_dhcp=enable_dhcp, dns_nameservers=nameservers,
                ipv6_address_mode=ipv6_address_mode, ipv6_ra_mode=ipv6_ra_mode,
                description=description, created_at=now, updated_at=now, host_routes=routes,
            )
            await repos.subnets.add(conn, subnet)
        return subnet

    async def get_subnet(self, ctx: RequestContext, subnet_id: str) -> Subnet:
        async with self.store.begin() as conn:
            return await visible_subnet(conn, ctx, subnet_id)

    async def list_subnets(self, ctx: RequestContext, query: ListQuery | None = None, marker: Subnet | None = None,
                           **filters: Any) -> list[Subnet]:
        """The subnets ``filters`` and ``query`` pick, of those the caller may see, paged in the database."""
        query = listed(query, column_filters(repos.subnets.table, filters))
        async with self.store.begin() as conn:
            if not ctx.is_admin:
                # policy.can_see_subnet: its own, or on a shared network (not an external one's)
                networks = await repos.networks.page(conn, ListQuery(alternatives=(policy.subnets_networks(ctx),)))
                seen = ({"project_id": [ctx.project_id]}, {"network_id": [network.id for network in networks]})
                query = query._replace(alternatives=(*query.alternatives, seen))
            return await repos.subnets.page(conn, query, marker=marker)

    async def update_subnet(self, ctx: RequestContext, subnet_id: str, **changes: Any) -> Subnet:
        policy.require_write(ctx)
        validation.known_keys(changes, UPDATABLE, READ_ONLY)
        for attr in ("name", "description"):
            if attr in changes:
                validation.string(attr, changes[attr])
        if "enable_dhcp" in changes:
            validation.boolean("enable_dhcp", changes["enable_dhcp"])
        async with self.store.begin() as conn:
            subnet = await owned_subnet(conn, ctx, subnet_id, lock="update")
            values = dict(changes)
            if "enable_dhcp" in values and not values["enable_dhcp"] and (
                subnet.ipv6_address_mode or subnet.ipv6_ra_mode
            ):
                raise InvalidInput(error_message="Cannot disable enable_dhcp with ipv6 attributes set")
            if "dns_nameservers" in values:
                values["dns_nameservers"] = _nameservers(values["dns_nameservers"], subnet.ip_version)
            if "host_routes" in values:
                values["host_routes"] = _host_routes(values["host_routes"], subnet.ip_version, subnet.id)
            gateway = subnet.gateway_ip
            if "gateway_ip" in values:
                gateway = _gateway(subnet.cidr, values["gateway_ip"])
                values["gateway_ip"] = gateway
                if gateway is not None and gateway != subnet.gateway_ip:
                    await _check_gateway_free(conn, subnet, gateway)
            if "allocation_pools" in values or "gateway_ip" in values:
                pools = values.get("allocation_pools", subnet.allocation_pools)
                values["allocation_pools"] = ipam.validate_pools(subnet.cidr, pools, gateway)
            if values:
                await repos.subnets.update(conn, subnet.id, updated_at=self.rt.now(), **values)
            return await rows.subnet(conn, subnet.id)  # type: ignore[return-value]

    async def delete_subnet(self, ctx: RequestContext, subnet_id: str) -> None:
        """Refused while a port holds an address from it; the network's own ports just let theirs go."""
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            subnet = await owned_subnet(conn, ctx, subnet_id)
            # no port may take an address from it meanwhile (see rows.py)
            await rows.network(conn, subnet.network_id, "update")
            allocations = await repos.ip_allocations.find(conn, subnet_id=subnet.id)
            holders = await repos.ports.find(conn, id={a.port_id for a in allocations})
            # neutron: a SLAAC or stateless address is the port's own making, and goes with the subnet
            # (a router's interface would hold it, but Tether puts none on such a subnet yet)
            auto = ipam.is_auto_address(subnet.ipv6_address_mode, subnet.ipv6_ra_mode)
            if not auto and any(not port.auto_deleted for port in holders):
                raise SubnetInUse(subnet_id=subnet.id)
            await repos.ip_allocations.delete_where(conn, subnet_id=subnet.id)
            await repos.resource_tags.delete_where(conn, resource_id=subnet.id)
            await repos.subnets.delete(conn, subnet.id)


async def _check_gateway_free(conn: StoreConnection, subnet: Subnet, gateway: str) -> None:
    holder = await repos.ip_allocations.first(conn, subnet_id=subnet.id, ip_address=gateway)
    if holder is not None:
        raise GatewayIpInUse(ip_address=gateway, port_id=holder.port_id)
