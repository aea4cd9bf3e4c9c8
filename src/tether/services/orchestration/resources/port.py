"""OS::Neutron::Port: a port the stack made, deleted with the stack (rule 2)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import network as ne
from tether.domain.network import CREATED_BY_ORCHESTRATION
from tether.domain.orchestration.stacks import StackPort, StackResource
from tether.services.context import RequestContext
from tether.services.network import NetworkService
from tether.services.orchestration.internal_ports import owned_by
from tether.services.orchestration.lookups import Lookups
from tether.services.orchestration.resources.base import Run, changed, changes_in_place, claim_physical_id, public
from tether.store.database import Store

# What neutron changes in place; a port's addresses or owner changing makes a new port, as heat's
# replacement_policy AUTO does when it cannot update.
PORT_IN_PLACE = frozenset({"name", "admin_state_up"})


@dataclass(eq=False)
class Port:
    store: Store
    rng: random.Random
    network: NetworkService
    lookups: Lookups

    async def create(self, run: Run) -> None:
        port_id = await claim_physical_id(self.store, self.rng, run.resource)
        props = run.properties
        network_id = await self.lookups.network_id(run.ctx, props["network"])
        async with self.store.begin() as uow:
            if await uow.stack_ports.get(port_id) is None:
                await uow.stack_ports.add(StackPort(port_id=port_id, stack_id=run.stack.id,
                                                    resource_id=run.resource.id, resource_name=run.resource.name,
                                                    internal=False, network=network_id))
        if await self.network.find_port(port_id) is not None:
            return
        fixed = []
        for entry in props.get("fixed_ips") or []:
            wanted = {}
            if entry.get("subnet") or entry.get("subnet_id"):
                wanted["subnet_id"] = await self.lookups.subnet_id(run.ctx, entry.get("subnet") or entry["subnet_id"])
            if entry.get("ip_address"):
                wanted["ip_address"] = entry["ip_address"]
            fixed.append(wanted)
        await self.network.create_port(
            RequestContext.internal(project_id=run.stack.project_id), network_id=network_id,
            name=props.get("name") or run.physical_name, mac_address=props.get("mac_address"),
            fixed_ips=fixed or None, device_id=props.get("device_id") or "",
            device_owner=props.get("device_owner") or "",
            binding_vnic_type=props.get("binding:vnic_type") or "normal",
            admin_state_up=props.get("admin_state_up", True), project_id=run.stack.project_id,
            created_by=CREATED_BY_ORCHESTRATION, created_for=owned_by(run), port_id=port_id)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        return changes_in_place(resource, new, PORT_IN_PLACE)

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        changes = changed(old, run.properties)
        if "name" in changes:
            changes["name"] = changes["name"] or run.physical_name
        await self.network.update_port(RequestContext.internal(project_id=run.stack.project_id),
                                       run.resource.physical_id or "", **changes)

    async def restore(self, run: Run) -> None:
        return None

    async def wait_ready(self, run: Run) -> None:
        return None

    async def delete(self, run: Run) -> None:
        port_id = run.resource.physical_id
        if not port_id:
            return
        with contextlib.suppress(ne.PortNotFound):
            await self.network.delete_port(RequestContext.internal(project_id=run.stack.project_id), port_id)
        async with self.store.begin() as uow:
            await uow.stack_ports.delete(port_id)

    async def wait_gone(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        port = await self.network.get_port(ctx, resource.physical_id or "")
        return {"name": port.name, "status": port.status, "mac_address": port.mac_address,
                "network_id": port.network_id, "device_id": port.device_id, "fixed_ips": port.fixed_ips,
                "subnets": sorted({ip["subnet_id"] for ip in port.fixed_ips}), "show": public(port)}
