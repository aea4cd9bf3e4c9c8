"""Read-only queries behind the compute API: whole records in one transaction, never one query per row.

Nothing here changes state. A server's record is what nova's API shows
about it (flavor, info cache, network names, latest fault, its host's
state); an interface attachment is the port as the network service has it
now, with the tag compute keeps; a guest's interfaces come from the
hypervisor, the owner of that fact (rule 1), not from the cache.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from tether.domain import compute_states as vm
from tether.domain import security_groups as sg
from tether.domain import tenant_usage
from tether.domain.compute import (
    ActionEvent,
    Flavor,
    GuestInterface,
    Hypervisor,
    Instance,
    InstanceAction,
    InstanceFault,
    VifEntry,
)
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.domain.listing import ListQuery, SortKey
from tether.domain.network import Port
from tether.domain.security_groups import default_group_id
from tether.domain.tenant_usage import ServerUsage
from tether.drivers.hypervisor import FakeHypervisor
from tether.services.compute import network_info
from tether.services.compute.instances import acting_for, visible_instance
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

if TYPE_CHECKING:
    from tether.services.network import NetworkService


@dataclass
class ServerRecord:
    """One server and everything its API body shows, read together."""

    instance: Instance
    flavor: Flavor | None
    vifs: list[VifEntry]
    network_names: dict[str, str]
    fault: InstanceFault | None
    # The hypervisor row of the instance's host (None for bare metal or no host).
    hypervisor: Hypervisor | None = None
    # The names of the security groups on the instance's ports, as nova reads them from neutron.
    security_groups: list[str] = field(default_factory=list)
    # The server groups it is a member of, when they were asked for (None: not read).
    server_groups: list[str] | None = None


@dataclass
class GuestView:
    """What the hypervisor driver reports for one instance: the truth for diagnostics."""

    instance: Instance
    flavor: Flavor | None
    has_domain: bool
    interfaces: list[GuestInterface] = field(default_factory=list)


@dataclass(eq=False)
class ComputeQueries:
    store: Store
    _: KW_ONLY
    network: NetworkService
    hypervisor: FakeHypervisor

    # -- servers ------------------------------------------------------------------

    async def server_record(
        self, ctx: RequestContext, uuid: str, *, with_hosts: bool = False, with_groups: bool = False
    ) -> ServerRecord:
        """One server's record; ``with_hosts`` reads its hypervisor too (for host_status), ``with_groups``
        its server groups."""
        if not is_uuid_like(uuid):
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            (record,) = await _records(conn, [instance], with_hosts)
            if with_groups:
                record.server_groups = [member.group_id for member in await repos.server_group_members.find(
                    conn, instance_uuid=uuid)]
        return record

    async def server_records(
        self, instances: list[Instance], *, with_hosts: bool = False
    ) -> list[ServerRecord]:
        """Records for instances the caller was already allowed to list."""
        if not instances:
            return []
        async with self.store.begin() as conn:
            return await _records(conn, instances, with_hosts)

    async def find_servers(
        self, ctx: RequestContext, *, all_projects: bool = False, **columns: Any
    ) -> list[Instance]:
        """Instances the caller may list, filtered by equality (or IN, given a list) on columns."""
        if all_projects and not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:servers:detail:get_all_tenants")
        if not all_projects:
            columns["project_id"] = ctx.project_id
        async with self.store.begin() as conn:
            return await repos.instances.find(conn, order_by=("created_at", "uuid"), **columns)

    async def page_servers(self, ctx: RequestContext, query: ListQuery, *, all_projects: bool = False,
                           marker: Instance | None = None,
                           keep: Callable[[Instance], bool] | None = None) -> list[Instance]:
        """One page of the instances the caller may list (``find_servers``'s scope), ``query`` run in the
        database after ``marker``; ``keep`` is a test the database cannot run (nova's regular expressions)."""
        if all_projects and not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:servers:detail:get_all_tenants")
        if not all_projects:
            query = query._replace(filters={**query.filters, "project_id": [ctx.project_id]})
        async with self.store.begin() as conn:
            return await repos.instances.page(conn, query, marker=marker, keep=keep)

    async def listed_instance(self, ctx: RequestContext, uuid: str) -> Instance | None:
        """A paging marker: any instance the caller could see, deleted or not."""
        if not is_uuid_like(uuid):
            return None
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
        if instance is None or not ctx.owns(instance.project_id):
            return None
        return instance

    async def tenant_usage(self, ctx: RequestContext, start: float, stop: float,
                           project_id: str | None = None) -> list[ServerUsage]:
        """nova's os-simple-tenant-usage: every server of the project (every project: admin only) that ran
        in the period, deleted ones included, with its hours in it; in the order they were made."""
        if project_id is None and not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-simple-tenant-usage:list")
        if project_id is not None and not (ctx.is_admin or ctx.project_id == project_id):
            raise ce.ComputeForbidden(action="os_compute_api:os-simple-tenant-usage:show")
        columns = {"project_id": project_id} if project_id is not None else {}
        async with self.store.begin() as conn:
            instances = await repos.instances.find(conn, order_by=("created_at", "uuid"), **columns)
            flavors = {flavor.id: flavor for flavor in await repos.flavors.find(conn)}
        return [ServerUsage(instance, flavors.get(instance.flavor_id), tenant_usage.hours_in(instance, start, stop))
                for instance in instances if tenant_usage.active_in(instance, start, stop)]

    # -- instance actions ---------------------------------------------------------

    async def instance_actions(
        self, ctx: RequestContext, uuid: str, *, include_deleted: bool, query: ListQuery | None = None
    ) -> list[InstanceAction]:
        """Newest first, as nova lists them: the page ``query`` asks for (its filters on the action's
        columns, its limit, after the action its marker names, which the filters must keep), read in the
        database."""
        asked = query or ListQuery()
        query = asked._replace(filters={**asked.filters, "instance_uuid": [uuid]},
                               sort=(SortKey("start_time", False), SortKey("request_id", False)))
        async with self.store.begin() as conn:
            await _action_target(conn, ctx, uuid, include_deleted)
            marker = None
            if query.marker is not None:
                named = query._replace(filters={**query.filters, "request_id": [query.marker]}, marker=None,
                                       limit=1)
                marker = next(iter(await repos.instance_actions.page(conn, named)), None)
                if marker is None:
                    raise ce.ComputeBadRequest(reason=f"Marker {query.marker} could not be found.")
            return await repos.instance_actions.page(conn, query, marker=marker)

    async def instance_action(
        self, ctx: RequestContext, uuid: str, request_id: str, *, include_deleted: bool
    ) -> tuple[Instance, InstanceAction, list[ActionEvent]]:
        async with self.store.begin() as conn:
            instance = await _action_target(conn, ctx, uuid, include_deleted)
            action = await repos.instance_actions.first(conn, request_id=request_id, instance_uuid=uuid)
            if action is None:
                raise ce.ComputeNotFound(reason=f"Action {request_id} not found")
            events = await repos.action_events.find(conn, order_by=("id",), request_id=request_id)
        events.reverse()
        return instance, action, events

    # -- interfaces -----------------------------------------------------------------

    async def interface_attachments(
        self, ctx: RequestContext, uuid: str
    ) -> list[tuple[Port, VifEntry | None]]:
        """The ports bound to the instance (nova lists neutron's ports by device_id), with their cache entries."""
        if not is_uuid_like(uuid):
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            entries = await network_info.cached_vifs(conn, uuid)
        ports = await self.network.list_ports(acting_for(instance), device_id=uuid)
        cached = {entry.port_id: entry for entry in entries}
        order = {entry.port_id: entry.position for entry in entries}
        ports.sort(key=lambda port: (order.get(port.id, len(order)), port.id))
        return [(port, cached.get(port.id)) for port in ports]

    async def interface_attachment(
        self, ctx: RequestContext, uuid: str, port_id: str
    ) -> tuple[Port, VifEntry | None]:
        if not is_uuid_like(uuid):
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            await visible_instance(conn, ctx, uuid)
            entry = await repos.instance_vifs.first(conn, instance_uuid=uuid, port_id=port_id)
        port = await self.network.find_port(port_id)
        if port is None:
            raise ce.PortNotFound(port_id=port_id)
        if port.device_id != uuid:
            raise ce.ComputeNotFound(reason=f"Instance {uuid} does not have a port with id {port_id}")
        return port, entry

    # -- diagnostics ------------------------------------------------------------------

    async def guest_view(self, ctx: RequestContext, uuid: str) -> GuestView:
        """The instance as its hypervisor sees it (admin only, as nova's diagnostics)."""
        if not is_uuid_like(uuid):
            raise ce.InstanceNotFound(instance_id=uuid)
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            flavor = await repos.flavors.get(conn, instance.flavor_id)
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-server-diagnostics")
        if instance.is_baremetal or not instance.host:
            return GuestView(instance, flavor, has_domain=False)
        # rule 1 (seed 004): what the guest really has, zombie interfaces included.
        return GuestView(instance, flavor, has_domain=self.hypervisor.has_domain(instance.host, uuid),
                         interfaces=self.hypervisor.interfaces(instance_uuid=uuid, host=instance.host))


async def _records(conn: StoreConnection, instances: list[Instance], with_hosts: bool) -> list[ServerRecord]:
    vifs: dict[str, list[VifEntry]] = defaultdict(list)
    # nova hides a building server's addresses, so its cache need not be read
    cached = _one_or_all(i.uuid for i in instances if i.vm_state != vm.BUILDING)
    for entry in await repos.instance_vifs.find(conn, order_by=("instance_uuid", "position", "port_id"),
                                                instance_uuid=cached) if cached else ():
        vifs[entry.instance_uuid].append(entry)
    flavors = {flavor.id: flavor for flavor in await repos.flavors.find(
        conn, id=_one_or_all(instance.flavor_id for instance in instances))}
    network_ids = _one_or_all(entry.network_id for entries in vifs.values() for entry in entries)
    names = {network.id: network.name for network in await repos.networks.find(conn, id=network_ids)} \
        if network_ids else {}
    failed = _one_or_all(i.uuid for i in instances if i.vm_state == vm.ERROR or i.deleted)
    faults: dict[str, InstanceFault] = {}
    if failed:
        for fault in await repos.instance_faults.find(conn, order_by=("id",), instance_uuid=failed):
            faults[fault.instance_uuid] = fault  # the latest one wins
    hosts = _one_or_all(i.host for i in instances if i.host and not i.is_baremetal) if with_hosts else []
    hypervisors = {hypervisor.hostname: hypervisor
                   for hypervisor in await repos.hypervisors.find(conn, hostname=hosts)} if hosts else {}
    groups = await _security_group_names(conn, instances)
    return [
        ServerRecord(instance=instance, flavor=flavors.get(instance.flavor_id), vifs=vifs.get(instance.uuid, []),
                     network_names=names, fault=faults.get(instance.uuid),
                     hypervisor=hypervisors.get(instance.host or ""), security_groups=groups.get(instance.uuid, []))
        for instance in instances
    ]


async def _security_group_names(conn: StoreConnection, instances: list[Instance]) -> dict[str, list[str]]:
    """nova's ``_add_security_grps``: the distinct names of the groups on each instance's ports."""
    live = _one_or_all(i.uuid for i in instances if not i.deleted)
    if not live:
        return {}
    ports = await repos.ports.find(conn, order_by=("created_at", "id"), device_id=live)
    # a project's default group is known by its id: most servers have no other, and need no read
    names = {default_group_id(port.project_id): sg.DEFAULT_NAME for port in ports if port.project_id}
    group_ids = _one_or_all(group_id for port in ports for group_id in port.security_group_ids or []
                            if group_id not in names)
    if group_ids:
        names.update((group.id, group.name) for group in await repos.security_groups.find(conn, id=group_ids))
    found: dict[str, list[str]] = defaultdict(list)
    for port in ports:
        for group_id in port.security_group_ids or []:
            name = names.get(group_id)
            if name is not None and name not in found[port.device_id]:
                found[port.device_id].append(name)
    return found


def _one_or_all(values: Iterable[str]) -> str | list[str]:
    """One value as itself (a plain, cached ``=``), several as a list (``IN``); [] when none."""
    distinct = sorted(set(values))
    return distinct[0] if len(distinct) == 1 else distinct


async def _action_target(
    conn: StoreConnection, ctx: RequestContext, uuid: str, include_deleted: bool
) -> Instance:
    instance = await repos.instances.get(conn, uuid) if is_uuid_like(uuid) else None
    if instance is None or (instance.deleted and not include_deleted) or not ctx.owns(instance.project_id):
        raise ce.InstanceNotFound(instance_id=uuid)
    return instance
