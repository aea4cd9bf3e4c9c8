"""Image members (``/v2/images/{id}/members``): the owner offers a shared image to a project,
which accepts or rejects it; after glance's ``image_members.py`` and its default policy.

Only shared images have members. The owner (or an admin) adds and removes
them; only the member itself sets its status. The owner sees every member,
a member only its own membership.
"""

from __future__ import annotations

from dataclasses import replace

from tether.domain import image as rules
from tether.domain.errors import image as errors
from tether.domain.image import Image, ImageMember
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.image import access
from tether.store import repos
from tether.store.database import Store


def _shared(image: Image) -> None:
    if image.visibility != "shared":
        raise errors.ImageForbidden(reason="Only shared images have members.")


def _sees(ctx: RequestContext, image: Image, member_id: str) -> bool:
    return ctx.is_admin or ctx.project_id in (image.owner, member_id)


class ImageMembers:
    """``ImageMembers(store, runtime)``."""

    def __init__(self, store: Store, runtime: Runtime) -> None:
        self.store = store
        self.rt = runtime

    async def add(self, ctx: RequestContext, image_id: str, member_id: str) -> ImageMember:
        refused = errors.ImageForbidden(reason=f"Not allowed to create members for image {image_id}.")
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
            if image.visibility != "shared":
                raise refused
            if not ctx.can_write or not rules.is_mutable(image, project_id=ctx.project_id, is_admin=ctx.is_admin):
                raise refused
            if await repos.image_members.first(conn, image_id=image_id, member_id=member_id) is not None:
                raise errors.MemberConflict(member_id=member_id, image_id=image_id)
            now = self.rt.now()
            member = ImageMember(image_id=image_id, member_id=member_id, status="pending", created_at=now,
                                 updated_at=now)
            await repos.image_members.add(conn, member)
        return member

    async def list(self, ctx: RequestContext, image_id: str) -> list[ImageMember]:
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
            if image.visibility != "shared":
                raise errors.ImageForbidden(reason=f"Not allowed to list members for image {image_id}: Only "
                                                   "shared images have members.")
            members = await repos.image_members.find(conn, image_id=image_id)
        return sorted((member for member in members if _sees(ctx, image, member.member_id)),
                      key=lambda member: (member.created_at, member.member_id))

    async def get(self, ctx: RequestContext, image_id: str, member_id: str) -> ImageMember:
        """One membership; whatever the caller may not see is 404, so nothing leaks."""
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
            if image.visibility != "shared":
                raise errors.MemberNotFound(member_id=member_id, image_id=image_id)
            member = await repos.image_members.first(conn, image_id=image_id, member_id=member_id)
        if member is None or not _sees(ctx, image, member_id):
            raise errors.MemberNotFound(member_id=member_id, image_id=image_id)
        return member

    async def set_status(self, ctx: RequestContext, image_id: str, member_id: str, status: object) -> ImageMember:
        refused = errors.ImageForbidden(reason=f"Not allowed to update members for image {image_id}.")
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
            if image.visibility != "shared":
                raise refused
            member = await repos.image_members.first(conn, image_id=image_id, member_id=member_id)
            if member is None or not _sees(ctx, image, member_id):
                raise errors.MemberNotFound(member_id=member_id, image_id=image_id)
            # glance's modify_member policy: the owner offers, only the member (or an admin) answers
            if not ctx.is_admin and ctx.project_id != member_id:
                raise refused
            checked = rules.check_member_status(status)
            updated = replace(member, status=checked, updated_at=self.rt.now())
            await repos.image_members.update_where(conn, {"image_id": image_id, "member_id": member_id},
                                                   status=updated.status, updated_at=updated.updated_at)
        return updated

    async def remove(self, ctx: RequestContext, image_id: str, member_id: str) -> None:
        refused = errors.ImageForbidden(reason=f"Not allowed to delete members for image {image_id}.")
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
            if image.visibility != "shared":
                raise refused
            if not ctx.can_write or not rules.is_mutable(image, project_id=ctx.project_id, is_admin=ctx.is_admin):
                raise refused
            if not await repos.image_members.delete_where(conn, image_id=image_id, member_id=member_id):
                raise errors.MemberNotFound(member_id=member_id, image_id=image_id)
