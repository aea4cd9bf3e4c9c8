"""Rule 2 (seed 001): who owns a port, and how compute gives it back.

A port compute created for an instance is deleted with it; a port the user
brought is released: unbound and its device cleared. A MAC that a bare-metal
NIC imposed on it was already replaced when its VIF left the node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.errors import TetherError
from tether.domain.network import CREATED_BY_COMPUTE, Port
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.services.network import NetworkService


@dataclass(eq=False)
class PortOwnership:
    network: NetworkService

    async def give_back(self, port: Port) -> None:
        """Delete the port if compute created it, release it if the user brought it; gone is fine."""
        try:
            await self.hand_back(port)
        except TetherError as error:
            if error.status != 404:
                raise

    async def hand_back(self, port: Port) -> None:
        """``give_back``, but a port that vanished meanwhile is an error."""
        if port.created_by == CREATED_BY_COMPUTE:
            await self.network.delete_port(RequestContext.internal(port.project_id), port.id)
        else:
            await self.network.release_port(port.id, reset_mac=False)
