"""The image service (glance v2): its operations, assembled."""

from __future__ import annotations

import random

from tether.drivers.image_files import ImageFiles
from tether.runtime.runtime import Runtime
from tether.services.image.activation import ImageActivation
from tether.services.image.data import ImageDataTransfer
from tether.services.image.members import ImageMembers
from tether.services.image.metadefs import MetadefCatalog
from tether.services.image.records import ImageRecords
from tether.services.image.tasks import ImageTasks
from tether.store.database import Store


class ImageService:
    """``ImageService(store, runtime, rng, files)``: records, data, members, (de)activation, the
    metadata definitions catalog and tasks.

    ``create_image``, ``get_image``, ``list_images``, ``update_image`` and
    ``delete_image`` are the records' own, as other services call them.
    """

    def __init__(self, store: Store, runtime: Runtime, rng: random.Random, files: ImageFiles | None = None) -> None:
        self.store = store
        self.files = files if files is not None else ImageFiles()
        self.records = ImageRecords(store, runtime, rng, self.files)
        self.data = ImageDataTransfer(store, runtime, self.files)
        self.members = ImageMembers(store, runtime)
        self.activation = ImageActivation(store, runtime)
        self.metadefs = MetadefCatalog(store, runtime)
        self.tasks = ImageTasks(store, runtime, rng)
        self.create_image = self.records.create_image
        self.get_image = self.records.get_image
        self.list_images = self.records.list_images
        self.page_images = self.records.page_images
        self.update_image = self.records.update_image
        self.delete_image = self.records.delete_image

    async def recover(self) -> None:
        await self.data.recover()
