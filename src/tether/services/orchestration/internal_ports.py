"""The ports a stack makes for a server's ``networks`` entries, and what becomes of them.

Seed 001 in one module (design rule 2): a ``networks`` entry without a ``port`` gets a port the
stack creates and owns, named ``<server>-port-<n>``; an entry with a ``port`` is the user's,
and the stack never deletes it. Each owned port is recorded (``stack_ports``) before it is
made, so that a crash cannot leave a port nobody lists (rule 5), and is deleted with its
server, or before the server's replacement when the server failed.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import Any

from tether.domain import compute_states as vm
from tether.domain.errors import compute as ce
from tether.domain.errors import network as ne
from tether.domain.ids import new_uuid
from tether.domain.network import CREATED_BY_ORCHESTRATION
from tether.domain.orchestration.stacks import StackPort
from tether.runtime.runtime import Runtime
from tether.services.compute import ComputeService
from tether.services.context import RequestContext
from tether.services.network import NetworkService
from tether.services.orchestration.lookups import Lookups
from tether.services.orchestration.resources.base import ResourceFailed, Run
from tether.store.database import Store


def owned_by(run: Run) -> str:
    """What a port the stack made says created it: the stack and the resource."""
    return f"{run.stack.id}/{run.resource.name}"


@dataclass(eq=False)
class InternalPorts:
    store: Store
    rt: Runtime
    rng: random.Random
    network: NetworkService
    compute: ComputeService
    lookups: Lookups

    async def nics(self, run: Run, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The server's networks as compute takes them: each entry's port, made here if the entry
        names none (and not made twice when run again after a crash)."""
        async with self.store.begin() as uow:
            recorded = {row.position: row for row in await uow.stack_ports.find(resource_id=run.resource.id,
                                                                               internal=True)}
        nics: list[dict[str, Any]] = []
        for position, entry in enumerate(entries):
            tag = {"tag": entry["tag"]} if entry.get("tag") else {}
            if entry.get("port"):
                nics.append({"port": await self.lookups.port_id(run.ctx, entry["port"]), **tag})
                continue
            row = recorded.get(position)
            if row is None:
                row = await self._record(run, position, entry)
            await self._make(run, row)
            nics.append({"port": row.port_id, **tag})
        return nics

    async def _record(self, run: Run, position: int, entry: dict[str, Any]) -> StackPort:
        network = entry.get("network") or entry.get("uuid")
        subnet = await self.lookups.subnet_id(run.ctx, entry["subnet"]) if entry.get("subnet") else None
        if network is None and subnet is not None:
            network = (await self.network.get_subnet(run.ctx, subnet)).network_id
        if network is None:
            raise ResourceFailed(reason="One of the properties \"network\", \"port\" or \"subnet\" should be set "
                                        f"for the specified network of server \"{run.resource.name}\".")
        row = StackPort(port_id=new_uuid(self.rng), stack_id=run.stack.id, resource_id=run.resource.id,
                        resource_name=run.resource.name, internal=True,
                        network=await self.lookups.network_id(run.ctx, network),
                        fixed_ip=entry.get("fixed_ip"), subnet=subnet, position=position)
        async with self.store.begin() as uow:
            await uow.stack_ports.add(row)
        await self.rt.checkpoint("orchestration.port.before_create")
        return row

    async def _make(self, run: Run, row: StackPort) -> None:
        if await self.network.find_port(row.port_id) is not None:
            return
        fixed: list[dict[str, str]] = []
        if row.fixed_ip or row.subnet:
            fixed = [{key: value for key, value in (("subnet_id", row.subnet), ("ip_address", row.fixed_ip))
                      if value}]
        await self.network.create_port(
            RequestContext.internal(project_id=run.stack.project_id), network_id=row.network,
            name=f"{run.resource.name}-port-{row.position}", fixed_ips=fixed or None,
            project_id=run.stack.project_id, created_by=CREATED_BY_ORCHESTRATION, created_for=owned_by(run),
            port_id=row.port_id)

    async def delete(self, run: Run) -> None:
        """Delete every port the stack made for this server (not-found is what a delete wants)."""
        async with self.store.begin() as uow:
            rows = await uow.stack_ports.find(resource_id=run.resource.id, internal=True)
        for row in rows:
            with contextlib.suppress(ne.PortNotFound):
                await self.network.delete_port(RequestContext.internal(project_id=run.stack.project_id), row.port_id)
            async with self.store.begin() as uow:
                await uow.stack_ports.delete(row.port_id)

    async def owned(self, resource_id: str) -> list[StackPort]:
        async with self.store.begin() as uow:
            return await uow.stack_ports.find(resource_id=resource_id, internal=True, order_by=("position",))

    async def detach(self, old: Run, server_uuid: str, row: StackPort) -> None:
        """Take one of the old server's ports off it, as ``server remove port`` does."""
        try:
            await self.compute.detach_interface(old.ctx, server_uuid, row.port_id)
        except (ce.PortNotFound, ce.InstanceNotFound, ce.InstanceInvalidState) as error:
            self.rt.note(f"port {row.port_id} not detached from {server_uuid}: {error.message}")

    async def forget(self, row: StackPort) -> None:
        """No longer list the port as the stack's (it is not deleted)."""
        async with self.store.begin() as uow:
            await uow.stack_ports.delete(row.port_id)

    async def hand_over(self, row: StackPort, new_resource_id: str) -> None:
        async with self.store.begin() as uow:
            await uow.stack_ports.update(row.port_id, resource_id=new_resource_id)


async def delete_or_hand_over(ports: InternalPorts, old: Run, new_resource_id: str) -> None:
    """Before a server is replaced: what becomes of the ports the stack made for it.

    Rule 2 (seed 001): a server that failed or is gone has no use for its ports, and its
    replacement must not inherit them (a bare-metal port keeps the binding and the MAC of the
    node it failed on): delete them before the replacement is made. A healthy server's ports
    are taken off it and handed to its replacement, which comes up with the same addresses
    (and a rollback gives them back to the old server).
    """
    uuid = old.resource.physical_id or ""
    instance = await ports.compute.live_instance(uuid) if uuid else None
    if instance is None or instance.vm_state == vm.ERROR:
        await ports.delete(old)
        return
    for row in await ports.owned(old.resource.id):
        await ports.detach(old, uuid, row)
        await ports.hand_over(row, new_resource_id)


__all__ = ["InternalPorts", "delete_or_hand_over", "owned_by"]
