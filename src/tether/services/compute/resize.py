"""Resize to another flavor, then confirm or revert it (VERIFY_RESIZE in between).

A VM is resized on its own host (the fake hypervisor is one host): the guest
is powered off, given the new flavor, and powered on again unless it was
stopped; its domain and interfaces stay, so its ports are untouched. Its
host must take the new flavor beside its other guests, or the resize fails
at scheduling as nova's conductor fails it (NoValidHost: the server keeps
its state and flavor, the action's events end in error). The
old flavor is kept until the user confirms (it is let go) or reverts (it
comes back). A bare-metal server cannot be resized: nova's ironic driver has
no ``migrate_disk_and_power_off``, so the action ends with that error and
the server as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain import compute_states as vm
from tether.domain.compute import Flavor, Instance
from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute import network_info, quotas
from tether.services.compute.flavors import Flavors
from tether.services.compute.guests import Guests
from tether.services.compute.instances import visible_instance
from tether.services.compute.placement import Placement
from tether.services.compute.plugging import Plugging
from tether.services.compute.server_action import Ending, ServerActions, Work
from tether.services.context import RequestContext
from tether.store import repos

if TYPE_CHECKING:
    from tether.services.network import NetworkService


@dataclass(eq=False)
class Resize:
    rt: Runtime
    actions: ServerActions
    guests: Guests
    flavors: Flavors
    plugging: Plugging
    network: NetworkService
    placement: Placement

    async def resize(self, ctx: RequestContext, uuid: str, flavor_id: str, *, disk_config: str | None = None
                     ) -> Instance:
        """``disk_config``: AUTO or MANUAL, as nova's resize sets the server's ``OS-DCF:diskConfig``."""
        try:
            flavor = await self.flavors.visible_flavor(ctx, flavor_id)
        except ce.FlavorNotFound:
            raise ce.ComputeBadRequest(reason="Unable to locate requested flavor.") from None

        async with self.actions.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            current = await repos.flavors.get(conn, instance.flavor_id)
            # nova checks the lock and the state first (its decorators), the quota in the call: a server
            # that cannot be resized now gets begin's 409 rather than a 403
            may_begin = vm.refusal(instance.vm_state, instance.task_state, "resize") is None and \
                (ctx.is_admin or not instance.locked)
            if current is not None and current.id != flavor.id and may_begin:
                await quotas.check_upsize(conn, instance.project_id, instance.user_id, current, flavor)

        def check(instance: Instance) -> None:
            if instance.flavor_id == flavor.id:
                raise ce.ComputeBadRequest(reason="When resizing, instances must change flavor!")

        return await self.actions.begin(ctx, uuid, "resize", "resize", self._resizing(flavor, ctx.request_id),
                                        nova_event="conductor_migrate_server", check=check,
                                        changes={"disk_config": disk_config} if disk_config else None)

    async def confirm(self, ctx: RequestContext, uuid: str) -> Instance:
        return await self.actions.begin(ctx, uuid, "confirm_resize", "confirmResize", self._confirming(),
                                        nova_event="compute_confirm_resize")

    async def revert(self, ctx: RequestContext, uuid: str) -> Instance:
        return await self.actions.begin(ctx, uuid, "revert_resize", "revertResize", self._reverting(),
                                        nova_event="compute_revert_resize")

    def _resizing(self, flavor: Flavor, request_id: str) -> Work:
        flavor_id = flavor.id

        async def work(instance: Instance) -> Ending:
            await self.actions.add_event(request_id, "cold_migrate")
            if not instance.is_baremetal:
                try:
                    await self.placement.check_resize(instance, flavor)
                except ce.NoValidHost as error:
                    # as nova's conductor re-raises it once it has recorded the scheduler's as the fault
                    raise ce.NoValidHost(reason="No valid host found for resize") from error
            await self.actions.add_event(request_id, "compute_prep_resize")
            if instance.is_baremetal:
                raise ce.NotSupportedByDriver(what="Resizing", driver="ironic")
            was_on = await self.guests.power_state(instance) != vm.SHUTDOWN
            instance = await self.actions.step(instance)  # resize_migrating
            await self.guests.power(instance, "off")
            await self.rt.checkpoint("compute.resize.before_finish")
            instance = await self.actions.step(instance)  # resize_finish
            self.guests.write_console(instance, f"[tether] resized to flavor {flavor_id}")
            if was_on:
                await self.guests.power(instance, "on")
            return Ending(changes={"flavor_id": flavor_id, "old_flavor_id": instance.flavor_id})
        return work

    def _confirming(self) -> Work:
        async def work(instance: Instance) -> Ending:
            off = await self.guests.power_state(instance) == vm.SHUTDOWN
            return Ending("done_off" if off else "done", {"old_flavor_id": None})
        return work

    def _reverting(self) -> Work:
        async def work(instance: Instance) -> Ending:
            await self.rt.checkpoint("compute.resize_revert.before_driver")
            was_on = await self.guests.power_state(instance) != vm.SHUTDOWN
            await self.guests.power(instance, "off")
            await self._plug_cached_ports(instance)
            self.guests.write_console(instance, f"[tether] reverted to flavor {instance.old_flavor_id}")
            if was_on:
                await self.guests.power(instance, "on")
            old = instance.old_flavor_id or instance.flavor_id
            return Ending("done" if was_on else "done_off", {"flavor_id": old, "old_flavor_id": None})
        return work

    async def _plug_cached_ports(self, instance: Instance) -> None:
        """The guest comes back on its old flavor with the interfaces its network info lists (nova's
        finish_revert_migration plugs them again)."""
        async with self.actions.store.begin() as conn:
            cached = await network_info.cached_vifs(conn, instance.uuid)
        for entry in cached:
            port = await self.network.find_port(entry.port_id)
            # rule 4 (seed 004): a port deleted meanwhile is not plugged again; its event drops it from the cache
            if port is None or port.device_id != instance.uuid:
                continue
            await self.plugging.plug(instance, port)
