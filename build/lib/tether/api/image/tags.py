"""PUT and DELETE /v2/images/{id}/tags/{tag}: one tag at a time, as the CLI's ``image unset --tag`` uses."""

from __future__ import annotations

from fastapi import Depends, Request, Response

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.domain import image as rules
from tether.domain.errors.image import ImageError, ImageForbidden, ImageNotFound
from tether.domain.image import Image
from tether.services.context import RequestContext

router = paths.router("image")


class TagNotFound(ImageError):
    status = 404
    template = "The resource could not be found."


async def _image(request: Request, ctx: RequestContext, image_id: str, verb: str) -> Image:
    try:
        image = await cloud(request).image.get_image(ctx, image_id)
    except ImageNotFound:
        raise ImageNotFound(f"Image {image_id} not found.") from None
    if not ctx.can_write or not rules.is_mutable(image, project_id=ctx.project_id, is_admin=ctx.is_admin):
        raise ImageForbidden(reason=f"Not allowed to {verb} tags for image {image_id}.")
    return image


@router.put("/images/{image_id}/tags/{tag}", status_code=204)
async def add_tag(image_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    rules.check_tags([tag])
    image = await _image(request, ctx, image_id, "update")
    tags = image.tags if tag in image.tags else [*image.tags, tag]
    await cloud(request).image.update_image(ctx, image_id, tags=tags)
    return Response(status_code=204)


@router.delete("/images/{image_id}/tags/{tag}", status_code=204)
async def delete_tag(image_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    image = await _image(request, ctx, image_id, "delete")
    if tag not in image.tags:
        raise TagNotFound()
    await cloud(request).image.update_image(ctx, image_id, tags=[t for t in image.tags if t != tag])
    return Response(status_code=204)
