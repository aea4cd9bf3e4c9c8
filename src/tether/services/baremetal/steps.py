"""The steps of the bare-metal service that an emulated upstream bug replaces (``tether.emulation``)."""

from __future__ import annotations

from dataclasses import dataclass

from tether.services.baremetal.teardown import DetachVifsOnTeardown
from tether.services.baremetal.vifs import BAREMETAL_OWNER, ReleasePort, Vifs


async def detach_every_listed_vif(vifs: Vifs, node_uuid: str) -> None:
    # rule 1 (seed 000): detach what the node lists, not what a cache says.
    await vifs.detach_all(node_uuid)


async def unbind_resetting_mac(vifs: Vifs, vif_id: str) -> None:
    # rule 2 (seed 001): a released port is unbound and loses the MAC the NIC imposed on it, and the
    # device the attach gave it (a compute instance's device is compute's to clear).
    # A port that is gone already is released enough.
    await vifs.network.unbind_port(vif_id, reset_mac=True, release_owner=BAREMETAL_OWNER)


@dataclass(frozen=True)
class BaremetalSteps:
    """Tether's own steps by default; each acts on the VIF operations (``Vifs``)."""

    detach_vifs_on_teardown: DetachVifsOnTeardown = detach_every_listed_vif
    release_port: ReleasePort = unbind_resetting_mac
