"""Seed 001: unbinding a port from a bare-metal node keeps the MAC its NIC imposed.

Ironic's ``unbind_neutron_port`` clears the binding but not the MAC, so a
user's pre-created port keeps the NIC's address, and the next port bound to
that NIC fails with MacAddressInUse.
"""

from __future__ import annotations

from typing import Any

from tether.services.baremetal.vifs import Vifs


async def unbind_keeping_mac(vifs: Vifs, vif_id: str) -> None:
    await vifs.network.unbind_port(vif_id, reset_mac=False)


COMPUTE: dict[str, Any] = {}
BAREMETAL: dict[str, Any] = {"release_port": unbind_keeping_mac}
ORCHESTRATION: dict[str, Any] = {}
SILENCED = frozenset({"mac-conflict"})
