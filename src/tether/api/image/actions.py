"""``POST /v2/images/{id}/actions/deactivate|reactivate``."""

from __future__ import annotations

from fastapi import Depends, Request, Response

from tether.api import openapi, paths
from tether.api.deps import caller, cloud
from tether.services.context import RequestContext

router = paths.router("image")


@router.post("/images/{image_id}/actions/deactivate", status_code=204,
              openapi_extra=openapi.extra(openapi.json_body(openapi.obj({}, closed=False), required=False)))
async def deactivate_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).image.activation.deactivate(ctx, image_id)
    return Response(status_code=204)


@router.post("/images/{image_id}/actions/reactivate", status_code=204,
              openapi_extra=openapi.extra(openapi.json_body(openapi.obj({}, closed=False), required=False)))
async def reactivate_image(image_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).image.activation.reactivate(ctx, image_id)
    return Response(status_code=204)
