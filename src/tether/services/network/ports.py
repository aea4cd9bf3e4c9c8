"""Ports: create (one or in bulk), show, list, update, delete, as the port API has them."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from tether.domain import port_states
from tether.domain.errors.network import (
    BadRequest,
    MacChangeOnBoundPort,
)
from tether.domain.events import VifDeleted
from tether.domain.ids import new_uuid
from tether.domain.listing import ListQuery
from tether.domain.network import CREATED_BY_USER, CREATORS, DOWN, VNIC_TYPES, Port, vif_type_for
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import events, fixed_ips, policy, rows, validation
from tether.services.network.filters import as_values, column_filters, listed, own_projects_only
from tether.services.network.lookups import visible_network, visible_port
from tether.services.network.notifier import Notifier
from tether.services.network.port_lock import port_lock
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

BINDING_FIELDS = ("binding_host_id", "binding_vnic_type", "binding_profile")
UPDATABLE = (
    "name", "description", "admin_state_up", "device_id", "device_owner", *BINDING_FIELDS,
    "mac_address", "fixed_ips",
)
READ_ONLY = ("id", "network_id", "project_id", "status", "binding_vif_type", "created_by",
             "created_at", "updated_at")
ADDRESS_FILTERS = ("ip_address", "subnet_id")


@dataclass
class PortSpec:
    """One port to create: ``create_port``'s keywords, and one entry of ``create_ports``."""

    network_id: str
    name: str = ""
    mac_address: str | None = None
    fixed_ips: list[dict[str, str]] | None = None
    device_id: str = ""
    device_owner: str = ""
    binding_host_id: str = ""
    binding_vnic_type: str = "normal"
    binding_profile: dict[str, Any] | None = None
    admin_state_up: bool = True
    project_id: str | None = None
    created_by: str = CREATED_BY_USER
    description: str = ""
    # Internal callers only (a stack names its ports before making them, rule 5): never from the API.
    id: str | None = None
    created_for: str = ""

    @classmethod
    def from_dict(cls, spec: object) -> PortSpec:
        given = validation.dictionary("port", spec)
        validation.known_keys(given, [f.name for f in fields(cls) if f.name not in INTERNAL_ONLY])
        if "network_id" not in given:
            raise BadRequest(resource="port", msg="Failed to parse request. Required attribute 'network_id' "
                             "not specified")
        return cls(**given)


INTERNAL_ONLY = ("id", "created_for")


@dataclass
class _Checked:
    """A spec whose values passed every check that needs no database."""

    spec: PortSpec
    mac: str | None
    requests: list[fixed_ips.Request] | None
    profile: dict[str, Any]


def _check_port_values(values: dict[str, Any]) -> None:
    for attr in ("name", "description", "device_id", "device_owner", "binding_host_id"):
        if attr in values:
            validation.string(attr, values[attr])
    if "admin_state_up" in values:
        validation.boolean("admin_state_up", values["admin_state_up"])
    if "binding_vnic_type" in values:
        validation.one_of("binding:vnic_type", values["binding_vnic_type"], VNIC_TYPES)
    if values.get("binding_profile") is not None:
        validation.dictionary("binding:profile", values["binding_profile"])


def _check_spec(spec: PortSpec) -> _Checked:
    validation.uuid("network_id", spec.network_id)
    _check_port_values({f.name: getattr(spec, f.name) for f in fields(spec)})
    validation.one_of("created_by", spec.created_by, CREATORS)
    if spec.project_id is not None:
        validation.string("project_id", spec.project_id)
    mac = None if spec.mac_address is None else validation.mac_address(spec.mac_address)
    return _Checked(spec, mac, fixed_ips.parse(spec.fixed_ips), dict(spec.binding_profile or {}))


def _asks_for_address(requests: list[fixed_ips.Request] | None) -> bool:
    return any(request.ip_address is not None for request in requests or ())


@dataclass(eq=False)
class Ports:
    store: Store
    rt: Runtime
    rng: random.Random
    notifier: Notifier

    async def create_port(
        self,
        ctx: RequestContext,
        *,
        network_id: str,
        name: str = "",
        mac_address: str | None = None,
        fixed_ips: list[dict[str, str]] | None = None,
        device_id: str = "",
        device_owner: str = "",
        binding_host_id: str = "",
        binding_vnic_type: str = "normal",
        binding_profile: dict[str, Any] | None = None,
        admin_state_up: bool = True,
        project_id: str | None = None,
        created_by: str = CREATED_BY_USER,
        description: str = "",
        port_id: str | None = None,
        created_for: str = "",
    ) -> Port:
        spec = PortSpec(
            network_id=network_id, name=name, mac_address=mac_address, fixed_ips=fixed_ips,
            device_id=device_id, device_owner=device_owner, binding_host_id=binding_host_id,
            binding_vnic_type=binding_vnic_type, binding_profile=binding_profile,
            admin_state_up=admin_state_up, project_id=project_id, created_by=created_by,
            description=description, id=port_id, created_for=created_for,
        )
        (port,) = await self._create(ctx, [spec])
        return port

    async def create_ports(self, ctx: RequestContext, specs: list[dict[str, Any]]) -> list[Port]:
        """Bulk create: every port or none of them."""
        return await self._create(ctx, [PortSpec.from_dict(spec) for spec in validation.list_of("ports", specs)])

    async def get_port(self, ctx: RequestContext, port_id: str) -> Port:
        async with self.store.begin() as conn:
            return await visible_port(conn, ctx, port_id)

    async def find_port(self, port_id: str) -> Port | None:
        """Internal: the port as it is now, or None; no policy."""
        async with self.store.begin() as conn:
            return await rows.port(conn, port_id)

    async def list_ports(self, ctx: RequestContext, query: ListQuery | None = None, marker: Port | None = None,
                         **filters: Any) -> list[Port]:
        """The ports ``filters`` (column equality, or ``ip_address``/``subnet_id`` of a fixed IP) and ``query``
        (its order and page, after ``marker``) pick, of those the caller may see, paged in the database."""
        filters = column_filters(repos.ports.table, filters, extra=ADDRESS_FILTERS)
        by_address = {name: filters.pop(name) for name in ADDRESS_FILTERS if name in filters}
        own_projects_only(ctx, filters)  # policy.can_see_port, as a filter
        async with self.store.begin() as conn:
            if by_address:
                holders = {a.port_id for a in await repos.ip_allocations.find(conn, **by_address)}
                if "id" in filters:
                    holders &= set(as_values(filters["id"]))
                filters["id"] = sorted(holders)
            found = await repos.ports.page(conn, listed(query, filters), marker=marker)
            return await rows.with_fixed_ips(conn, found)

    async def update_port(self, ctx: RequestContext, port_id: str, **changes: Any) -> Port:
        policy.require_write(ctx)
        validation.known_keys(changes, UPDATABLE, READ_ONLY)
        _check_port_values(changes)
        if any(name in changes for name in BINDING_FIELDS):
            policy.require_admin(ctx)
        new_mac = changes.get("mac_address")
        if new_mac is not None:
            new_mac = validation.mac_address(new_mac)
        requests = None
        if "fixed_ips" in changes:
            requests = fixed_ips.parse(validation.list_of("fixed_ips", changes["fixed_ips"]))
        readdressing = requests is not None or "mac_address" in changes
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            before = await visible_port(conn, ctx, port_id)
            # new addresses are chosen under the network's row lock, taken before the port's (see rows.py)
            network = await rows.network(conn, before.network_id, "update" if readdressing else None)
            before = await visible_port(conn, ctx, port_id, lock="update")
            assert network is not None
            if ("mac_address" in changes or _asks_for_address(requests)) and not policy.owns_network(ctx, network):
                policy.require_admin(ctx)
            values = await self._column_changes(conn, before, changes, new_mac)
            if values:
                await rows.update_port(conn, before, updated_at=self.rt.now(), **values)
            if readdressing:
                allocator = fixed_ips.Allocator(conn, network.id, await rows.subnets_of(conn, network.id))
                moved = dataclasses.replace(before, mac_address=values.get("mac_address", before.mac_address))
                if requests is not None:
                    await allocator.replace(moved, requests)
                if "mac_address" in values:
                    await allocator.readdress(moved)
            after = await rows.port(conn, before.id)
            assert after is not None
        if _differs(before, after):
            await self.rt.checkpoint("network.port_update.before_notify")
            self.notifier.send(events.changed_events(before, after))
        return after

    async def delete_port(self, ctx: RequestContext, port_id: str) -> None:
        policy.require_write(ctx)
        async with port_lock(self.rt, port_id), self.store.begin() as conn:
            port = await visible_port(conn, ctx, port_id, lock="update")
            await rows.delete_port(conn, port.id)
        await self.rt.checkpoint("network.port_delete.before_notify")
        self.notifier.send([e for e in [events.event_for(port, VifDeleted)] if e is not None])

    # -- helpers ------------------------------------------------------------------

    async def _column_changes(
        self, conn: StoreConnection, before: Port, changes: dict[str, Any], new_mac: str | None
    ) -> dict[str, Any]:
        """The port-row values an update sets, with the binding's derived columns kept consistent."""
        values = {name: changes[name] for name in changes if name not in ("mac_address", "fixed_ips")}
        if "binding_profile" in values:
            values["binding_profile"] = dict(values["binding_profile"] or {})
        if "mac_address" in changes:
            mac = new_mac or await rows.fresh_mac(conn, self.rng, before.network_id)
            if mac != before.mac_address:
                if before.is_bound:
                    # neutron refuses (PortBound), which is why ironic unbinds first (seed 001)
                    raise MacChangeOnBoundPort(port_id=before.id, vif_type=before.binding_vif_type,
                                               old_mac=before.mac_address, new_mac=mac)
                values["mac_address"] = mac
        if "binding_host_id" in values or "binding_vnic_type" in values:
            host = values.get("binding_host_id", before.binding_host_id)
            values["binding_vif_type"] = vif_type_for(values.get("binding_vnic_type", before.binding_vnic_type), host)
            if host != before.binding_host_id:
                event = "bind" if host else "unbind"
                _, values["status"] = port_states.next_state(before.binding_host_id, before.status, event)
        return values

    async def _create(self, ctx: RequestContext, specs: list[PortSpec]) -> list[Port]:
        policy.require_write(ctx)
        checked = [_check_spec(spec) for spec in specs]
        for item in checked:
            if item.spec.binding_host_id or item.spec.binding_profile or item.spec.created_by != CREATED_BY_USER:
                policy.require_admin(ctx)

        async with self.store.begin() as conn:
            # addresses are handed out under the networks' row locks, taken in one order (see rows.py)
            for network_id in sorted({item.spec.network_id for item in checked}):
                await rows.network(conn, network_id, "update")
            created = [await self._create_one(conn, ctx, item) for item in checked]
            return await rows.with_fixed_ips(conn, created)

    async def _create_one(self, conn: StoreConnection, ctx: RequestContext, item: _Checked) -> Port:
        spec = item.spec
        network = await visible_network(conn, ctx, spec.network_id)
        if (item.mac is not None or _asks_for_address(item.requests)) and not policy.owns_network(ctx, network):
            policy.require_admin(ctx)
        now = self.rt.now()
        port = Port(
            id=spec.id or new_uuid(self.rng), name=spec.name, network_id=network.id,
            project_id=policy.project_for(ctx, spec.project_id, network.project_id),
            mac_address=item.mac or await rows.fresh_mac(conn, self.rng, network.id),
            admin_state_up=spec.admin_state_up, status=DOWN, device_id=spec.device_id,
            device_owner=spec.device_owner, binding_host_id=spec.binding_host_id,
            binding_vnic_type=spec.binding_vnic_type, binding_profile=item.profile,
            binding_vif_type=vif_type_for(spec.binding_vnic_type, spec.binding_host_id),
            created_by=spec.created_by, created_for=spec.created_for, description=spec.description,
            created_at=now, updated_at=now,
        )
        await rows.insert_port(conn, port)
        subnets = await rows.subnets_of(conn, network.id)
        await fixed_ips.Allocator(conn, network.id, subnets).allocate(port, item.requests)
        return port


def _differs(before: Port, after: Port) -> bool:
    ignored = ("updated_at",)
    return any(getattr(before, f.name) != getattr(after, f.name) for f in fields(Port) if f.name not in ignored)
