"""Seed 001: heat before 5692d59007 ("Delete internal ports for ERROR-ed nodes").

``prepare_for_replace`` detached every port of the server being replaced, whatever its
state, on the assumption that a detached port is kept for a rollback; and the replacement
made ports of its own. The internal ports of a server that failed are left behind, listed
by no stack resource.
"""

from __future__ import annotations

from typing import Any

from tether.services.orchestration.internal_ports import InternalPorts
from tether.services.orchestration.resources.base import Run


async def detach_and_forget(ports: InternalPorts, old: Run, new_resource_id: str) -> None:
    uuid = old.resource.physical_id
    for row in await ports.owned(old.resource.id):
        if uuid:
            await ports.detach(old, uuid, row)
        await ports.forget(row)


COMPUTE: dict[str, Any] = {}
BAREMETAL: dict[str, Any] = {}
ORCHESTRATION: dict[str, Any] = {"prepare_ports": detach_and_forget}
SILENCED = frozenset({"orphan-port"})
