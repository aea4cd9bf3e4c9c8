"""Power actions: stop, start, reboot (soft and hard), pause, unpause, suspend, resume.

Each is a ``ServerActions`` action whose work is one driver call; the power
state the instance shows afterwards is the one the driver reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute.guests import Guests
from tether.services.compute.server_action import Ending, ServerActions, Work
from tether.services.context import RequestContext

# event -> (the instance action nova records, its event, what the driver does)
_POWER = {
    "stop": ("stop", "compute_stop_instance", "off"),
    "start": ("start", "compute_start_instance", "on"),
    "reboot": ("reboot", "compute_reboot_instance", "reboot"),
    "reboot_hard": ("reboot", "compute_reboot_instance", "reboot"),
}
_FREEZE = {
    "pause": ("pause", "compute_pause_instance"),
    "unpause": ("unpause", "compute_unpause_instance"),
    "suspend": ("suspend", "compute_suspend_instance"),
    "resume": ("resume", "compute_resume_instance"),
}
REBOOT_TYPES = ("SOFT", "HARD")


@dataclass(eq=False)
class Power:
    rt: Runtime
    actions: ServerActions
    guests: Guests

    async def power_action(self, ctx: RequestContext, uuid: str, event: str) -> Instance:
        """stop, start, reboot, reboot_hard, pause, unpause, suspend or resume."""
        if event in _POWER:
            record, nova_event, target = _POWER[event]
            return await self.actions.begin(ctx, uuid, event, record, self._powering(target, event),
                                            nova_event=nova_event)
        record, nova_event = _FREEZE[event]
        return await self.actions.begin(ctx, uuid, event, record, self._freezing(event), nova_event=nova_event)

    async def reboot(self, ctx: RequestContext, uuid: str, reboot_type: str) -> Instance:
        if reboot_type not in REBOOT_TYPES:
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute type. Value: {reboot_type}. "
                                              f"'{reboot_type}' is not one of ['HARD', 'Hard', 'SOFT', 'Soft']")
        return await self.power_action(ctx, uuid, "reboot_hard" if reboot_type == "HARD" else "reboot")

    def _powering(self, target: str, event: str) -> Work:
        async def work(instance: Instance) -> Ending:
            await self.rt.checkpoint("compute.power_action.before_driver")
            await self.guests.power(instance, target)
            return Ending()
        return work

    def _freezing(self, event: str) -> Work:
        async def work(instance: Instance) -> Ending:
            await self.rt.checkpoint("compute.power_action.before_driver")
            self.guests.freeze(instance, event)
            return Ending()
        return work
