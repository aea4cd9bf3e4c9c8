"""Routers: create, show, list, update (gateway, static routes), delete, and interfaces added and removed
by subnet or by port, with neutron's checks and words (neutron's l3_db)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import netaddr

from tether.domain import ipam, routers
from tether.domain.errors.network import (
    BadRequest,
    InvalidRoutes,
    NetworkNotFound,
    PortInUse,
    RouterExternalGatewayInUseByFloatingIp,
    RouterInterfaceInUseByFloatingIP,
    RouterInterfaceInUseByRoute,
    RouterInterfaceNotFound,
    RouterInterfaceNotFoundForSubnet,
    RouterInUse,
    RouterNotFound,
)
from tether.domain.ids import new_uuid
from tether.domain.network import ROUTER_GATEWAY_OWNER, ROUTER_INTERFACE_OWNER, Port
from tether.domain.routers import Router
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import fixed_ips, policy, quota_usage, rows, validation
from tether.services.network.filters import column_filters
from tether.services.network.lookups import visible_port, visible_subnet
from tether.services.network.service_ports import make_port, plugged_by_l3_agent
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

UPDATABLE = ("name", "description", "admin_state_up", "external_gateway_info", "routes")


@dataclass(frozen=True)
class RouterInterface:
    router: Router
    port: Port
    subnet_ids: list[str]


async def visible_router(conn: StoreConnection, ctx: RequestContext, router_id: str,
                         lock: str | None = None) -> Router:
    router = await repos.routers.get(conn, router_id, lock=lock) if isinstance(router_id, str) else None
    if router is None or not ctx.owns(router.project_id):
        raise RouterNotFound(router_id=router_id)
    return router


async def gateway_port(conn: StoreConnection, router_id: str) -> Port | None:
    found = await repos.ports.find(conn, device_id=router_id, device_owner=ROUTER_GATEWAY_OWNER)
    return (await rows.with_fixed_ips(conn, found))[0] if found else None


async def interface_ports(conn: StoreConnection, router_id: str) -> list[Port]:
    found = await repos.ports.find(conn, order_by=("created_at", "id"), device_id=router_id,
                                   device_owner=ROUTER_INTERFACE_OWNER)
    return await rows.with_fixed_ips(conn, found)


def _check_gateway_info(info: object) -> dict[str, Any] | None:
    if info is None or info == {}:
        return None
    given = validation.dictionary("external_gateway_info", info)
    unknown = set(given) - {"network_id", "enable_snat", "external_fixed_ips"}
    if unknown:
        raise BadRequest(resource="router", msg=f"Unrecognized attribute(s) '{', '.join(sorted(unknown))}'")
    if "network_id" not in given:
        raise BadRequest(resource="router", msg="Failed to parse request. Required attribute 'network_id' not "
                                                "specified")
    validation.uuid("external_gateway_info", given["network_id"])
    if "enable_snat" in given:
        validation.boolean("enable_snat", given["enable_snat"])
    if "external_fixed_ips" in given:
        given["requests"] = fixed_ips.parse(given["external_fixed_ips"])
    return given


def check_routes(value: object) -> list[dict[str, str]]:
    """neutron's extraroute validation: a list of unique {destination: cidr, nexthop: ip}."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRoutes(routes=value, reason="routes must be a list")
    routes: list[dict[str, str]] = []
    for route in value:
        if not isinstance(route, dict) or set(route) != {"destination", "nexthop"}:
            raise InvalidRoutes(routes=value, reason="each route needs a destination and a nexthop")
        try:
            destination = netaddr.IPNetwork(route["destination"])
            nexthop = netaddr.IPAddress(route["nexthop"])
        except (netaddr.AddrFormatError, ValueError, TypeError):
            raise InvalidRoutes(routes=value, reason="the destination or the nexthop is not an address") from None
        if destination.version != nexthop.version:
            raise InvalidRoutes(routes=value, reason="the nexthop and destination must be of one IP version")
        normal = {"destination": str(destination.cidr), "nexthop": str(nexthop)}
        if normal in routes:
            raise InvalidRoutes(routes=value, reason="the same route is given twice")
        routes.append(normal)
    if len(routes) > routers.MAX_ROUTES:
        raise InvalidRoutes(routes=value, reason=f"the number of routes exceeds the maximum {routers.MAX_ROUTES}")
    return routes


@dataclass(eq=False)
class Routers:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_router(self, ctx: RequestContext, *, name: str = "", admin_state_up: bool = True,
                            external_gateway_info: dict[str, Any] | None = None, description: str = "",
                            project_id: str | None = None) -> Router:
        policy.require_write(ctx)
        validation.string("name", name)
        validation.string("description", description)
        validation.boolean("admin_state_up", admin_state_up)
        gateway = _check_gateway_info(external_gateway_info)
        project = policy.project_for(ctx, project_id)
        now = self.rt.now()
        router = Router(id=new_uuid(self.rng), name=name, project_id=project, admin_state_up=admin_state_up,
                        description=description, created_at=now, updated_at=now)
        async with self.store.begin() as conn:
            await quota_usage.check(conn, project, "router", 1)
            await repos.routers.add(conn, router)
            if gateway is not None:
                await self._set_gateway(conn, ctx, router, gateway)
            return await repos.routers.get(conn, router.id)  # type: ignore[return-value]

    async def get_router(self, ctx: RequestContext, router_id: str) -> Router:
        async with self.store.begin() as conn:
            return await visible_router(conn, ctx, router_id)

    async def list_routers(self, ctx: RequestContext, **filters: Any) -> list[Router]:
        filters = column_filters(repos.routers.table, filters)
        async with self.store.begin() as conn:
            found = await repos.routers.find(conn, **filters)
        return [router for router in found if ctx.owns(router.project_id)]

    async def gateway_ports(self, router_ids: list[str]) -> dict[str, Port]:
        async with self.store.begin() as conn:
            found = await repos.ports.find(conn, device_id=router_ids, device_owner=ROUTER_GATEWAY_OWNER)
            return {port.device_id: port for port in await rows.with_fixed_ips(conn, found)}

    async def update_router(self, ctx: RequestContext, router_id: str, **changes: Any) -> Router:
        policy.require_write(ctx)
        validation.known_keys(changes, UPDATABLE, ("id", "project_id", "status"))
        for attr in ("name", "description"):
            if attr in changes:
                validation.string(attr, changes[attr])
        if "admin_state_up" in changes:
            validation.boolean("admin_state_up", changes["admin_state_up"])
        routes = check_routes(changes["routes"]) if "routes" in changes else None
        has_gateway = "external_gateway_info" in changes
        gateway = _check_gateway_info(changes.pop("external_gateway_info", None))
        async with self.store.begin() as conn:
            router = await visible_router(conn, ctx, router_id, lock="update")
            if routes is not None:
                await _check_nexthops(conn, router, routes)
                changes["routes"] = routes
            if has_gateway:
                await self._change_gateway(conn, ctx, router, gateway)
            plain = {name: value for name, value in changes.items() if name != "external_gateway_info"}
            await repos.routers.update(conn, router.id, updated_at=self.rt.now(), **plain)
            return await repos.routers.get(conn, router.id)  # type: ignore[return-value]

    async def delete_router(self, ctx: RequestContext, router_id: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            router = await visible_router(conn, ctx, router_id, lock="update")
            if await interface_ports(conn, router.id):
                raise RouterInUse(router_id=router.id, reason="still has ports")
            await self._change_gateway(conn, ctx, router, None)
            await repos.resource_tags.delete_where(conn, resource_id=router.id)
            await repos.routers.delete(conn, router.id)

    # -- interfaces ----------------------------------------------------------------------------

    async def add_router_interface(self, ctx: RequestContext, router_id: str, body: object) -> RouterInterface:
        policy.require_write(ctx)
        info = _interface_info(body)
        async with self.store.begin() as conn:
            router = await visible_router(conn, ctx, router_id, lock="update")
            existing = {ip["subnet_id"] for port in await interface_ports(conn, router.id) for ip in port.fixed_ips}
            if "port_id" in info:
                port = await visible_port(conn, ctx, info["port_id"], lock="update")
                if port.device_id:
                    raise PortInUse(port_id=port.id, net_id=port.network_id, device_id=port.device_id)
                if not port.fixed_ips:
                    raise BadRequest(resource="router", msg="Router port must have at least one fixed IP")
                for ip in port.fixed_ips:
                    if ip["subnet_id"] in existing:
                        raise BadRequest(resource="router",
                                         msg=f"Router already has a port on subnet {ip['subnet_id']}")
                await _check_overlap(conn, router, [ip["subnet_id"] for ip in port.fixed_ips])
                await rows.update_port(conn, port, device_id=router.id, device_owner=ROUTER_INTERFACE_OWNER,
                                       updated_at=self.rt.now(), **plugged_by_l3_agent())
                port = await rows.port(conn, port.id)  # type: ignore[assignment]
            else:
                subnet = await visible_subnet(conn, ctx, info["subnet_id"])
                if not subnet.gateway_ip:
                    raise BadRequest(resource="router", msg="Subnet for router interface must have a gateway IP")
                if subnet.id in existing:
                    raise BadRequest(resource="router", msg=f"Router already has a port on subnet {subnet.id}")
                await _check_overlap(conn, router, [subnet.id])
                port = await make_port(conn, self.rng, self.rt.now(), network_id=subnet.network_id,
                                       project_id=router.project_id, device_owner=ROUTER_INTERFACE_OWNER,
                                       device_id=router.id,
                                       requests=[fixed_ips.Request(subnet.id, subnet.gateway_ip)])
            assert port is not None
            return RouterInterface(router, port, [ip["subnet_id"] for ip in port.fixed_ips])

    async def remove_router_interface(self, ctx: RequestContext, router_id: str, body: object) -> RouterInterface:
        policy.require_write(ctx)
        info = _interface_info(body, both_allowed=True)
        async with self.store.begin() as conn:
            router = await visible_router(conn, ctx, router_id, lock="update")
            ports = await interface_ports(conn, router.id)
            if "port_id" in info:
                port = next((p for p in ports if p.id == info["port_id"]), None)
                if port is None:
                    raise RouterInterfaceNotFound(router_id=router.id, port_id=info["port_id"])
                if "subnet_id" in info and info["subnet_id"] not in {ip["subnet_id"] for ip in port.fixed_ips}:
                    raise BadRequest(resource="router", msg=f"Subnet {info['subnet_id']} is not connected "
                                                            f"with port {port.id}")
            else:
                port = next((p for p in ports if info["subnet_id"] in {ip["subnet_id"] for ip in p.fixed_ips}), None)
                if port is None:
                    raise RouterInterfaceNotFoundForSubnet(router_id=router.id, subnet_id=info["subnet_id"])
            subnet_ids = [ip["subnet_id"] for ip in port.fixed_ips]
            await _check_interface_unused(conn, router, subnet_ids)
            # rule 2: the interface's port goes with it, in the same transaction
            await rows.delete_port(conn, port.id)
            return RouterInterface(router, port, subnet_ids)

    # -- the gateway ----------------------------------------------------------------------------

    async def _change_gateway(self, conn: StoreConnection, ctx: RequestContext, router: Router,
                              gateway: dict[str, Any] | None) -> None:
        current = await gateway_port(conn, router.id)
        if current is not None and gateway is not None and gateway["network_id"] == current.network_id \
                and "requests" not in gateway:
            await repos.routers.update(conn, router.id, enable_snat=gateway.get("enable_snat", router.enable_snat))
            return
        if current is not None:
            used = await repos.floating_ips.find(conn, router_id=router.id, floating_network_id=current.network_id)
            if used:
                raise RouterExternalGatewayInUseByFloatingIp(router_id=router.id, net_id=current.network_id)
            await rows.delete_port(conn, current.id)
            await repos.routers.update(conn, router.id, gateway_network_id=None, enable_snat=True)
        if gateway is not None:
            await self._set_gateway(conn, ctx, router, gateway)

    async def _set_gateway(self, conn: StoreConnection, ctx: RequestContext, router: Router,
                           gateway: dict[str, Any]) -> None:
        if ("enable_snat" in gateway or "requests" in gateway) and not ctx.is_admin:
            policy.require_admin(ctx)
        network = await rows.network(conn, gateway["network_id"])
        if network is None or not policy.can_see_network(ctx, network):
            raise NetworkNotFound(net_id=gateway["network_id"])
        if not network.external:
            raise BadRequest(resource="router", msg=f"Network {network.id} is not an external network")
        await make_port(conn, self.rng, self.rt.now(), network_id=network.id, project_id="",
                        device_owner=ROUTER_GATEWAY_OWNER, device_id=router.id, requests=gateway.get("requests"))
        await repos.routers.update(conn, router.id, gateway_network_id=network.id,
                                   enable_snat=gateway.get("enable_snat", True))


def _interface_info(body: object, both_allowed: bool = False) -> dict[str, str]:
    if not isinstance(body, dict) or not body:
        raise BadRequest(resource="router", msg="Either subnet_id or port_id must be specified")
    unknown = set(body) - {"subnet_id", "port_id"}
    if unknown:
        raise BadRequest(resource="router", msg=f"Unrecognized attribute(s) '{', '.join(sorted(unknown))}'")
    if "port_id" in body and "subnet_id" in body and not both_allowed:
        raise BadRequest(resource="router", msg="Cannot specify both subnet-id and port-id")
    info = {}
    for name in ("subnet_id", "port_id"):
        if name in body:
            info[name] = validation.uuid(name, body[name])
    return info


async def _check_overlap(conn: StoreConnection, router: Router, subnet_ids: list[str]) -> None:
    """neutron's ``_check_for_dup_router_subnets``: no two interfaces of a router on overlapping CIDRs."""
    theirs = {ip["subnet_id"] for port in await interface_ports(conn, router.id) for ip in port.fixed_ips}
    for subnet_id in subnet_ids:
        new = await rows.subnet(conn, subnet_id)
        for other_id in sorted(theirs):
            other = await rows.subnet(conn, other_id)
            if new is not None and other is not None and ipam.cidrs_overlap(new.cidr, other.cidr):
                raise BadRequest(resource="router", msg=f"Cidr {new.cidr} of subnet {new.id} overlaps with cidr "
                                                        f"{other.cidr} of subnet {other.id}")


async def _check_nexthops(conn: StoreConnection, router: Router, routes: list[dict[str, str]]) -> None:
    """neutron's ``_validate_routes_nexthop``: every nexthop is on one of the router's interface subnets."""
    cidrs = []
    for port in await interface_ports(conn, router.id):
        for ip in port.fixed_ips:
            subnet = await rows.subnet(conn, ip["subnet_id"])
            if subnet is not None:
                cidrs.append((subnet.cidr, ip["ip_address"]))
    for route in routes:
        if not any(netaddr.IPAddress(route["nexthop"]) in netaddr.IPNetwork(cidr) for cidr, _ in cidrs):
            raise InvalidRoutes(routes=routes, reason="the nexthop is not connected with router")
        if any(route["nexthop"] == own for _, own in cidrs):
            raise InvalidRoutes(routes=routes, reason="the nexthop is used by router")


async def _check_interface_unused(conn: StoreConnection, router: Router, subnet_ids: list[str]) -> None:
    for subnet_id in subnet_ids:
        subnet = await rows.subnet(conn, subnet_id)
        if subnet is None:
            continue
        for route in router.routes or []:
            if netaddr.IPAddress(route["nexthop"]) in netaddr.IPNetwork(subnet.cidr):
                raise RouterInterfaceInUseByRoute(router_id=router.id, subnet_id=subnet_id)
        for fip in await repos.floating_ips.find(conn, router_id=router.id):
            if fip.fixed_ip_address and netaddr.IPAddress(fip.fixed_ip_address) in netaddr.IPNetwork(subnet.cidr):
                raise RouterInterfaceInUseByFloatingIP(router_id=router.id, subnet_id=subnet_id)

