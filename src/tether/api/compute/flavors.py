"""/flavors: list, list in detail, show, extra specs; admins create (200) and delete (202).

Non-admins see public flavors and the private ones shared with their project (flavor_settings.py).
Lists are sorted by flavor id and paged as nova pages them.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paging, paths
from tether.api.compute import bodies, views
from tether.api.compute.bodies import fail, unexpected
from tether.api.compute.query import PageQuery, Text, next_links
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.booleans import bool_from_string
from tether.domain.compute import Flavor
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext

router = paths.router("compute")

_SORT_KEYS = {
    "flavorid": lambda f: f.id, "id": lambda f: f.id, "name": lambda f: f.name, "memory_mb": lambda f: f.ram,
    "root_gb": lambda f: f.disk, "ephemeral_gb": lambda f: f.ephemeral, "swap": lambda f: f.swap,
    "vcpus": lambda f: f.vcpus, "is_public": lambda f: f.is_public, "description": lambda f: f.description or "",
    # the same for every Tether flavor
    "created_at": lambda f: 0, "updated_at": lambda f: 0, "disabled": lambda f: False,
    "rxtx_factor": lambda f: f.rxtx_factor or 1.0, "vcpu_weight": lambda f: 0,
}


_Integer = Annotated[str | None, openapi.described({"type": "integer"})]


class ListQuery(PageQuery):
    """What GET /flavors[/detail] reads; ``_listed`` checks each value in nova's words."""

    is_public: Annotated[str | None, openapi.described({"type": "string", "enum": ["true", "false", "none"]})] = None
    minRam: _Integer = None
    minDisk: _Integer = None
    name: Text = None
    sort_key: Annotated[str | None, openapi.described({"type": "string", "enum": sorted(_SORT_KEYS)})] = None
    sort_dir: Annotated[str | None, openapi.described(openapi.SORT_DIR)] = None


def _is_public_filter(raw: str | None) -> bool | None:
    """nova's _parse_is_public: absent means public only, "none" means all."""
    if raw is None:
        return True
    if raw.strip().lower() == "none":
        return None
    try:
        return bool_from_string(raw, strict=True)
    except ValueError:
        raise fail(f"Invalid is_public filter [{raw}]") from None


async def _listed(request: Request, query: ListQuery, ctx: RequestContext) -> list[Flavor]:
    flavors = await cloud(request).compute.visible_flavors(
        ctx, is_public=_is_public_filter(query.is_public) if ctx.is_admin else True)
    for param, attribute, raw in (("minRam", "ram", query.minRam), ("minDisk", "disk", query.minDisk)):
        if raw is not None:
            try:
                minimum = int(raw)
            except ValueError:
                raise fail(f"Invalid {param} filter [{raw}]") from None
            flavors = [flavor for flavor in flavors if getattr(flavor, attribute) >= minimum]
    if query.name is not None:
        flavors = [flavor for flavor in flavors if flavor.name == query.name]
    sort_key = query.sort_key or "flavorid"
    sort_dir = query.sort_dir or "asc"
    if sort_key not in _SORT_KEYS:
        raise fail(f"Invalid input for query parameters sort_key. Value: {sort_key}. "
                   f"'{sort_key}' is not one of {sorted(_SORT_KEYS)}")
    if sort_dir not in ("asc", "desc"):
        raise fail(f"Invalid input for query parameters sort_dir. Value: {sort_dir}. "
                   f"'{sort_dir}' is not one of ['asc', 'desc']")
    limit, marker = query.page()
    start = None
    if marker is not None:
        start = paging.find(flavors, marker, lambda flavor: flavor.id)
        if start is None:
            raise fail(f"marker [{marker}] not found")
    # Ties in the asked order stay in flavor id order, as nova's database returns them.
    order = (paging.SortKey(sort_key, sort_dir == "asc"), paging.SortKey("flavorid"))
    return paging.page(flavors, paging.ListQuery(sort=order, marker=marker, limit=limit),
                       lambda flavor, key: _SORT_KEYS[key](flavor), marker=start)


@router.get("/flavors")
async def list_flavors(request: Request, query: Annotated[ListQuery, Query()],
                       ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    flavors = await _listed(request, query, ctx)
    base = request.app.state.base_url
    return JSONResponse({"flavors": [views.flavor_basic(base, flavor, version) for flavor in flavors],
                         **next_links(request, "flavors", flavors, flavors[-1].id if flavors else None,
                                      "flavors_links")})


@router.get("/flavors/detail")
async def list_flavors_detail(request: Request, query: Annotated[ListQuery, Query()],
                              ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    flavors = await _listed(request, query, ctx)
    base = request.app.state.base_url
    return JSONResponse({"flavors": [views.flavor_detail(base, flavor, version) for flavor in flavors],
                         **next_links(request, "flavors/detail", flavors, flavors[-1].id if flavors else None,
                                      "flavors_links")})


@router.get("/flavors/{flavor_id}")
async def show_flavor(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    flavor = await cloud(request).compute.visible_flavor(ctx, flavor_id)
    return JSONResponse({"flavor": views.flavor_detail(request.app.state.base_url, flavor, version)})


@router.get("/flavors/{flavor_id}/os-extra_specs")
async def flavor_extra_specs(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    flavor = await cloud(request).compute.visible_flavor(ctx, flavor_id)
    return JSONResponse({"extra_specs": dict(flavor.extra_specs)})


@router.get("/flavors/{flavor_id}/os-extra_specs/{key}")
async def flavor_extra_spec(flavor_id: str, key: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> JSONResponse:
    flavor = await cloud(request).compute.visible_flavor(ctx, flavor_id)
    if key not in flavor.extra_specs:
        raise ce.ComputeNotFound(reason=f"Flavor {flavor_id} has no extra specs with key {key}.")
    return JSONResponse({key: flavor.extra_specs[key]})


@router.post("/flavors")
async def create_flavor(request: Request, body: bodies.FlavorCreateRequest,
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    flavor = body.flavor
    if "description" in flavor.given() and not version.at_least("2.55"):
        raise unexpected("flavor", "description")
    created = await cloud(request).compute.create_flavor(
        ctx, name=flavor.name, id=flavor.id, ram=int(flavor.ram), vcpus=int(flavor.vcpus), disk=int(flavor.disk),
        ephemeral=int(flavor.ephemeral or 0), swap=int(flavor.swap or 0),
        is_public=flavor.is_public if flavor.is_public is not None else True, description=flavor.description,
        rxtx_factor=flavor.rxtx_factor)
    return JSONResponse({"flavor": views.flavor_detail(request.app.state.base_url, created, version)})


@router.delete("/flavors/{flavor_id}", status_code=202)
async def delete_flavor(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_flavor(ctx, flavor_id)
    return Response(status_code=202)
