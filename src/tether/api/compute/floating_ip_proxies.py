"""nova's floating IP proxies: /os-floating-ips and /os-floating-ip-pools (until 2.35), and the
addFloatingIp/removeFloatingIp server actions (until 2.43).

As nova answers them with neutron: a pool is an external network (nova's
``default_floating_pool`` is "nova" when none is named), a floating IP is
shown with its pool's name and the server its port belongs to, and an
association goes to the port that holds the server's fixed address.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute.bodies import JsonBody, fail
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.domain.errors.network import NetworkError
from tether.domain.ids import is_uuid_like
from tether.domain.network import Port
from tether.domain.routers import FloatingIp
from tether.services.context import RequestContext

router = paths.router("compute")

# nova's [neutron] default_floating_pool
DEFAULT_POOL = "nova"


def _until(request: Request, last: str) -> None:
    version: Microversion = request.state.microversion
    if not version.at_most(last):
        raise ce.ComputeNotFound(reason="The resource could not be found.")


async def _view(request: Request, ctx: RequestContext, fip: FloatingIp) -> dict[str, Any]:
    network = cloud(request).network
    pool = await network.get_network(RequestContext.internal(), fip.floating_network_id)
    instance_id = None
    if fip.port_id:
        port = await network.find_port(fip.port_id)
        instance_id = port.device_id if port is not None else None
    return {"fixed_ip": fip.fixed_ip_address, "id": fip.id, "instance_id": instance_id,
            "ip": fip.floating_ip_address, "pool": pool.name or pool.id}


async def _by_id(request: Request, ctx: RequestContext, fip_id: str) -> FloatingIp:
    try:
        return await cloud(request).network.get_floatingip(ctx, fip_id)
    except NetworkError:
        raise ce.ComputeNotFound(reason=f"Floating IP not found for ID {fip_id}") from None


async def _by_address(request: Request, ctx: RequestContext, address: str) -> FloatingIp:
    found = await cloud(request).network.list_floatingips(ctx, floating_ip_address=address) if address else []
    if not found:
        raise ce.ComputeNotFound(reason=f"Floating IP not found for address {address}.")
    if len(found) > 1:
        raise ce.ComputeConflict(reason=f"Multiple floating IPs are found for address {address}.")
    return found[0]


@router.get("/os-floating-ip-pools")
async def list_pools(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until(request, "2.35")
    networks = await cloud(request).network.list_networks(ctx)
    return {"floating_ip_pools": [{"name": network.name or network.id} for network in networks if network.external]}


@router.get("/os-floating-ips")
async def list_floating_ips(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until(request, "2.35")
    found = await cloud(request).network.list_floatingips(ctx, project_id=ctx.project_id)
    return {"floating_ips": [await _view(request, ctx, fip) for fip in found]}


@router.get("/os-floating-ips/{fip_id}")
async def show_floating_ip(fip_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until(request, "2.35")
    return {"floating_ip": await _view(request, ctx, await _by_id(request, ctx, fip_id))}


async def _pool_id(request: Request, ctx: RequestContext, pool: str) -> str:
    """nova's ``_get_floating_ip_pool_id_by_name_or_id``: the one external network of that name (or id)."""
    networks = [network for network in await cloud(request).network.list_networks(ctx) if network.external
                and (network.id == pool if is_uuid_like(pool) else network.name == pool)]
    if not networks:
        raise ce.ComputeNotFound(reason="Floating IP pool not found.")
    if len(networks) > 1:
        raise ce.ComputeConflict(reason=f"Multiple floating IP pools matches found for name '{pool}'")
    return networks[0].id


@router.post("/os-floating-ips")
async def allocate_floating_ip(request: Request, raw: JsonBody, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    _until(request, "2.35")
    body = raw.root
    if body is not None and not isinstance(body, dict):
        raise fail(f"Invalid input for field/attribute body. Value: {body}. {body!r} is not of type 'object', 'null'")
    pool = (body or {}).get("pool")
    if pool is not None and not isinstance(pool, str):
        raise fail(f"Invalid input for field/attribute pool. Value: {pool}. {pool!r} is not of type 'string', 'null'")
    network_id = await _pool_id(request, ctx, pool or DEFAULT_POOL)
    try:
        fip = await cloud(request).network.create_floatingip(ctx, floating_network_id=network_id)
    except NetworkError as error:
        if error.status == 409 and "Quota" in error.message:
            raise ce.ComputeForbidden(f"IP allocation over quota in pool {pool}." if pool
                                      else "IP allocation over quota.") from None
        if error.status == 409:
            raise ce.ComputeNotFound(reason=f"No more floating IPs in pool {pool}." if pool
                                     else "No more floating IPs available.") from None
        raise ce.ComputeBadRequest(reason=error.message) from None
    return JSONResponse({"floating_ip": await _view(request, ctx, fip)})


@router.delete("/os-floating-ips/{fip_id}", status_code=202)
async def release_floating_ip(fip_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    _until(request, "2.35")
    fip = await _by_id(request, ctx, fip_id)
    try:
        await cloud(request).network.delete_floatingip(ctx, fip.id)
    except NetworkError:
        raise ce.ComputeNotFound(reason=f"Floating IP not found for address {fip.floating_ip_address}.") from None
    return Response(status_code=202)


# -- the server actions ----------------------------------------------------------------------


def _address_field(action: str, value: Any) -> tuple[str, str | None]:
    """nova's add_floating_ip/remove_floating_ip schemas: an IP ``address`` (and, to add, a ``fixed_address``)."""
    allowed = {"address", "fixed_address"} if action == "addFloatingIp" else {"address"}
    if not isinstance(value, dict):
        raise fail(f"Invalid input for field/attribute {action}. Value: {value}. {value!r} is not of type 'object'")
    for key in value:
        if key not in allowed:
            raise fail(f"Invalid input for field/attribute {action}. Additional properties are not allowed "
                       f"('{key}' was unexpected)")
    if "address" not in value:
        raise fail(f"Invalid input for field/attribute {action}. Value: {value}. 'address' is a required property")
    for name in allowed & set(value):
        try:
            ipaddress.ip_address(value[name])
        except (TypeError, ValueError):
            raise fail(f"Invalid input for field/attribute {name}. Value: {value[name]}. "
                       f"{value[name]!r} is not a 'ip-address'") from None
    return value["address"], value.get("fixed_address")


async def _instance(request: Request, ctx: RequestContext, server_id: str) -> Instance:
    instance = await cloud(request).compute.listed_instance(ctx, server_id)
    if instance is None or instance.deleted:
        raise ce.InstanceNotFound(instance_id=server_id)
    return instance


def _holder(ports: list[Port], fixed_address: str) -> Port | None:
    return next((port for port in ports if any(ip["ip_address"] == fixed_address for ip in port.fixed_ips)), None)


async def add_floating_ip(request: Request, ctx: RequestContext, server_id: str, value: Any) -> Response:
    _until(request, "2.43")
    address, fixed_address = _address_field("addFloatingIp", value)
    instance = await _instance(request, ctx, server_id)
    network = cloud(request).network
    ports = await network.list_ports(ctx, device_id=instance.uuid)
    fixed = [ip["ip_address"] for port in ports for ip in port.fixed_ips]
    if not ports:
        raise fail("Instance network is not ready yet")
    if not fixed:
        raise fail("No fixed IPs associated to instance")
    if fixed_address is not None and fixed_address not in fixed:
        raise fail("Specified fixed address not assigned to instance")
    if fixed_address is None:
        fixed_address = next((ip for ip in fixed if ipaddress.ip_address(ip).version == 4), None)
        if fixed_address is None:
            raise fail(f"Unable to associate floating IP {address} to any fixed IPs for instance {server_id}. "
                       "Instance has no fixed IPv4 addresses to associate.")
    holder = _holder(ports, fixed_address)
    assert holder is not None
    try:
        fip = await _by_address(request, ctx, address)
    except ce.ComputeNotFound:
        raise ce.ComputeNotFound(reason="floating IP not found") from None
    try:
        await network.update_floatingip(ctx, fip.id, port_id=holder.id, fixed_ip_address=fixed_address)
    except NetworkError as error:
        raise fail(f"Unable to associate floating IP {address} to fixed IP {fixed_address} for instance "
                   f"{server_id}. Error: {error.message}") from None
    return Response(status_code=202)


async def remove_floating_ip(request: Request, ctx: RequestContext, server_id: str, value: Any) -> Response:
    _until(request, "2.43")
    address, _ = _address_field("removeFloatingIp", value)
    fip = await _by_address(request, ctx, address)
    holder = await cloud(request).network.find_port(fip.port_id) if fip.port_id else None
    if holder is None or holder.device_id != server_id:
        raise ce.ComputeConflict(reason=f"Floating IP {address} is not associated with instance {server_id}.")
    await _instance(request, ctx, server_id)
    try:
        await cloud(request).network.update_floatingip(ctx, fip.id, port_id=None)
    except NetworkError as error:
        raise fail(error.message) from None
    return Response(status_code=202)
