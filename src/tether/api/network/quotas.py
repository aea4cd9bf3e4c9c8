"""/v2.0/quotas (neutron's quotas and quota_details extensions)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.network.errors import HTTPBadRequest, neutron_errors
from tether.api.network.routes import read_body
from tether.domain import network_quotas
from tether.services.context import RequestContext
from tether.services.network import quotas as quota_rules

router = paths.router("network")

_QUOTA_BODY = openapi.obj({"quota": openapi.obj({name: {"type": "integer", "minimum": -1}
                                                  for name in network_quotas.DEFAULTS}, [])}, ["quota"])


@router.get("/quotas")
async def list_quotas(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        found = await cloud(request).network.projects_with_limits(ctx)
    return {"quotas": [{**limits, "project_id": project, "tenant_id": project} for project, limits in found.items()]}


@router.get("/quotas/{project_id}/default")
async def default_quotas(project_id: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return {"quota": dict(network_quotas.DEFAULTS)}


@router.get("/quotas/{project_id}/details")
async def quota_details(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        return {"quota": await cloud(request).network.project_usage(ctx, project_id)}


@router.get("/quotas/{project_id}")
async def show_quota(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        return {"quota": await cloud(request).network.project_limits(ctx, project_id)}


@router.put("/quotas/{project_id}", openapi_extra=openapi.extra(openapi.json_body(_QUOTA_BODY)))
async def update_quota(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        body = await read_body(request)
        if not isinstance(body, dict) or "quota" not in body:
            raise HTTPBadRequest("Unable to find 'quota' in request body")
        limits = quota_rules.check_limits(body["quota"])
        return {"quota": await cloud(request).network.set_quota_limits(ctx, project_id, limits)}


@router.delete("/quotas/{project_id}", status_code=204)
async def reset_quota(project_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    with neutron_errors():
        await cloud(request).network.reset_quota_limits(ctx, project_id)
    return Response(status_code=204)
