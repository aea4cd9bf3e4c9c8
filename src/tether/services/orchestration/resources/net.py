"""OS::Neutron::Net and OS::Neutron::Subnet."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import network as ne
from tether.domain.orchestration.stacks import StackResource
from tether.services.context import RequestContext
from tether.services.network import NetworkService
from tether.services.orchestration.lookups import Lookups
from tether.services.orchestration.resources.base import Run, changed, changes_in_place, claim_physical_id, public
from tether.store.database import Store

# What neutron changes in place (heat's update_allowed properties that Tether acts on).
NET_IN_PLACE = frozenset({"name", "admin_state_up", "shared"})
SUBNET_IN_PLACE = frozenset({"name", "gateway_ip", "enable_dhcp", "allocation_pools", "dns_nameservers"})


@dataclass(eq=False)
class Net:
    store: Store
    rng: random.Random
    network: NetworkService

    async def create(self, run: Run) -> None:
        network_id = await claim_physical_id(self.store, self.rng, run.resource)
        if await _exists(self.network.get_network(run.ctx, network_id)):
            return
        props = run.properties
        await self.network.create_network(
            run.ctx, name=props.get("name") or run.physical_name, admin_state_up=props.get("admin_state_up", True),
            shared=props.get("shared", False), network_id=network_id)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        return changes_in_place(resource, new, NET_IN_PLACE)

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        changes = changed(old, run.properties)
        if "name" in changes:
            changes["name"] = changes["name"] or run.physical_name
        await self.network.update_network(run.ctx, run.resource.physical_id or "", **changes)

    async def restore(self, run: Run) -> None:
        return None

    async def wait_ready(self, run: Run) -> None:
        return None

    async def delete(self, run: Run) -> None:
        if run.resource.physical_id:
            with contextlib.suppress(ne.NetworkNotFound):  # not-found is what a delete wants
                await self.network.delete_network(run.ctx, run.resource.physical_id)

    async def wait_gone(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        network = await self.network.get_network(ctx, resource.physical_id or "")
        subnets = await self.network.list_subnets(ctx, network_id=network.id)
        return {"name": network.name, "status": network.status, "mtu": network.mtu,
                "subnets": [subnet.id for subnet in subnets], "admin_state_up": network.admin_state_up,
                "show": public(network)}


@dataclass(eq=False)
class Subnet:
    store: Store
    rng: random.Random
    network: NetworkService
    lookups: Lookups

    async def create(self, run: Run) -> None:
        subnet_id = await claim_physical_id(self.store, self.rng, run.resource)
        if await _exists(self.network.get_subnet(run.ctx, subnet_id)):
            return
        props = run.properties
        network_id = await self.lookups.network_id(run.ctx, props["network"])
        extra: dict[str, Any] = {}
        if "gateway_ip" in props:
            extra["gateway_ip"] = props["gateway_ip"]
        if props.get("allocation_pools"):
            extra["allocation_pools"] = props["allocation_pools"]
        await self.network.create_subnet(
            run.ctx, network_id=network_id, cidr=props["cidr"], ip_version=int(props.get("ip_version", 4)),
            name=props.get("name") or run.physical_name, enable_dhcp=props.get("enable_dhcp", True),
            dns_nameservers=props.get("dns_nameservers") or (), subnet_id=subnet_id, **extra)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        return changes_in_place(resource, new, SUBNET_IN_PLACE)

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        changes = changed(old, run.properties)
        if "name" in changes:
            changes["name"] = changes["name"] or run.physical_name
        if "dns_nameservers" in changes:
            changes["dns_nameservers"] = changes["dns_nameservers"] or []
        await self.network.update_subnet(run.ctx, run.resource.physical_id or "", **changes)

    async def restore(self, run: Run) -> None:
        return None

    async def wait_ready(self, run: Run) -> None:
        return None

    async def delete(self, run: Run) -> None:
        if run.resource.physical_id:
            with contextlib.suppress(ne.SubnetNotFound):
                await self.network.delete_subnet(run.ctx, run.resource.physical_id)

    async def wait_gone(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        subnet = await self.network.get_subnet(ctx, resource.physical_id or "")
        return {"name": subnet.name, "cidr": subnet.cidr, "gateway_ip": subnet.gateway_ip,
                "network_id": subnet.network_id, "allocation_pools": subnet.allocation_pools,
                "ip_version": subnet.ip_version, "show": public(subnet)}


async def _exists(read: Any) -> bool:
    try:
        await read
    except ne.NotFound:
        return False
    return True
