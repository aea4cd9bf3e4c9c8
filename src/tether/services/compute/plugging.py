"""Where an instance's ports are really attached: guest devices on its hypervisor, or VIFs on its node.

These are the owners of the facts (rule 1): what they report is the truth that
the info cache only mirrors.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import baremetal as be
from tether.domain.errors import compute as ce
from tether.domain.network import Port
from tether.drivers.hypervisor import FakeHypervisor
from tether.services.compute.instances import acting_for

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService


@dataclass(eq=False)
class Plugging:
    hypervisor: FakeHypervisor
    baremetal: BaremetalService

    async def plug(self, instance: Instance, port: Port) -> None:
        if instance.is_baremetal:
            try:
                await self.baremetal.vif_attach(acting_for(instance), instance.node or "", port.id)
            except TetherError as error:
                failed = ce.InterfaceAttachFailed(instance_uuid=instance.uuid).message
                raise ce.ComputeConflict(reason=f"{failed}: {error.message}") from None
        else:
            self.hypervisor.plug(instance.host or "", instance.uuid, port.id, port.mac_address)

    async def unplug(self, instance: Instance, port_id: str) -> None:
        if instance.is_baremetal:
            with contextlib.suppress(be.VifNotAttached, be.NodeNotFound):
                await self.baremetal.vif_detach(acting_for(instance), instance.node or "", port_id)
        else:
            self.hypervisor.unplug(instance.host or "", instance.uuid, port_id)

    async def plugged_ports(self, instance: Instance) -> list[str]:
        """The ports really attached: the node's VIF list, or the guest's interfaces."""
        if instance.is_baremetal:
            node = await self.baremetal.find_node(instance.node) if instance.node else None
            if node is None or node.instance_uuid != instance.uuid:
                return []
            return await self.baremetal.vif_list(acting_for(instance), node.uuid)
        return [iface.port_id for iface in self.hypervisor.interfaces(instance_uuid=instance.uuid)]

    async def still_placed(self, instance: Instance) -> bool:
        """Whether the instance still has its host, or its node still names it."""
        if not instance.is_baremetal:
            return instance.host is not None
        node = await self.baremetal.find_node(instance.node) if instance.node else None
        return node is not None and node.instance_uuid == instance.uuid
