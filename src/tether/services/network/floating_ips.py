"""Floating IPs: an address of an external network, held by a ``network:floatingip`` port, associated with
a fixed IP of a port that a router connects to that network (neutron's l3_db)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import netaddr

from tether.domain import routers
from tether.domain.errors.network import (
    BadRequest,
    ExternalGatewayForFloatingIPNotFound,
    FloatingIPNotFound,
    FloatingIPPortAlreadyAssociated,
    NetworkNotFound,
)
from tether.domain.ids import new_uuid
from tether.domain.network import FLOATINGIP_OWNER, ROUTER_INTERFACE_OWNER, Port
from tether.domain.routers import FloatingIp
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import fixed_ips, policy, quota_usage, rows, validation
from tether.services.network.filters import column_filters
from tether.services.network.lookups import visible_port
from tether.services.network.service_ports import make_port
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

UPDATABLE = ("port_id", "fixed_ip_address", "description")


async def visible_floating_ip(conn: StoreConnection, ctx: RequestContext, fip_id: str,
                              lock: str | None = None) -> FloatingIp:
    fip = await repos.floating_ips.get(conn, fip_id, lock=lock) if isinstance(fip_id, str) else None
    if fip is None or not ctx.owns(fip.project_id):
        raise FloatingIPNotFound(floatingip_id=fip_id)
    return fip


@dataclass(eq=False)
class FloatingIps:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_floatingip(self, ctx: RequestContext, *, floating_network_id: str,
                                port_id: str | None = None, fixed_ip_address: str | None = None,
                                floating_ip_address: str | None = None, subnet_id: str | None = None,
                                description: str = "", project_id: str | None = None) -> FloatingIp:
        policy.require_write(ctx)
        validation.uuid("floating_network_id", floating_network_id)
        validation.string("description", description)
        if port_id is not None:
            validation.uuid("port_id", port_id)
        if fixed_ip_address is not None:
            fixed_ip_address = str(netaddr.IPAddress(_address("fixed_ip_address", fixed_ip_address)))
        if floating_ip_address is not None:
            policy.require_admin(ctx)  # neutron: create_floatingip:floating_ip_address is admin only
            floating_ip_address = str(netaddr.IPAddress(_address("floating_ip_address", floating_ip_address)))
        if subnet_id is not None:
            validation.uuid("subnet_id", subnet_id)
        project = policy.project_for(ctx, project_id)
        fip_id = new_uuid(self.rng)
        async with self.store.begin() as conn:
            network = await rows.network(conn, floating_network_id)
            if network is None or not policy.can_see_network(ctx, network):
                raise NetworkNotFound(net_id=floating_network_id)
            if not network.external:
                raise BadRequest(resource="floatingip", msg=f"Network {network.id} is not a valid external network")
            await quota_usage.check(conn, project, "floatingip", 1)
            requests = None
            if floating_ip_address is not None or subnet_id is not None:
                requests = [fixed_ips.Request(subnet_id, floating_ip_address)]
            holder = await make_port(conn, self.rng, self.rt.now(), network_id=network.id, project_id="",
                                     device_owner=FLOATINGIP_OWNER, device_id=fip_id, requests=requests)
            now = self.rt.now()
            fip = FloatingIp(id=fip_id, project_id=project, floating_network_id=network.id,
                             floating_ip_address=holder.fixed_ips[0]["ip_address"], floating_port_id=holder.id,
                             description=description, created_at=now, updated_at=now)
            await repos.floating_ips.add(conn, fip)
            if port_id is not None:
                await self._associate(conn, ctx, fip, port_id, fixed_ip_address)
            return await repos.floating_ips.get(conn, fip.id)  # type: ignore[return-value]

    async def get_floatingip(self, ctx: RequestContext, fip_id: str) -> FloatingIp:
        async with self.store.begin() as conn:
            return await visible_floating_ip(conn, ctx, fip_id)

    async def list_floatingips(self, ctx: RequestContext, **filters: Any) -> list[FloatingIp]:
        filters = column_filters(repos.floating_ips.table, filters)
        async with self.store.begin() as conn:
            found = await repos.floating_ips.find(conn, **filters)
        return [fip for fip in found if ctx.owns(fip.project_id)]

    async def update_floatingip(self, ctx: RequestContext, fip_id: str, **changes: Any) -> FloatingIp:
        policy.require_write(ctx)
        validation.known_keys(changes, UPDATABLE, ("id", "floating_network_id", "floating_ip_address",
                                                   "project_id", "router_id", "status"))
        if "description" in changes:
            validation.string("description", changes["description"])
        port_id = changes.get("port_id")
        if port_id is not None:
            validation.uuid("port_id", port_id)
        fixed = changes.get("fixed_ip_address")
        if fixed is not None:
            fixed = str(netaddr.IPAddress(_address("fixed_ip_address", fixed)))
        async with self.store.begin() as conn:
            fip = await visible_floating_ip(conn, ctx, fip_id, lock="update")
            if "description" in changes:
                await repos.floating_ips.update(conn, fip.id, description=changes["description"])
            if "port_id" in changes:
                if port_id is None:
                    await _disassociate(conn, fip.id)
                else:
                    await self._associate(conn, ctx, fip, port_id, fixed)
            await repos.floating_ips.update(conn, fip.id, updated_at=self.rt.now())
            return await repos.floating_ips.get(conn, fip.id)  # type: ignore[return-value]

    async def delete_floatingip(self, ctx: RequestContext, fip_id: str) -> None:
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            fip = await visible_floating_ip(conn, ctx, fip_id, lock="update")
            # rule 2: the address's port goes with the floating IP, in the same transaction
            await repos.floating_ips.delete(conn, fip.id)
            await rows.delete_port(conn, fip.floating_port_id)
            await repos.resource_tags.delete_where(conn, resource_id=fip.id)

    async def _associate(self, conn: StoreConnection, ctx: RequestContext, fip: FloatingIp, port_id: str,
                         fixed_ip_address: str | None) -> None:
        port = await visible_port(conn, ctx, port_id, lock="update")
        if port.project_id != fip.project_id and not ctx.is_admin:
            raise BadRequest(resource="floatingip", msg=f"Cannot create floating IP and bind it to Port {port.id}, "
                                                        "since that port is owned by a different tenant.")
        fixed = _fixed_ip_of(port, fixed_ip_address)
        others = await repos.floating_ips.find(conn, port_id=port.id, fixed_ip_address=fixed["ip_address"],
                                               floating_network_id=fip.floating_network_id)
        if any(other.id != fip.id for other in others):
            raise FloatingIPPortAlreadyAssociated(floating_ip_address=fip.floating_ip_address, fip_id=fip.id,
                                                  port_id=port.id, fixed_ip=fixed["ip_address"],
                                                  net_id=fip.floating_network_id)
        router_id = await _router_between(conn, fip.floating_network_id, fixed["subnet_id"])
        if router_id is None:
            raise ExternalGatewayForFloatingIPNotFound(external_network_id=fip.floating_network_id,
                                                       subnet_id=fixed["subnet_id"], port_id=port.id)
        await repos.floating_ips.update(conn, fip.id, port_id=port.id, fixed_ip_address=fixed["ip_address"],
                                        router_id=router_id, status=routers.ACTIVE)


async def _disassociate(conn: StoreConnection, fip_id: str) -> None:
    await repos.floating_ips.update(conn, fip_id, port_id=None, fixed_ip_address=None, router_id=None,
                                    status=routers.DOWN)


def _address(attr: str, value: object) -> str:
    try:
        netaddr.IPAddress(value)  # type: ignore[arg-type]
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise BadRequest(resource="floatingip", msg=f"Invalid input for {attr}. Reason: '{value}' is not a valid "
                                                    "IP address") from None
    return str(value)


def _fixed_ip_of(port: Port, wanted: str | None) -> dict[str, str]:
    if wanted is not None:
        for ip in port.fixed_ips:
            if ip["ip_address"] == wanted:
                return ip
        raise BadRequest(resource="floatingip", msg=f"Port {port.id} does not have fixed ip {wanted}")
    ipv4 = [ip for ip in port.fixed_ips if netaddr.IPAddress(ip["ip_address"]).version == 4]
    if not ipv4:
        raise BadRequest(resource="floatingip",
                         msg=f"Cannot add floating IP to port {port.id} that has no fixed IPv4 addresses")
    return ipv4[0]


async def _router_between(conn: StoreConnection, external_network_id: str, subnet_id: str) -> str | None:
    """A router with its gateway on the external network and an interface on the subnet (neutron's
    ``_get_router_for_floatingip``)."""
    for router in await repos.routers.find(conn, order_by=("created_at", "id"),
                                           gateway_network_id=external_network_id):
        interfaces = await rows.with_fixed_ips(conn, await repos.ports.find(
            conn, device_id=router.id, device_owner=ROUTER_INTERFACE_OWNER))
        if any(ip["subnet_id"] == subnet_id for port in interfaces for ip in port.fixed_ips):
            return router.id
    return None
