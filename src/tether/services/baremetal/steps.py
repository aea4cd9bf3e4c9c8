"""The steps of the bare-metal service that an emulated upstream bug replaces (``tether.emulation``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol


class BaremetalService(Protocol):
    """What the steps use of the bare-metal service."""

    network: Any

    async def _detach_all_vifs(self, node_uuid: str) -> None: ...


async def detach_every_listed_vif(baremetal: BaremetalService, node_uuid: str) -> None:
    # rule 1 (seed 000): detach what the node lists, not what a cache says.
    await baremetal._detach_all_vifs(node_uuid)


async def unbind_resetting_mac(baremetal: BaremetalService, vif_id: str) -> None:
    # rule 2 (seed 001): a released port is unbound and loses the MAC the NIC imposed on it.
    # A port that is gone already is released enough.
    await baremetal.network.unbind_port(vif_id, reset_mac=True)


@dataclass(frozen=True)
class BaremetalSteps:
    detach_vifs_on_teardown: Callable[[BaremetalService, str], Awaitable[None]] = detach_every_listed_vif
    release_port: Callable[[BaremetalService, str], Awaitable[None]] = unbind_resetting_mac
