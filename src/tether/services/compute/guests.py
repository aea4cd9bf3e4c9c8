"""What a server action does to the machine itself: a guest on the fake hypervisor, or a bare-metal node.

Nova's virt drivers in one place: the libvirt-like fake for VMs, ironic's
driver for bare metal. Each method is one driver call; the actions put their
checkpoints between them. What ironic's driver cannot do (pause, suspend,
a console log) raises ``NotSupportedByDriver``,
which ends the action as nova's compute manager ends it on NotImplementedError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.drivers import hypervisor as hv
from tether.drivers.hypervisor import FakeHypervisor
from tether.services.compute.instances import acting_for

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService


_NODE_POWER = {bms.POWER_ON: vm.RUNNING, bms.POWER_OFF: vm.SHUTDOWN}


@dataclass(eq=False)
class Guests:
    hypervisor: FakeHypervisor
    baremetal: BaremetalService

    async def power_state(self, instance: Instance) -> int:
        """The power state as the driver reports it now (nova's ``_sync_power_states`` reads the same)."""
        if instance.is_baremetal:
            node = await self.baremetal.find_node(instance.node or "") if instance.node else None
            return _NODE_POWER.get(node.power_state, vm.NOSTATE) if node is not None else vm.NOSTATE
        return self.hypervisor.power(instance.host or "", instance.uuid)

    async def power(self, instance: Instance, target: str) -> None:
        """``target``: "on", "off" or "reboot" (a power cycle)."""
        if instance.is_baremetal:
            ironic_target = {"on": "power on", "off": "power off", "reboot": "rebooting"}[target]
            node = await self.baremetal.set_power_state(acting_for(instance), instance.node or "", ironic_target)
            if node.last_error and node.target_power_state is None and \
                    _NODE_POWER.get(node.power_state) != (vm.SHUTDOWN if target == "off" else vm.RUNNING):
                raise ce.ComputeError(message=node.last_error)
            return
        state = vm.SHUTDOWN if target == "off" else vm.RUNNING
        why = {"on": "boot", "off": "stop", "reboot": "reboot"}[target]
        self._set_guest_power(instance, state, why)

    def freeze(self, instance: Instance, what: str) -> None:
        """pause, unpause, suspend, resume: a guest's memory frozen or saved; ironic cannot."""
        if instance.is_baremetal:
            raise ce.NotSupportedByDriver(what=what, driver="ironic")
        state = {"pause": vm.PAUSED_POWER, "suspend": vm.SUSPENDED_POWER}.get(what, vm.RUNNING)
        self._set_guest_power(instance, state, what)

    def write_console(self, instance: Instance, *lines: str) -> None:
        if not instance.is_baremetal:
            self.hypervisor.write_console(instance.host or "", instance.uuid, *lines)

    def console_log(self, instance: Instance) -> list[str]:
        if instance.is_baremetal:
            raise ce.NotSupportedByDriver(what="Getting the console output", driver="ironic")
        return self.hypervisor.console_log(instance.host or "", instance.uuid)

    def _set_guest_power(self, instance: Instance, state: int, why: str) -> None:
        try:
            self.hypervisor.set_power(instance.host or "", instance.uuid, state, why)
        except hv.HypervisorError as error:
            raise ce.ComputeError(message=str(error)) from None
