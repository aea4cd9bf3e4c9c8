"""nova's proxies to the network service before 2.36: /os-networks and /os-tenant-networks, read-only.

As nova answers them with neutron: the networks the caller sees, by id and
label, every nova-network-only field null (admins get more of them); from
2.36 they are gone (404), and what only nova-network could do is nova's 410.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.network import Network
from tether.services.context import RequestContext

router = paths.router("compute")

_FIELDS = ("id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2", "cidr_v6", "gateway_v6", "label",
           "netmask_v6")
_ADMIN_FIELDS = ("created_at", "updated_at", "deleted_at", "deleted", "injected", "bridge", "vlan",
                 "vpn_public_address", "vpn_public_port", "vpn_private_address", "dhcp_start", "project_id", "host",
                 "bridge_interface", "multi_host", "priority", "rxtx_base", "mtu", "dhcp_server", "enable_dhcp",
                 "share_address")


def _until_2_35(request: Request) -> None:
    version: Microversion = request.state.microversion
    if version.at_least("2.36"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")


def _network(network: Network, admin: bool) -> dict[str, Any]:
    fields = _FIELDS + (_ADMIN_FIELDS if admin else ())
    return {name: network.id if name == "id" else network.name if name == "label" else None for name in fields}


def _tenant_network(network: Network) -> dict[str, Any]:
    return {"id": network.id, "cidr": "None", "label": network.name}


async def _one(request: Request, ctx: RequestContext, network_id: str) -> Network:
    try:
        return await cloud(request).network.get_network(ctx, network_id)
    except TetherError:
        raise ce.ComputeNotFound(reason="Network not found") from None


@router.get("/os-networks")
async def list_networks(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    return {"networks": [_network(n, ctx.is_admin) for n in await cloud(request).network.list_networks(ctx)]}


@router.get("/os-networks/{network_id}")
async def show_network(network_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    return {"network": _network(await _one(request, ctx, network_id), ctx.is_admin)}


@router.get("/os-tenant-networks")
async def list_tenant_networks(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    return {"networks": [_tenant_network(n) for n in await cloud(request).network.list_networks(ctx)]}


@router.get("/os-tenant-networks/{network_id}")
async def show_tenant_network(network_id: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    return {"network": _tenant_network(await _one(request, ctx, network_id))}
