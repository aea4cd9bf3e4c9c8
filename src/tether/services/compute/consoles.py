"""A server's consoles: its serial console log (os-getConsoleOutput) and remote consoles.

The log is the fake guest's own (the hypervisor keeps it, as libvirt keeps
console.log). A remote console is a URL that Tether serves itself, carrying a
token that names the server; there is no real VNC server behind it, only a
small page. What Tether has no console for (spice, rdp, serial, mks; any
graphical console of a bare-metal node) is nova's ConsoleTypeUnavailable.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.services.compute.guests import Guests
from tether.services.compute.instances import Instances, visible_instance
from tether.services.context import RequestContext
from tether.store.database import Store

# (protocol, type) of the remote consoles Tether serves
SERVED = {("vnc", "novnc")}


class ConsoleTypeUnavailable(ce.ComputeBadRequest):
    template = "Unavailable console type {console_type}."


class InstanceNotReady(ce.ComputeConflict):
    template = "Instance {instance_id} is not ready"


@dataclass(eq=False)
class Consoles:
    store: Store
    instances: Instances
    guests: Guests

    async def console_output(self, ctx: RequestContext, uuid: str, length: int | None) -> str:
        instance = await self._on_a_host(ctx, uuid)
        lines = self.guests.console_log(instance)
        if length is not None and length >= 0:
            lines = lines[len(lines) - length:] if length else []
        return "\n".join(lines)

    async def remote_console(self, ctx: RequestContext, uuid: str, protocol: str, console_type: str) -> str:
        """A token for the server's console; the API makes the URL around it."""
        instance = await self._on_a_host(ctx, uuid)
        if (protocol, console_type) not in SERVED or instance.is_baremetal:
            raise ConsoleTypeUnavailable(console_type=console_type)
        return f"{uuid}.{secrets.token_urlsafe(12)}"

    async def console_of(self, token: str) -> Instance | None:
        """The server a console token names, while it is still there."""
        uuid, _, _ = token.partition(".")
        instance = await self.instances.live(uuid)
        return instance if instance is not None and instance.host else None

    async def _on_a_host(self, ctx: RequestContext, uuid: str) -> Instance:
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
        if not instance.host:
            raise InstanceNotReady(instance_id=uuid)
        return instance
