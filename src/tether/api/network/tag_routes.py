"""/v2.0/{collection}/{id}/tags: neutron's tag sub-resource (standard-attr-tag)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.network.collections import COLLECTIONS, Collection
from tether.api.network.errors import HTTPNotFound, neutron_errors
from tether.api.network.routes import read_body
from tether.services.context import RequestContext
from tether.services.network import tags as tag_rules

router = paths.router("network")

_TAGS_BODY = openapi.obj({"tags": {"type": "array", "items": {"type": "string"}}}, ["tags"])
TAGGED = {collection.resource.plural: collection for collection in COLLECTIONS
          if "tags" in collection.resource.by_name}


def _collection(kind: str) -> Collection:
    collection = TAGGED.get(kind.replace("-", "_"))
    if collection is None:
        raise HTTPNotFound("The resource could not be found.")
    return collection


async def _owned(request: Request, ctx: RequestContext, kind: str, resource_id: str) -> str:
    """The resource's id, once the caller is known to see it (its own lookup answers NotFound otherwise)."""
    collection = _collection(kind)
    entity = await collection.get(cloud(request).network, ctx, resource_id)
    return str(entity.id)


@router.get("/{kind}/{resource_id}/tags")
async def list_tags(kind: str, resource_id: str, request: Request,
                    ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        found = await _owned(request, ctx, kind, resource_id)
        tags = await cloud(request).network.tags_of([found])
    return {"tags": tags.get(found, [])}


@router.put("/{kind}/{resource_id}/tags",
            openapi_extra=openapi.extra(openapi.json_body(_TAGS_BODY)))
async def replace_tags(kind: str, resource_id: str, request: Request,
                       ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    with neutron_errors():
        tags = tag_rules.check_tags(await read_body(request))
        found = await _owned(request, ctx, kind, resource_id)
        await cloud(request).network.replace_tags(ctx, kind, found, tags)
    return {"tags": tags}


@router.delete("/{kind}/{resource_id}/tags", status_code=204)
async def remove_all_tags(kind: str, resource_id: str, request: Request,
                          ctx: RequestContext = Depends(caller)) -> Response:
    with neutron_errors():
        found = await _owned(request, ctx, kind, resource_id)
        await cloud(request).network.remove_all_tags(ctx, found)
    return Response(status_code=204)


@router.get("/{kind}/{resource_id}/tags/{tag}", status_code=204)
async def check_tag(kind: str, resource_id: str, tag: str, request: Request,
                    ctx: RequestContext = Depends(caller)) -> Response:
    with neutron_errors():
        found = await _owned(request, ctx, kind, resource_id)
        await cloud(request).network.has_tag(found, tag)
    return Response(status_code=204)


@router.put("/{kind}/{resource_id}/tags/{tag}", status_code=201)
async def add_tag(kind: str, resource_id: str, tag: str, request: Request,
                  ctx: RequestContext = Depends(caller)) -> Response:
    with neutron_errors():
        tag_rules.check_tag(tag)
        found = await _owned(request, ctx, kind, resource_id)
        await cloud(request).network.add_tag(ctx, kind, found, tag)
    return JSONResponse(None, status_code=201)


@router.delete("/{kind}/{resource_id}/tags/{tag}", status_code=204)
async def remove_tag(kind: str, resource_id: str, tag: str, request: Request,
                     ctx: RequestContext = Depends(caller)) -> Response:
    with neutron_errors():
        found = await _owned(request, ctx, kind, resource_id)
        await cloud(request).network.remove_tag(ctx, found, tag)
    return Response(status_code=204)
