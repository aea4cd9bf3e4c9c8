"""Keystone's OS-EP-FILTER endpoint groups (/v3/OS-EP-FILTER/endpoint_groups): admins write, system
readers read. Their association with projects, which filters a project's catalog, is not served."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    NAME,
    NULLABLE_STRING,
    body_doc,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
    v3,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import ENDPOINT_INTERFACES, EndpointGroup
from tether.services.context import RequestContext

router = paths.router("identity")

_FILTERS = {"type": "object", "properties": {
    "interface": {"type": "string", "enum": list(ENDPOINT_INTERFACES)}, "service_id": {"type": "string"},
    "region_id": NULLABLE_STRING, "enabled": {"type": "boolean"}}}
_FIELDS = {"description": NULLABLE_STRING, "filters": _FILTERS, "name": NAME}
GROUP_CREATE = schema(_FIELDS, ["name", "filters"], open_=False)
GROUP_UPDATE = {**schema({"id": {"type": "string"}, **_FIELDS}, open_=False), "minProperties": 1}
_BASE = "/v3/OS-EP-FILTER/endpoint_groups"


def group_view(request: Request, group: EndpointGroup) -> dict[str, Any]:
    return {"id": group.id, "name": group.name, "description": group.description, "filters": group.filters,
            "links": {"self": f"{v3(request)}/OS-EP-FILTER/endpoint_groups/{group.id}"}}


@router.post(_BASE, status_code=201, openapi_extra=body_doc("endpoint_group", GROUP_CREATE))
async def create_endpoint_group(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_endpoint_group")
    body = await resource_body(request, "endpoint_group", GROUP_CREATE)
    group = await cloud(request).identity.endpoint_groups.create(
        name=body["name"], filters=body["filters"], description=body.get("description"))
    return {"endpoint_group": group_view(request, group)}


@router.get(_BASE)
async def list_endpoint_groups(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_endpoint_groups")
    groups = await cloud(request).identity.endpoint_groups.list(name=request.query_params.get("name"))
    return listing(request, "endpoint_groups", [group_view(request, g) for g in groups])


@router.get(_BASE + "/{group_id}")
async def get_endpoint_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_endpoint_group")
    return {"endpoint_group": group_view(request, await cloud(request).identity.endpoint_groups.get(group_id))}


@router.head(_BASE + "/{group_id}", status_code=200)
async def check_endpoint_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_reader(ctx, "get_endpoint_group")
    await cloud(request).identity.endpoint_groups.get(group_id)
    return Response(status_code=200)


@router.patch(_BASE + "/{group_id}", openapi_extra=body_doc("endpoint_group", GROUP_UPDATE))
async def update_endpoint_group(group_id: str, request: Request,
                                ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_endpoint_group")
    body = await resource_body(request, "endpoint_group", GROUP_UPDATE)
    if body.get("id") is not None and body["id"] != group_id:
        raise ie.ValidationError(reason="Cannot change ID")
    group = await cloud(request).identity.endpoint_groups.update(group_id, body)
    return {"endpoint_group": group_view(request, group)}


@router.delete(_BASE + "/{group_id}", status_code=204)
async def delete_endpoint_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_endpoint_group")
    await cloud(request).identity.endpoint_groups.delete(group_id)
    return Response(status_code=204)
