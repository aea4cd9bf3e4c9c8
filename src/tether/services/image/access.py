"""Who may see and change an image: glance's visibility rules with the caller's membership."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.domain import image as rules
from tether.domain.errors import image as errors
from tether.domain.image import Image
from tether.services.context import RequestContext
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


async def member_status(conn: StoreConnection, ctx: RequestContext, image: Image) -> str | None:
    """The caller's project's member status on a shared image of another project, or None."""
    if image.visibility != "shared" or ctx.project_id is None or image.owner == ctx.project_id:
        return None
    member = await repos.image_members.first(conn, image_id=image.id, member_id=ctx.project_id)
    return member.status if member is not None else None


async def visible_image(conn: StoreConnection, ctx: RequestContext, image_id: str) -> Image:
    """The image, if the caller may see it; otherwise glance's 404."""
    image = await repos.images.get(conn, image_id)
    if image is None or not rules.is_visible(image, project_id=ctx.project_id, is_admin=ctx.is_admin,
                                             member_status=await member_status(conn, ctx, image)):
        raise errors.ImageNotFound(image_id=image_id)
    return image


async def image_to_change(conn: StoreConnection, ctx: RequestContext, image_id: str, action: str) -> Image:
    """The image, if the caller may change it: unseen is 404, seen but not theirs is 403."""
    image = await visible_image(conn, ctx, image_id)
    if not ctx.can_write or not rules.is_mutable(image, project_id=ctx.project_id, is_admin=ctx.is_admin):
        raise errors.PolicyForbidden(action=action)
    return image
