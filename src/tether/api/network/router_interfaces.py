"""PUT /v2.0/routers/{id}/add_router_interface and /remove_router_interface (neutron's router member
actions): by subnet or by port, answering neutron's interface info."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.network.errors import neutron_errors
from tether.api.network.routes import read_body
from tether.services.context import RequestContext
from tether.services.network.routers import RouterInterface

router = paths.router("network")

_BODY = openapi.obj({"subnet_id": openapi.UUID, "port_id": openapi.UUID}, [])


def _info(interface: RouterInterface) -> dict[str, Any]:
    return {"id": interface.router.id, "tenant_id": interface.router.project_id,
            "project_id": interface.router.project_id, "port_id": interface.port.id,
            "network_id": interface.port.network_id,
            "subnet_id": interface.subnet_ids[0] if interface.subnet_ids else None,
            "subnet_ids": list(interface.subnet_ids)}


@router.put("/routers/{router_id}/add_router_interface", openapi_extra=openapi.extra(openapi.json_body(_BODY)))
async def add_router_interface(router_id: str, request: Request,
                               ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        body = await read_body(request)
        return _info(await cloud(request).network.add_router_interface(ctx, router_id, body))


@router.put("/routers/{router_id}/remove_router_interface", openapi_extra=openapi.extra(openapi.json_body(_BODY)))
async def remove_router_interface(router_id: str, request: Request,
                                  ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        body = await read_body(request)
        return _info(await cloud(request).network.remove_router_interface(ctx, router_id, body))
