"""createImage and createBackup: a snapshot of a server's disk, made an image through the image service's
public operations (a backup rotates out the server's older backups of its type).

As nova does, the image is created (queued) before the answer, so the 202
carries its id; the snapshot then writes its data and the image becomes
active. A snapshot that fails leaves the server as it was and deletes the
half-made image (nova's ``_snapshot_instance`` cleanup).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.ids import new_uuid
from tether.runtime.runtime import Runtime
from tether.services.compute.instances import acting_for, visible_instance
from tether.services.compute.server_action import Ending, ServerActions, Work, refuse_if_locked
from tether.services.context import RequestContext

if TYPE_CHECKING:
    import random

    from tether.services.image import ImageService

# The fake guest's disk: what a snapshot of it writes (its size is the image's size).
SNAPSHOT_SIZE = 1024 * 1024
# How long copying the fake guest's disk takes before its upload: a real snapshot is not instant, and while
# it runs the image is queued (nova's "SAVING"), which clients wait for and may delete it in.
SNAPSHOT_SECONDS = 2.0
_CHUNK = 64 * 1024


async def _disk(uuid: str) -> AsyncIterator[bytes]:
    """The guest's disk as the image service stores it, a chunk at a time: its own bytes, so that a
    snapshot's checksum is true and differs from another server's."""
    block = (uuid.encode() * (_CHUNK // len(uuid) + 1))[:_CHUNK]
    for _ in range(SNAPSHOT_SIZE // _CHUNK):
        yield block


@dataclass(eq=False)
class Snapshot:
    rt: Runtime
    rng: random.Random
    actions: ServerActions
    image: ImageService

    async def create_backup(self, ctx: RequestContext, uuid: str, name: str, backup_type: str, rotation: int,
                            metadata: dict[str, str] | None = None) -> str:
        """createBackup: a snapshot with image_type "backup" and its ``backup_type``; once it is written, the
        server's oldest backups of that type beyond ``rotation`` are deleted (nova's _rotate_backups)."""
        properties = {**(metadata or {}), "image_type": "backup", "backup_type": backup_type}
        return await self.create_image(ctx, uuid, name, properties, backup=(backup_type, rotation))

    async def create_image(self, ctx: RequestContext, uuid: str, name: str,
                           metadata: dict[str, str] | None = None, *,
                           backup: tuple[str, int] | None = None) -> str:
        """Start a snapshot (``backup``: its type and rotation, for a backup); returns the new image's id."""
        async with self.actions.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
        refuse_if_locked(ctx, instance)
        base = None
        if instance.image_id:
            with contextlib.suppress(TetherError):
                base = await self.image.get_image(acting_for(instance), instance.image_id)
        # as nova's _create_image: the user's metadata last, so it may name its own image_type
        properties = {"image_type": "snapshot", "instance_uuid": uuid, "user_id": ctx.user_id, **(metadata or {})}
        if instance.image_id:
            properties["base_image_ref"] = instance.image_id
        image_id = new_uuid(self.rng)
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:os-create-backup" if backup else
                                      "os_compute_api:servers:create_image")
        try:
            await self.image.create_image(
                ctx, id=image_id, name=name, properties=properties,
                disk_format=base.disk_format if base is not None else "qcow2",
                container_format=base.container_format if base is not None else "bare",
                min_disk=base.min_disk if base is not None else 0, min_ram=base.min_ram if base is not None else 0)
        except TetherError as error:
            raise ce.ComputeBadRequest(reason=error.message) from None
        try:
            if backup is None:
                await self.actions.begin(ctx, uuid, "snapshot", "createImage", self._work(image_id),
                                         nova_event="compute_snapshot_instance")
            else:
                await self.actions.begin(ctx, uuid, "backup", "createBackup", self._work(image_id, backup),
                                         nova_event="compute_backup_instance")
        except Exception:
            # never a partial change: the refused snapshot leaves no image behind
            with contextlib.suppress(TetherError):
                await self.image.delete_image(ctx, image_id)
            raise
        return image_id

    def _work(self, image_id: str, backup: tuple[str, int] | None = None) -> Work:
        async def work(instance: Instance) -> Ending:
            instance = await self.actions.step(instance)  # image_uploading
            await self.rt.sleep(SNAPSHOT_SECONDS)
            await self.rt.checkpoint("compute.snapshot.before_upload")
            try:
                await self.image.data.upload(acting_for(instance), image_id, _disk(instance.uuid))
            except Exception:
                with contextlib.suppress(TetherError):
                    await self.image.delete_image(acting_for(instance), image_id)
                raise
            if backup is not None:
                await self._rotate_backups(instance, *backup)
            return Ending()
        return work

    async def _rotate_backups(self, instance: Instance, backup_type: str, rotation: int) -> None:
        """Keep the newest ``rotation`` backups of this type of the server; delete the older ones."""
        owner = acting_for(instance)
        backups = [image for image in await self.image.list_images(owner, member_status="all")
                   if image.properties.get("image_type") == "backup"
                   and image.properties.get("backup_type") == backup_type
                   and image.properties.get("instance_uuid") == instance.uuid]
        backups.sort(key=lambda image: (image.created_at, image.id), reverse=True)
        for excess in backups[rotation:]:
            with contextlib.suppress(TetherError):  # nova's rotation goes on past an image it cannot delete
                await self.image.delete_image(owner, excess.id)
