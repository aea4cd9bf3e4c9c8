"""Keystone's regions, services and endpoints: the tables the tokens' catalog is built from."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.api.identity.common import (
    BOOLEAN,
    DESCRIPTION,
    NULLABLE_ID,
    NULLABLE_STRING,
    body_doc,
    flag,
    links,
    listing,
    require_admin,
    require_reader,
    resource_body,
    schema,
)
from tether.domain.errors import identity as ie
from tether.domain.identity import ENDPOINT_INTERFACES, CatalogService, Endpoint, Region
from tether.services.context import RequestContext

router = paths.router("identity")

NON_EMPTY = {"type": "string", "minLength": 1, "maxLength": 255}
REGION_FIELDS = {"id": {"type": "string", "minLength": 1, "maxLength": 255}, "description": DESCRIPTION,
                 "parent_region_id": NULLABLE_ID}
SERVICE_FIELDS = {"type": NON_EMPTY, "name": NULLABLE_STRING, "description": DESCRIPTION, "enabled": BOOLEAN}
ENDPOINT_FIELDS = {"service_id": NON_EMPTY, "interface": {"type": "string", "enum": list(ENDPOINT_INTERFACES)},
                   "url": {"type": "string", "minLength": 1, "maxLength": 225, "pattern": "^[a-zA-Z0-9+.-]+:.+"},
                   "region_id": NULLABLE_ID, "region": NULLABLE_ID, "enabled": BOOLEAN}


def region_view(request: Request, region: Region) -> dict[str, Any]:
    return {"id": region.id, "description": region.description, "parent_region_id": region.parent_region_id,
            "links": links(request, "regions", region.id)}


def service_view(request: Request, service: CatalogService) -> dict[str, Any]:
    return {"id": service.id, "type": service.type, "name": service.name, "description": service.description,
            "enabled": service.enabled, "links": links(request, "services", service.id)}


def endpoint_view(request: Request, endpoint: Endpoint) -> dict[str, Any]:
    return {"id": endpoint.id, "service_id": endpoint.service_id, "interface": endpoint.interface,
            "url": endpoint.url, "region_id": endpoint.region_id, "region": endpoint.region_id,
            "enabled": endpoint.enabled, "links": links(request, "endpoints", endpoint.id)}


# -- regions: any authenticated caller may read them (keystone's policy is empty) ----------------------


@router.post("/v3/regions", status_code=201,
    openapi_extra=body_doc("region", schema(REGION_FIELDS)))
async def create_region(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_region")
    body = await resource_body(request, "region", schema(REGION_FIELDS))
    region = await cloud(request).identity.catalogs.create_region(
        id=body.get("id"), description=body.get("description") or "", parent_region_id=body.get("parent_region_id"))
    return {"region": region_view(request, region)}


@router.put("/v3/regions/{region_id}", status_code=201,
    openapi_extra=body_doc("region", schema(REGION_FIELDS)))
async def create_region_with_id(region_id: str, request: Request,
                                ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_region")
    body = await resource_body(request, "region", schema(REGION_FIELDS))
    if body.get("id") not in (None, region_id):
        raise ie.ValidationError(reason="Conflicting region IDs specified: "
                                        f"\"{region_id}\" != \"{body['id']}\"")
    region = await cloud(request).identity.catalogs.create_region(
        id=region_id, description=body.get("description") or "", parent_region_id=body.get("parent_region_id"))
    return {"region": region_view(request, region)}


@router.get("/v3/regions")
async def list_regions(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    regions = await cloud(request).identity.catalogs.list_regions(
        parent_region_id=request.query_params.get("parent_region_id"))
    return listing(request, "regions", [region_view(request, r) for r in regions])


@router.get("/v3/regions/{region_id}")
async def get_region(region_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return {"region": region_view(request, await cloud(request).identity.catalogs.get_region(region_id))}


@router.patch("/v3/regions/{region_id}",
    openapi_extra=body_doc("region", schema(REGION_FIELDS)))
async def update_region(region_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_region")
    fields = {key: value for key, value in REGION_FIELDS.items() if key != "id"}
    body = await resource_body(request, "region", schema(fields))
    changes = {key: body[key] for key in fields if key in body}
    if "description" in changes:
        changes["description"] = changes["description"] or ""
    region = await cloud(request).identity.catalogs.update_region(region_id, **changes)
    return {"region": region_view(request, region)}


@router.delete("/v3/regions/{region_id}", status_code=204)
async def delete_region(region_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_region")
    await cloud(request).identity.catalogs.delete_region(region_id)
    return Response(status_code=204)


# -- services -----------------------------------------------------------------------------------------


@router.post("/v3/services", status_code=201,
    openapi_extra=body_doc("service", schema(SERVICE_FIELDS, ["type"])))
async def create_service(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_service")
    body = await resource_body(request, "service", schema(SERVICE_FIELDS, ["type"]))
    service = await cloud(request).identity.catalogs.create_service(
        type=body["type"], name=body.get("name") or "", description=body.get("description") or "",
        enabled=body.get("enabled", True))
    return {"service": service_view(request, service)}


@router.get("/v3/services")
async def list_services(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_services")
    services = await cloud(request).identity.catalogs.list_services(type=request.query_params.get("type"),
                                                                    name=request.query_params.get("name"))
    return listing(request, "services", [service_view(request, s) for s in services])


@router.get("/v3/services/{service_id}")
async def get_service(service_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_service")
    return {"service": service_view(request, await cloud(request).identity.catalogs.get_service(service_id))}


@router.patch("/v3/services/{service_id}",
    openapi_extra=body_doc("service", schema(SERVICE_FIELDS)))
async def update_service(service_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_service")
    body = await resource_body(request, "service", schema(SERVICE_FIELDS))
    changes = {key: body[key] for key in SERVICE_FIELDS if key in body}
    changes.update({key: changes[key] or "" for key in ("name", "description") if key in changes})
    service = await cloud(request).identity.catalogs.update_service(service_id, **changes)
    return {"service": service_view(request, service)}


@router.delete("/v3/services/{service_id}", status_code=204)
async def delete_service(service_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_service")
    await cloud(request).identity.catalogs.delete_service(service_id)
    return Response(status_code=204)


# -- endpoints ----------------------------------------------------------------------------------------


@router.post("/v3/endpoints", status_code=201,
    openapi_extra=body_doc("endpoint", schema(ENDPOINT_FIELDS, ["service_id", "interface", "url"])))
async def create_endpoint(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "create_endpoint")
    body = await resource_body(request, "endpoint", schema(ENDPOINT_FIELDS, ["service_id", "interface", "url"]))
    endpoint = await cloud(request).identity.catalogs.create_endpoint(
        service_id=body["service_id"], interface=body["interface"], url=body["url"],
        region_id=body.get("region_id") or body.get("region"), enabled=body.get("enabled", True))
    return {"endpoint": endpoint_view(request, endpoint)}


@router.get("/v3/endpoints")
async def list_endpoints(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "list_endpoints")
    query = request.query_params
    endpoints = await cloud(request).identity.catalogs.list_endpoints(
        service_id=query.get("service_id"), interface=query.get("interface"), region_id=query.get("region_id"))
    enabled = flag(request, "enabled")
    return listing(request, "endpoints",
                   [endpoint_view(request, e) for e in endpoints if enabled is None or e.enabled == enabled])


@router.get("/v3/endpoints/{endpoint_id}")
async def get_endpoint(endpoint_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_reader(ctx, "get_endpoint")
    return {"endpoint": endpoint_view(request, await cloud(request).identity.catalogs.get_endpoint(endpoint_id))}


@router.patch("/v3/endpoints/{endpoint_id}",
    openapi_extra=body_doc("endpoint", schema(ENDPOINT_FIELDS)))
async def update_endpoint(endpoint_id: str, request: Request,
                          ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    require_admin(ctx, "update_endpoint")
    body = await resource_body(request, "endpoint", schema(ENDPOINT_FIELDS))
    changes = {key: body[key] for key in ("service_id", "interface", "url", "enabled") if key in body}
    if body.get("region_id") or body.get("region"):
        changes["region_id"] = body.get("region_id") or body.get("region")
    endpoint = await cloud(request).identity.catalogs.update_endpoint(endpoint_id, **changes)
    return {"endpoint": endpoint_view(request, endpoint)}


@router.delete("/v3/endpoints/{endpoint_id}", status_code=204)
async def delete_endpoint(endpoint_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    require_admin(ctx, "delete_endpoint")
    await cloud(request).identity.catalogs.delete_endpoint(endpoint_id)
    return Response(status_code=204)
