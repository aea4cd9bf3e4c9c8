"""An image's data: upload (``PUT .../file``), stage and ``glance-direct`` import, download.

Each transfer is three short steps: a transaction that moves the status
(queued -> saving, say), the bytes streamed to disk outside any transaction,
and a transaction that records what arrived. If the bytes never all arrive,
glance's ``_restore`` puts the image back to queued, and it stays listed. If
the image was deleted meanwhile, the data is removed and the caller told so
(glance's 410).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tether.domain import image_states as states
from tether.domain.errors import image as errors
from tether.domain.image import Image, ImageData, byte_range, check_can_activate
from tether.drivers.image_files import ImageFiles
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.image import access
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

# What ``GET /v2/info/import`` advertises and ``POST .../import`` accepts.
IMPORT_METHODS = ("glance-direct",)


@dataclass(frozen=True)
class Download:
    """The bytes of an image, or of one range of them (``start`` and ``length``)."""

    image: Image
    chunks: Iterator[bytes]
    start: int
    length: int


class ImageDataTransfer:
    """``ImageDataTransfer(store, runtime, files)``."""

    def __init__(self, store: Store, runtime: Runtime, files: ImageFiles) -> None:
        self.store = store
        self.rt = runtime
        self.files = files

    async def upload(self, ctx: RequestContext, image_id: str, chunks: AsyncIterable[bytes]) -> Image:
        """``PUT /v2/images/{id}/file``: store the data; the image goes active with its size and hashes."""
        await self._begin(ctx, image_id, "upload", "upload_image", need_formats=True)
        try:
            data = await self.files.store(image_id, chunks)
        except BaseException:
            await self._restore(image_id, states.SAVING)
            raise
        return await self._finish(image_id, data, "uploaded")

    async def stage(self, ctx: RequestContext, image_id: str, chunks: AsyncIterable[bytes]) -> Image:
        """``PUT /v2/images/{id}/stage``: keep the data aside for an import; the image is ``uploading``."""
        await self._begin(ctx, image_id, "stage", "modify_image", need_formats=False)
        try:
            size = (await self.files.stage(image_id, chunks)).size
        except BaseException:
            await self._restore(image_id, states.UPLOADING)
            self.files.discard_staged(image_id)
            raise
        async with self.store.begin() as conn:
            image = await repos.images.get(conn, image_id)
            if image is None:
                self.files.discard_staged(image_id)
                raise errors.ImageGone(image_id=image_id)
            await repos.images.update(conn, image_id, size=size, updated_at=self.rt.now())
        return image

    async def import_image(self, ctx: RequestContext, image_id: str, method: str) -> None:
        """``POST /v2/images/{id}/import`` with ``glance-direct``: the staged data goes into the store."""
        if method not in IMPORT_METHODS:
            raise errors.ImageBadRequest(reason=f"Unknown import method name '{method}'.")
        async with self.store.begin() as conn:
            image = await access.image_to_change(conn, ctx, image_id, "import_image")
            if image.status == states.ACTIVE:
                raise errors.ImageConflict(reason="Image with status active cannot be target for import")
            if image.status != states.UPLOADING:
                raise errors.ImageConflict(reason="Image needs to be staged before 'glance-direct' method can be "
                                                  "used")
            for attribute in ("container_format", "disk_format"):
                if not getattr(image, attribute):
                    raise errors.ImageConflict(reason=f"'{attribute}' needs to be set before import")
            await self._move(conn, image, "import")
        try:
            data = self.files.import_staged(image_id)
        except BaseException:
            await self._restore(image_id, states.IMPORTING)
            self.files.discard_staged(image_id)
            raise
        await self._finish(image_id, data, "imported")

    async def download(self, ctx: RequestContext, image_id: str,
                       span: tuple[int | None, int | None] | None = None) -> Download | None:
        """The image's bytes, or those of ``span`` (a ``Range``'s first and last), or None when it has
        none (glance's 204). A deactivated image's data is for admins only."""
        async with self.store.begin() as conn:
            image = await access.visible_image(conn, ctx, image_id)
        if image.status == states.DEACTIVATED and not ctx.is_admin:
            raise errors.ImageForbidden(reason="The requested image has been deactivated. Image data download is "
                                               "forbidden.")
        if image.size is None or image.status not in (states.ACTIVE, states.DEACTIVATED):
            return None
        start, end = (0, image.size) if span is None else byte_range(*span, image.size)
        try:
            # opened now: a delete from here on does not cut the answer short
            chunks = self.files.read(image_id, start, end - start)
        except FileNotFoundError:
            return None
        return Download(image, chunks, start, end - start)

    async def recover(self) -> None:
        """A restart finds transfers that died with the process: back to queued, as glance's restore does
        (rule 3: no transient state without an exit)."""
        async with self.store.begin() as conn:
            for status in states.IN_FLIGHT:
                for image in await repos.images.find(conn, status=status):
                    await self._move(conn, image, "restore")
                    self.files.delete(image.id)

    # -- steps --------------------------------------------------------------

    async def _begin(self, ctx: RequestContext, image_id: str, verb: str, action: str, *, need_formats: bool) -> None:
        async with self.store.begin() as conn:
            image = await access.image_to_change(conn, ctx, image_id, action)
            if need_formats and image.status == states.QUEUED:
                check_can_activate(image.disk_format, image.container_format)
            await self._move(conn, image, verb)

    async def _finish(self, image_id: str, data: ImageData, verb: str) -> Image:
        async with self.store.begin() as conn:
            image = await repos.images.get(conn, image_id)
            if image is None:
                self.files.delete(image_id)
                raise errors.ImageGone(image_id=image_id)
            status = states.next_status(image.status, verb)
            now = self.rt.now()
            await repos.images.update(conn, image_id, status=status, size=data.size, checksum=data.checksum,
                                      os_hash_algo=data.os_hash_algo, os_hash_value=data.os_hash_value,
                                      updated_at=now)
        return replace(image, status=status, size=data.size, checksum=data.checksum, os_hash_algo=data.os_hash_algo,
                       os_hash_value=data.os_hash_value, updated_at=now)

    async def _restore(self, image_id: str, expected: str) -> None:
        async with self.store.begin() as conn:
            image = await repos.images.get(conn, image_id)
            if image is not None and image.status == expected:
                await self._move(conn, image, "restore")

    async def _move(self, conn: StoreConnection, image: Image, verb: str) -> None:
        after = states.next_status(image.status, verb)
        # compare-and-set: of two transfers that both read the status, only one moves it
        moved = await repos.images.update_where(conn, {"id": image.id, "status": image.status}, status=after,
                                                updated_at=self.rt.now())
        if not moved:
            raise errors.InvalidImageStatusTransition(before=image.status, after=after)
