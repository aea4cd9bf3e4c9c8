"""Rebuild: the server's disk replaced with an image, its name, metadata and addresses kept or changed.

A VM's guest is re-imaged and booted again on the same host, its interfaces
left plugged. A bare-metal server is redeployed on the SAME node through
ironic's ``rebuild`` verb, as nova's ironic driver does: the node keeps its
VIFs, so the server keeps its ports and addresses (rule 2: nothing is
released, because nothing changed owner).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import baremetal as be
from tether.domain.errors import compute as ce
from tether.domain.errors import image as ie
from tether.runtime.runtime import Runtime
from tether.services.compute import quotas
from tether.services.compute.guests import Guests
from tether.services.compute.instances import acting_for
from tether.services.compute.keypairs import boot_key
from tether.services.compute.node_vanished import NodeVanished, node_still_ours
from tether.services.compute.server_action import ActionInterrupted, Ending, ServerActions, Work
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.image import ImageService


class PreserveEphemeralNotSupported(ce.ComputeNotImplemented):
    template = "The current driver does not support preserving ephemeral partitions."


@dataclass(eq=False)
class Rebuild:
    rt: Runtime
    actions: ServerActions
    guests: Guests
    _: KW_ONLY
    image: ImageService
    baremetal: BaremetalService
    node_poll_interval: float

    async def rebuild(self, ctx: RequestContext, uuid: str, image_id: str, *, preserve_ephemeral: bool = False,
                      **changes: Any) -> Instance:
        """``changes``: name, metadata, access_ip_v4/6, description, key_name, user_data, injected_files and
        disk_config, as the API validated them."""
        try:
            image = await self.image.get_image(ctx, image_id)
        except ie.ImageNotFound:
            raise ce.ComputeBadRequest(reason="Cannot find image for rebuild") from None
        if image.status != "active":
            raise ce.ComputeBadRequest(reason=f"Image {image_id} is not active.")
        if changes.get("key_name") is not None or changes.get("injected_files"):
            async with self.actions.store.begin() as conn:
                if changes.get("key_name") is not None:
                    await boot_key(conn, ctx.user_id, changes["key_name"])
                await quotas.check_injected_files(conn, ctx.project_id or "", ctx.user_id,
                                                  changes.get("injected_files") or [])
        return await self.actions.begin(ctx, uuid, "rebuild", "rebuild", self._work(preserve_ephemeral),
                                        nova_event="compute_rebuild_instance",
                                        changes={"image_id": image_id, **changes})

    def _work(self, preserve_ephemeral: bool) -> Work:
        async def work(instance: Instance) -> Ending:
            stopped = instance.vm_state == vm.STOPPED
            await self.rt.checkpoint("compute.rebuild.before_driver")
            if instance.is_baremetal:
                await self._redeploy(instance, preserve_ephemeral)
            else:
                if preserve_ephemeral:
                    raise PreserveEphemeralNotSupported()
                self.guests.write_console(instance, "[tether] rebuilding from image "
                                                    f"{instance.image_id}")
                await self.guests.power(instance, "reboot")
                await self.actions.step(instance)
            if stopped:  # nova powers a server that was stopped off again after its rebuild
                await self.guests.power(instance, "off")
            return Ending()
        return work

    async def _redeploy(self, instance: Instance, preserve_ephemeral: bool) -> None:
        node_uuid = instance.node or ""
        self.rt.note(f"server {instance.name}: rebuilding node {node_uuid} (preserve_ephemeral="
                     f"{preserve_ephemeral})")
        try:
            await self.baremetal.set_provision_state(acting_for(instance), node_uuid, "rebuild")
        except be.NodeNotFound:
            raise ce.InstanceDeployFailure(instance_uuid=instance.uuid,
                                           reason=str(NodeVanished(node_uuid, "deleted"))) from None
        except be.BaremetalError as error:
            raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=error.message) from None
        instance = await self.actions.step(instance)
        while True:
            await self.rt.checkpoint("compute.rebuild.wait_active")
            try:
                node = await node_still_ours(self.baremetal, instance, node_uuid)
            except NodeVanished as vanished:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=str(vanished)) from None
            if node.provision_state == bms.ACTIVE:
                return
            if node.provision_state == bms.DEPLOYFAIL:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid, reason=node.last_error or "rebuild failed")
            current = await self.actions.instances.live(instance.uuid)
            if current is None or current.task_state != vm.REBUILD_SPAWNING:
                raise ActionInterrupted(f"instance {instance.uuid} moved on during its rebuild")
            if current.deadline is not None and self.rt.now() >= current.deadline:
                raise ce.InstanceDeployFailure(instance_uuid=instance.uuid,
                                               reason=f"timed out waiting for node {node_uuid} to redeploy")
            await self.rt.wait(self.baremetal.node_key(node_uuid), self.node_poll_interval, guard=True)
