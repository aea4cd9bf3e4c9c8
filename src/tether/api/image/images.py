"""Glance v2's image records: list, show, create, patch, delete."""

from __future__ import annotations

import urllib.parse
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.api.envelopes import error_body
from tether.api.image import listing, patch, schemas
from tether.api.image.bodies import request_body
from tether.api.image.views import IMAGES_SCHEMA, image_href, image_view
from tether.domain import image as rules
from tether.domain.errors.image import ImageBadRequest, ImageForbidden, ImageNotFound, PolicyForbidden
from tether.services.context import RequestContext
from tether.services.image import ImageService

router = paths.router("image")

# Base attributes a create body may give, by the service's keyword names.
CREATE_ATTRIBUTES = ("name", "id", "visibility", "disk_format", "container_format", "min_disk", "min_ram",
                     "protected", "os_hidden", "tags")
# glance's ``_disallowed_properties``: refused by name before anything else is read.
DISALLOWED = ("direct_url", "self", "file", "schema", "stores")
# Glance's default visibility for a new image (since Ocata): owner and members.
DEFAULT_VISIBILITY = "shared"


def _create_schema() -> openapi.Schema:
    """glance's image schema without its read-only attributes: what a create body may carry."""
    schema = schemas.image_schema()
    writable = {name: spec for name, spec in schema["properties"].items() if not spec.get("readOnly")}
    return {"type": "object", "properties": writable, "additionalProperties": schema["additionalProperties"]}


LIST_QUERY = openapi.extra(params=openapi.query({
    "limit": openapi.LIMIT, "marker": openapi.STRING, "sort_key": {"type": "string", "enum": list(listing.SORT_KEYS)},
    "sort_dir": openapi.SORT_DIR, "sort": openapi.STRING, "name": openapi.STRING, "id": openapi.STRING,
    "status": openapi.STRING, "visibility": {"type": "string", "enum": list(rules.LIST_VISIBILITIES)},
    "owner": openapi.STRING, "tag": openapi.STRING, "protected": {"type": "boolean"},
    "os_hidden": {"type": "boolean"}, "member_status": {"type": "string", "enum": list(listing.MEMBER_STATUSES)},
    "disk_format": openapi.STRING, "container_format": openapi.STRING, "size_min": {"type": "integer"},
    "size_max": {"type": "integer"}, "created_at": openapi.STRING, "updated_at": openapi.STRING,
}))


def _images(request: Request) -> ImageService:
    return cloud(request).image




@router.get("/images", openapi_extra=LIST_QUERY)
async def list_images(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    params = request.query_params.multi_items()
    query = listing.parse_query(params)
    marker = None
    if query.marker is not None:
        try:
            marker = await _images(request).get_image(ctx, query.marker)
        except ImageNotFound:
            raise ImageBadRequest(reason=f"No image found with ID {query.marker}") from None
    shown = await _images(request).page_images(ctx, listing.paged(query), marker=marker,
                                               keep=query.keeps if query.checks else None, **query.service)
    kept = {name: value for name, value in dict(params).items() if name != "marker"}
    body: dict[str, Any] = {"images": [image_view(image) for image in shown], "first": "/v2/images",
                            "schema": IMAGES_SCHEMA}
    if kept:
        body["first"] = f"/v2/images?{urllib.parse.urlencode(kept)}"
    if shown and len(shown) == query.limit:
        body["next"] = f"/v2/images?{urllib.parse.urlencode({**kept, 'marker': shown[-1].id})}"
    return body


@router.get("/images/{image_id}")
async def show_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return image_view(await _images(request).get_image(ctx, image_id))


@router.get("/images/", include_in_schema=False)
@router.delete("/images/", include_in_schema=False)
async def no_image_id(ctx: RequestContext = Depends(caller)) -> Response:
    """An empty image id names no image (glance's router answers 404, not the list)."""
    raise ImageNotFound("The resource could not be found.")


@router.post("/images", status_code=201, openapi_extra=openapi.extra(openapi.json_body(_create_schema())))
async def create_image(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = await request_body(request)
    if not isinstance(body, dict):
        raise ImageBadRequest(reason="Provided object does not match schema 'image': "
                                     f"{body!r} is not of type 'object'")
    for name in DISALLOWED:
        if name in body:
            raise ImageForbidden(reason=f"Attribute '{name}' is read-only.")
    body = dict(body)
    owner = body.pop("owner", None)
    attributes = {name: body.pop(name) for name in CREATE_ATTRIBUTES if name in body}
    attributes.setdefault("visibility", DEFAULT_VISIBILITY)
    for name in body:
        rules.check_property_name(name)  # read-only, reserved and over-long names, in glance's words
    image = await _images(request).create_image(ctx, **attributes, properties=body, owner=owner)
    base = request.app.state.base_url
    return JSONResponse(image_view(image), status_code=201,
                        headers={"Location": f"{base}/image{image_href(image.id)}"})


@router.patch("/images/{image_id}",
              openapi_extra=openapi.extra(openapi.json_body(openapi.JSON_PATCH, *patch.MEDIA_TYPES)))
async def update_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Any:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type not in patch.MEDIA_TYPES:
        allowed = ", ".join(sorted(patch.MEDIA_TYPES))
        return JSONResponse(error_body("image", 415, f"Image PATCH expects Content-Type one of: {allowed}"),
                            status_code=415, headers={"Accept-Patch": allowed})
    changes = patch.parse(await request_body(request), media_type)
    service = _images(request)
    image = await service.get_image(ctx, image_id)
    if not ctx.can_write or not rules.is_mutable(image, project_id=ctx.project_id, is_admin=ctx.is_admin):
        # glance checks that the caller may modify the image before it looks at any change
        raise PolicyForbidden(action="modify_image")
    updates = patch.apply(image, changes, media_type, ctx)
    return image_view(await service.update_image(ctx, image_id, **updates))


@router.delete("/images/{image_id}", status_code=204)
async def delete_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await _images(request).delete_image(ctx, image_id)
    return Response(status_code=204)
