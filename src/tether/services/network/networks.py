"""Networks: create, show, list, update, delete."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.domain.errors.network import (
    InvalidInput,
    InvalidSharedSetting,
    NetworkInUse,
)
from tether.domain.ids import new_uuid
from tether.domain.listing import ListQuery
from tether.domain.network import NETWORK_TYPES, Network
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import policy, quota_usage, rows, validation
from tether.services.network.filters import column_filters, listed
from tether.services.network.lookups import owned_network, visible_network
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

UPDATABLE = ("name", "description", "admin_state_up", "shared", "external", "mtu", "port_security_enabled")
READ_ONLY = (
    "id", "project_id", "status", "created_at", "updated_at",
    "provider_network_type", "provider_physical_network", "provider_segmentation_id",
)
# The smallest MTU an IPv4 network can have (neutron's minimum).
MIN_MTU = 68
SEGMENTATION_RANGES = {"vlan": (1, 4094), "vxlan": (1, 2**24 - 1), "geneve": (1, 2**24 - 1),
                       "gre": (1, 2**32 - 1)}


def _check_provider(network_type: object, physical_network: object, segmentation_id: object) -> None:
    if network_type is not None and network_type not in NETWORK_TYPES:
        raise InvalidInput(error_message=f"network_type value '{network_type}' not supported")
    validation.optional_string("provider:physical_network", physical_network)
    if segmentation_id is None:
        return
    validation.integer("provider:segmentation_id", segmentation_id)
    if network_type not in SEGMENTATION_RANGES:
        raise InvalidInput(error_message=f"segmentation_id specified for {network_type} provider network")
    low, high = SEGMENTATION_RANGES[network_type]  # type: ignore[index]
    if not low <= segmentation_id <= high:  # type: ignore[operator]
        raise InvalidInput(error_message=f"segmentation_id out of range ({low} through {high})")


def _check_values(values: dict[str, Any]) -> None:
    for attr in ("name", "description"):
        if attr in values:
            validation.string(attr, values[attr])
    for attr in ("admin_state_up", "shared", "external", "port_security_enabled"):
        if attr in values:
            validation.boolean(attr, values[attr])
    if "mtu" in values:
        validation.integer("mtu", values["mtu"], minimum=MIN_MTU)


@dataclass(eq=False)
class Networks:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_network(
        self,
        ctx: RequestContext,
        *,
        name: str,
        project_id: str | None = None,
        shared: bool = False,
        external: bool = False,
        admin_state_up: bool = True,
        mtu: int = 1500,
        provider_network_type: str | None = "flat",
        provider_physical_network: str | None = None,
        provider_segmentation_id: int | None = None,
        description: str = "",
        network_id: str | None = None,  # internal callers that name it first (a stack, rule 5)
        port_security_enabled: bool = True,
    ) -> Network:
        policy.require_write(ctx)
        _check_values({"name": name, "description": description, "admin_state_up": admin_state_up,
                       "shared": shared, "external": external, "mtu": mtu,
                       "port_security_enabled": port_security_enabled})
        _check_provider(provider_network_type, provider_physical_network, provider_segmentation_id)
        if shared or external or provider_physical_network is not None or provider_segmentation_id is not None:
            policy.require_admin(ctx)
        now = self.rt.now()
        network = Network(
            id=network_id or new_uuid(self.rng), name=name, project_id=policy.project_for(ctx, project_id),
            admin_state_up=admin_state_up, shared=shared, external=external, mtu=mtu,
            provider_network_type=provider_network_type,
            provider_physical_network=provider_physical_network,
            provider_segmentation_id=provider_segmentation_id,
            description=description, created_at=now, updated_at=now, port_security_enabled=port_security_enabled,
        )
        async with self.store.begin() as conn:
            await quota_usage.check(conn, network.project_id, "network", 1)
            await repos.networks.add(conn, network)
        return network

    async def get_network(self, ctx: RequestContext, network_id: str) -> Network:
        async with self.store.begin() as conn:
            return await visible_network(conn, ctx, network_id)

    async def list_networks(self, ctx: RequestContext, query: ListQuery | None = None, marker: Network | None = None,
                            **filters: Any) -> list[Network]:
        """The networks ``filters`` and ``query`` pick, of those the caller may see, paged in the database."""
        query = listed(query, column_filters(repos.networks.table, filters))
        if not ctx.is_admin:
            query = query._replace(alternatives=(*query.alternatives, policy.visible_networks(ctx)))
        async with self.store.begin() as conn:
            return await repos.networks.page(conn, query, marker=marker)

    async def update_network(self, ctx: RequestContext, network_id: str, **changes: Any) -> Network:
        policy.require_write(ctx)
        validation.known_keys(changes, UPDATABLE, READ_ONLY)
        _check_values(changes)
        if "shared" in changes or "external" in changes:
            policy.require_admin(ctx)
        async with self.store.begin() as conn:
            network = await owned_network(conn, ctx, network_id, lock="update")
            if network.shared and changes.get("shared") is False:
                await _check_unshare(conn, network)
            if changes:
                await repos.networks.update(conn, network.id, updated_at=self.rt.now(), **changes)
            return await rows.network(conn, network.id)  # type: ignore[return-value]

    async def delete_network(self, ctx: RequestContext, network_id: str) -> None:
        """Refused while a port other than the network's own (DHCP) remains; takes its subnets along."""
        policy.require_write(ctx)
        async with self.store.begin() as conn:
            network = await owned_network(conn, ctx, network_id, lock="update")
            ports = await repos.ports.find(conn, network_id=network.id)
            # an external network's floating IPs that no port uses go with it, as neutron's L3 plugin does
            loose = {fip.floating_port_id: fip for fip in await repos.floating_ips.find(
                conn, floating_network_id=network.id, port_id=None)}
            if any(not port.auto_deleted and port.id not in loose for port in ports):
                raise NetworkInUse(net_id=network.id)
            for fip in loose.values():
                await repos.resource_tags.delete_where(conn, resource_id=fip.id)
                await repos.floating_ips.delete(conn, fip.id)
            for port in ports:
                await rows.delete_port(conn, port.id)
            await repos.ip_allocations.delete_where(conn, network_id=network.id)
            for subnet in await repos.subnets.find(conn, network_id=network.id):
                await repos.resource_tags.delete_where(conn, resource_id=subnet.id)
            await repos.subnets.delete_where(conn, network_id=network.id)
            await repos.resource_tags.delete_where(conn, resource_id=network.id)
            await repos.networks.delete(conn, network.id)


async def _check_unshare(conn: StoreConnection, network: Network) -> None:
    ports = await repos.ports.find(conn, network_id=network.id)
    if any(port.project_id != network.project_id and not port.owned_by_network for port in ports):
        raise InvalidSharedSetting(network=network.id)
