"""Choosing where an instance runs, and claiming it: a hypervisor with room, or a free node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.domain.aggregates import DEFAULT_ZONE, zone_of
from tether.domain.compute import Flavor, Hypervisor, Instance
from tether.domain.errors import compute as ce
from tether.domain.placement import Usage, choose_hypervisor, fits
from tether.domain.server_groups import AFFINITY
from tether.runtime.runtime import Runtime
from tether.services.compute import server_groups
from tether.services.compute.zones import ZoneMap
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.store.database import StoreConnection

# What nova's ironic driver reports as the host of every bare-metal instance.
BAREMETAL_HOST = "ironic"


@dataclass(eq=False)
class Placement:
    store: Store
    rt: Runtime
    baremetal: BaremetalService
    zones: ZoneMap  # shared with the aggregates' service, which tells it of each change

    async def claim(self, instance: Instance, flavor: Flavor) -> Instance:
        if flavor.is_baremetal:
            return await self.claim_node(instance, flavor)
        return await self.claim_hypervisor(instance, flavor)

    async def claim_hypervisor(self, instance: Instance, flavor: Flavor) -> Instance:
        async with self.store.begin() as conn:
            hypervisors = await repos.hypervisors.find(conn, order_by=("hostname",))
            aggregates = await self.zones.aggregates(conn)
            if instance.pinned_availability_zone is not None:
                # nova's AvailabilityZoneFilter: only the hosts the zone's aggregates hold (or, for the
                # default zone, those no zone's aggregate holds)
                hypervisors = [hv for hv in hypervisors
                               if zone_of(hv.hostname, aggregates) == instance.pinned_availability_zone]
            hypervisors = await _honour_host_hints(conn, instance, hypervisors)
            usage = await _usage_beside(conn, instance)
            # the group is locked and its members' hosts read in the transaction that places this one,
            # so two members booting at once cannot both take the same host
            group, member_hosts = await server_groups.group_of(conn, instance.uuid)
            chosen = choose_hypervisor(hypervisors, usage, flavor, group, member_hosts)
            if chosen is None:
                raise ce.NoValidHost(reason="There are not enough hosts available.")
            zone = zone_of(chosen.hostname, aggregates)
            await repos.instances.update(conn, instance.uuid, host=chosen.hostname, node=chosen.hostname,
                                         availability_zone=zone, updated_at=self.rt.now())
        self.rt.note(f"{instance.name} scheduled to hypervisor {chosen.hostname}")
        instance.host = instance.node = chosen.hostname
        instance.availability_zone = zone
        return instance

    async def claim_node(self, instance: Instance, flavor: Flavor) -> Instance:
        async with self.store.begin() as conn:
            group, member_nodes = await server_groups.group_of(conn, instance.uuid)
        if group is not None and group.policy == AFFINITY and member_nodes:
            # a node runs one instance: no second member can share the first one's host
            raise ce.NoValidHost(reason="There are not enough hosts available.")
        if instance.pinned_availability_zone not in (None, DEFAULT_ZONE):
            # the ironic compute service is in no aggregate: its nodes are in the default zone
            raise ce.NoValidHost(reason="There are not enough hosts available.")
        for node in await self.baremetal.find_free_nodes(flavor.resource_class or ""):
            if await self.baremetal.claim_node(node.uuid, instance.uuid, {"image_source": instance.image_id}):
                async with self.store.begin() as conn:
                    await repos.instances.update(conn, instance.uuid, host=BAREMETAL_HOST, node=node.uuid,
                                                 availability_zone=DEFAULT_ZONE, updated_at=self.rt.now())
                self.rt.note(f"{instance.name} scheduled to node {node.name or node.uuid}")
                instance.host, instance.node = BAREMETAL_HOST, node.uuid
                instance.availability_zone = DEFAULT_ZONE
                return instance
        raise ce.NoValidHost(reason=f"No available node of resource class {flavor.resource_class}.")

    async def check_resize(self, instance: Instance, flavor: Flavor) -> None:
        """The scheduling step of a resize: the instance's host must take the new flavor beside its other
        guests, or the resize fails with nova's NoValidHost. A VM is resized on its own host (its guest
        and interfaces stay where they are), so that host is the one candidate."""
        async with self.store.begin() as conn:
            hypervisor = next(iter(await repos.hypervisors.find(conn, hostname=instance.host or "")), None)
            usage = await _usage_beside(conn, instance)
        if hypervisor is None or not fits(hypervisor, usage.get(hypervisor.hostname, Usage()), flavor):
            raise ce.NoValidHost(reason="There are not enough hosts available.")


async def _usage_beside(conn: StoreConnection, instance: Instance) -> dict[str, Usage]:
    """What each hypervisor's guests use, the instance itself left out."""
    flavors = {known.id: known for known in await repos.flavors.find(conn)}
    # Counted by the database: reading every live instance would cost each build O(instances).
    placed = await repos.instances.tally(conn, ("host", "flavor_id"), deleted=False, is_baremetal=False)
    usage: dict[str, Usage] = {}
    for host, flavor_id, count in placed:
        if host == instance.host and flavor_id == instance.flavor_id:
            count -= 1  # not a neighbour of itself
        other_flavor = flavors.get(flavor_id)
        if host and other_flavor is not None and count > 0:
            usage[host] = usage.get(host, Usage()).plus(other_flavor, count)
    return usage


async def _honour_host_hints(conn: StoreConnection, instance: Instance, hypervisors: list[Hypervisor]
                             ) -> list[Hypervisor]:
    """nova's SameHostFilter and DifferentHostFilter: the hosts where the named servers run, or the others."""
    hints = instance.scheduler_hints or {}
    for name, keep in (("same_host", True), ("different_host", False)):
        if not hints.get(name):
            continue
        named = await repos.instances.find(conn, uuid=hints[name], deleted=False)
        hosts = {other.host for other in named if other.host}
        hypervisors = [hv for hv in hypervisors if (hv.hostname in hosts) == keep]
    return hypervisors
