"""Rows as the caller may see or change them, inside the caller's transaction.

What the caller may not see is NotFound, exactly like what does not exist
(see ``policy``), so ids never leak across projects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain.errors.network import NetworkNotFound, NotAuthorized, PortNotFound, SubnetNotFound
from tether.domain.network import Network, Port, Subnet
from tether.services.context import RequestContext
from tether.services.network import policy, rows

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


async def visible_network(
    conn: StoreConnection, ctx: RequestContext, network_id: str, lock: str | None = None
) -> Network:
    network = await rows.network(conn, network_id, lock)
    if network is None or not policy.can_see_network(ctx, network):
        raise NetworkNotFound(net_id=network_id)
    return network


async def owned_network(
    conn: StoreConnection, ctx: RequestContext, network_id: str, lock: str | None = None
) -> Network:
    network = await visible_network(conn, ctx, network_id, lock)
    if not policy.owns_network(ctx, network):
        raise NotAuthorized()
    return network


async def visible_subnet(
    conn: StoreConnection, ctx: RequestContext, subnet_id: str, lock: str | None = None
) -> Subnet:
    subnet = await rows.subnet(conn, subnet_id, lock)
    network = None if subnet is None else await rows.network(conn, subnet.network_id)
    if subnet is None or not policy.can_see_subnet(ctx, subnet, network):
        raise SubnetNotFound(subnet_id=subnet_id)
    return subnet


async def owned_subnet(
    conn: StoreConnection, ctx: RequestContext, subnet_id: str, lock: str | None = None
) -> Subnet:
    subnet = await visible_subnet(conn, ctx, subnet_id, lock)
    if not ctx.owns(subnet.project_id):
        policy.require_admin(ctx)
    return subnet


async def visible_port(
    conn: StoreConnection, ctx: RequestContext, port_id: str, lock: str | None = None
) -> Port:
    port = await rows.port(conn, port_id, lock)
    if port is None or not policy.can_see_port(ctx, port):
        raise PortNotFound(port_id=port_id)
    return port
