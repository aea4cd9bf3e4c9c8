"""Deactivate and reactivate an image (``POST /v2/images/{id}/actions/...``): its data stays, but only
admins may download a deactivated image. The owner's project members or an admin may do it, as in
glance's default policy."""

from __future__ import annotations

from tether.domain import image_states as states
from tether.domain.image import Image
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.image import access
from tether.store import repos
from tether.store.database import Store


class ImageActivation:
    """``ImageActivation(store, runtime)``."""

    def __init__(self, store: Store, runtime: Runtime) -> None:
        self.store = store
        self.rt = runtime

    async def deactivate(self, ctx: RequestContext, image_id: str) -> Image:
        return await self._apply(ctx, image_id, "deactivate")

    async def reactivate(self, ctx: RequestContext, image_id: str) -> Image:
        return await self._apply(ctx, image_id, "reactivate")

    async def _apply(self, ctx: RequestContext, image_id: str, verb: str) -> Image:
        async with self.store.begin() as conn:
            image = await access.image_to_change(conn, ctx, image_id, verb)
            status = states.next_status(image.status, verb)
            if status != image.status:
                await repos.images.update(conn, image_id, status=status, updated_at=self.rt.now())
        return image
