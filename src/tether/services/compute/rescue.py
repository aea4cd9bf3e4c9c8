"""Rescue and unrescue: the guest booted from a rescue image with its own disk beside it, and back.

Bare metal is declined as nova's ironic driver declines it for a node
without a rescue interface (the fake hardware has none): the action ends in
error and the server stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.domain.errors import image as ie
from tether.runtime.runtime import Runtime
from tether.services.compute.guests import Guests
from tether.services.compute.server_action import Ending, ServerActions, Work
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.services.image import ImageService


@dataclass(eq=False)
class Rescue:
    rt: Runtime
    actions: ServerActions
    guests: Guests
    image: ImageService

    async def rescue(self, ctx: RequestContext, uuid: str, rescue_image: str | None = None) -> Instance:
        if rescue_image is not None:
            try:
                await self.image.get_image(ctx, rescue_image)
            except ie.ImageNotFound:
                raise ce.ComputeBadRequest(reason=f"Image {rescue_image} could not be found.") from None
        return await self.actions.begin(ctx, uuid, "rescue", "rescue", self._rebooting("rescue", rescue_image),
                                        nova_event="compute_rescue_instance")

    async def unrescue(self, ctx: RequestContext, uuid: str) -> Instance:
        return await self.actions.begin(ctx, uuid, "unrescue", "unrescue", self._rebooting("unrescue", None),
                                        nova_event="compute_unrescue_instance")

    def _rebooting(self, what: str, rescue_image: str | None) -> Work:
        async def work(instance: Instance) -> Ending:
            if instance.is_baremetal:
                raise ce.NotSupportedByDriver(what="Rescue" if what == "rescue" else "Unrescue", driver="ironic")
            await self.rt.checkpoint("compute.rescue.before_driver")
            image = rescue_image or instance.image_id
            line = f"[tether] booting rescue image {image}" if what == "rescue" else "[tether] booting own disk"
            self.guests.write_console(instance, line)
            await self.guests.power(instance, "reboot")
            return Ending()
        return work
