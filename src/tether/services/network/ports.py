"""Ports: create (one or in bulk), show, list, update, delete, as the port API has them."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from tether.domain import port_states
from tether.domain.errors.network import (
    AddressPairAndPortSecurityRequired,
    BadRequest,
    MacChangeOnBoundPort,
    PortSecurityAndIPRequiredForSecurityGroups,
    PortSecurityPortHasSecurityGroup,
    SecurityGroupNotFound,
    ServicePortInUse,
)
from tether.domain.events import VifDeleted
from tether.domain.ids import new_uuid
from tether.domain.listing import Contains, ListQuery
from tether.domain.network import CREATED_BY_USER, CREATORS, DOWN, FLOATINGIP_OWNER, VNIC_TYPES, Port, vif_type_for
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.network import events, fixed_ips, policy, port_extras, quota_usage, rows, validation
from tether.services.network.filters import as_values, column_filters, listed, own_projects_only
from tether.services.network.lookups import visible_network, visible_port
from tether.services.network.notifier import Notifier
from tether.services.network.port_lock import port_lock
from tether.services.network.security_groups import SecurityGroups, default_group_id
from tether.services.network.service_ports import L3_OWNERS
from tether.store import repos
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

BINDING_FIELDS = ("binding_host_id", "binding_vnic_type", "binding_profile")
EXTRA_FIELDS = ("security_groups", "port_security_enabled", "allowed_address_pairs", "extra_dhcp_opts")
UPDATABLE = (
    "name", "description", "admin_state_up", "device_id", "device_owner", *BINDING_FIELDS,
    "mac_address", "fixed_ips", *EXTRA_FIELDS,
)
READ_ONLY = ("id", "network_id", "project_id", "status", "binding_vif_type", "created_by",
             "created_at", "updated_at")
ADDRESS_FILTERS = ("ip_address", "subnet_id")
# neutron's ip-substring-filtering: a fixed IP whose address holds the text (LIKE '%text%')
SUBSTRING_FILTER = "ip_address_substr"
GROUP_FILTERS = ("security_groups",)


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
    # None: what neutron gives (the project's default group; the network's port security)
    security_groups: list[str] | None = None
    port_security_enabled: bool | None = None
    allowed_address_pairs: list[dict[str, str]] | None = None
    extra_dhcp_opts: list[dict[str, Any]] | None = None
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
    groups: list[str] | None
    pairs: list[dict[str, str]]
    dhcp_opts: list[dict[str, Any]]


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
    if spec.port_security_enabled is not None:
        validation.boolean("port_security_enabled", spec.port_security_enabled)
    groups = None if spec.security_groups is None else port_extras.security_group_ids(spec.security_groups)
    return _Checked(spec, mac, fixed_ips.parse(spec.fixed_ips), dict(spec.binding_profile or {}), groups,
                    port_extras.address_pairs(spec.allowed_address_pairs),
                    port_extras.initial_dhcp_opts(port_extras.dhcp_opts(spec.extra_dhcp_opts)))


def _asks_for_address(requests: list[fixed_ips.Request] | None) -> bool:
    return any(request.ip_address is not None for request in requests or ())


@dataclass(eq=False)
class Ports:
    store: Store
    rt: Runtime
    rng: random.Random
    notifier: Notifier
    security_groups: SecurityGroups

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
        security_groups: list[str] | None = None,
        port_security_enabled: bool | None = None,
        allowed_address_pairs: list[dict[str, str]] | None = None,
        extra_dhcp_opts: list[dict[str, Any]] | None = None,
    ) -> Port:
        spec = PortSpec(
            network_id=network_id, name=name, mac_address=mac_address, fixed_ips=fixed_ips,
            device_id=device_id, device_owner=device_owner, binding_host_id=binding_host_id,
            binding_vnic_type=binding_vnic_type, binding_profile=binding_profile,
            admin_state_up=admin_state_up, project_id=project_id, created_by=created_by,
            description=description, id=port_id, created_for=created_for, security_groups=security_groups,
            port_security_enabled=port_security_enabled, allowed_address_pairs=allowed_address_pairs,
            extra_dhcp_opts=extra_dhcp_opts,
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
        """The ports ``filters`` (column equality, ``ip_address``/``subnet_id`` of a fixed IP, or any of
        ``security_groups``) and ``query`` (its order and page, after ``marker``) pick, of those the caller
        may see, paged in the database."""
        filters = column_filters(repos.ports.table, filters,
                                 extra=(*ADDRESS_FILTERS, SUBSTRING_FILTER, *GROUP_FILTERS))
        by_address = {name: filters.pop(name) for name in ADDRESS_FILTERS if name in filters}
        by_substring = filters.pop(SUBSTRING_FILTER, None)
        by_group = filters.pop("security_groups", None)
        own_projects_only(ctx, filters)  # policy.can_see_port, as a filter
        async with self.store.begin() as conn:
            holders: set[str] | None = None
            if by_address:
                holders = {a.port_id for a in await repos.ip_allocations.find(conn, **by_address)}
            if by_substring is not None:
                holding = {allocation.port_id for text in as_values(by_substring) for allocation in
                           await repos.ip_allocations.page(conn, ListQuery({"ip_address": Contains(str(text))}))}
                holders = holding if holders is None else holders & holding
            if by_group is not None:
                # A port's groups are a JSON list, which no index serves: the group's ports are read among
                # the ports the other filters pick, and the page is then taken by id.
                wanted = set(as_values(by_group))
                members = {port.id for port in await repos.ports.find(conn, **filters)
                           if wanted & set(port.security_group_ids)}
                holders = members if holders is None else holders & members
            if holders is not None:
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
        extras = _checked_extras(changes)
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
            values.update(await _extra_changes(conn, ctx, before, extras))
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
            if port.device_owner in L3_OWNERS and await _l3_owner_exists(conn, port):
                # neutron's prevent_l3_port_deletion: the router or floating IP removes it
                raise ServicePortInUse(port_id=port.id, reason=f"has device owner {port.device_owner}")
            await rows.delete_port(conn, port.id)
        await self.rt.checkpoint("network.port_delete.before_notify")
        self.notifier.send([e for e in [events.event_for(port, VifDeleted)] if e is not None])

    # -- helpers ------------------------------------------------------------------

    async def _column_changes(
        self, conn: StoreConnection, before: Port, changes: dict[str, Any], new_mac: str | None
    ) -> dict[str, Any]:
        """The port-row values an update sets, with the binding's derived columns kept consistent."""
        values = {name: changes[name] for name in changes if name not in ("mac_address", "fixed_ips", *EXTRA_FIELDS)}
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
        if any(name in values for name in BINDING_FIELDS):
            host = values.get("binding_host_id", before.binding_host_id)
            if port_states.is_wired(values.get("binding_vnic_type", before.binding_vnic_type), host,
                                    values.get("binding_profile", before.binding_profile)):
                _, values["status"] = port_states.next_state(host, values.get("status", before.status), "wired")
        return values

    async def _create(self, ctx: RequestContext, specs: list[PortSpec]) -> list[Port]:
        policy.require_write(ctx)
        checked = [_check_spec(spec) for spec in specs]
        for item in checked:
            if item.spec.binding_host_id or item.spec.binding_profile or item.spec.created_by != CREATED_BY_USER:
                policy.require_admin(ctx)

        for project in sorted({item.spec.project_id or ctx.project_id or "" for item in checked}):
            await self.security_groups.ensure_default(project)
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
        project = policy.project_for(ctx, spec.project_id, network.project_id)
        await quota_usage.check(conn, project, "port", 1)
        secure = network.port_security_enabled if spec.port_security_enabled is None else spec.port_security_enabled
        if item.pairs and not secure:
            raise AddressPairAndPortSecurityRequired()
        port = Port(
            id=spec.id or new_uuid(self.rng), name=spec.name, network_id=network.id,
            project_id=project,
            mac_address=item.mac or await rows.fresh_mac(conn, self.rng, network.id),
            admin_state_up=spec.admin_state_up, status=DOWN, device_id=spec.device_id,
            device_owner=spec.device_owner, binding_host_id=spec.binding_host_id,
            binding_vnic_type=spec.binding_vnic_type, binding_profile=item.profile,
            binding_vif_type=vif_type_for(spec.binding_vnic_type, spec.binding_host_id),
            created_by=spec.created_by, created_for=spec.created_for, description=spec.description,
            created_at=now, updated_at=now, port_security_enabled=secure,
            extra_dhcp_opts=item.dhcp_opts,
        )
        port.allowed_address_pairs = port_extras.with_port_mac(item.pairs, port.mac_address)
        if item.groups is None and secure and not port.owned_by_network:
            # neutron's _ensure_default_security_group_on_port: the default group goes in with the row (a
            # port create is the hot path), and comes off below should the port get no address
            default = await repos.security_groups.get(conn, default_group_id(port.project_id))
            if default is None:
                self.security_groups.forget_default(port.project_id)
            port.security_group_ids = [default.id] if default is not None else []
        await rows.insert_port(conn, port)
        subnets = await rows.subnets_of(conn, network.id)
        has_ip = await fixed_ips.Allocator(conn, network.id, subnets).allocate(port, item.requests) > 0
        if item.groups is None:
            if port.security_group_ids and not has_ip:
                await rows.update_port(conn, port, security_group_ids=[])
                port.security_group_ids = []
            return port
        groups = await _requested_groups(conn, ctx, port, item.groups, secure, has_ip)
        if groups:
            await rows.update_port(conn, port, security_group_ids=groups)
            port.security_group_ids = groups
        return port


async def _requested_groups(conn: StoreConnection, ctx: RequestContext, port: Port, requested: list[str],
                            secure: bool, has_ip: bool) -> list[str]:
    """neutron's ``_get_security_groups_on_port`` for the groups a create names."""
    if requested and (not secure or not has_ip):
        raise PortSecurityAndIPRequiredForSecurityGroups()
    await _check_groups(conn, ctx, port.project_id, requested)
    return requested


async def _check_groups(conn: StoreConnection, ctx: RequestContext, project_id: str, group_ids: list[str]) -> None:
    found = {group.id: group for group in await repos.security_groups.find(conn, id=group_ids)} if group_ids else {}
    missing = [group_id for group_id in group_ids if group_id not in found
               or (not ctx.is_admin and found[group_id].project_id != project_id)]
    if missing:
        raise SecurityGroupNotFound(id=", ".join(missing))


@dataclass
class _Extras:
    groups: list[str] | None
    secure: bool | None
    pairs: list[dict[str, str]] | None
    dhcp_opts: list[dict[str, Any]] | None


def _checked_extras(changes: dict[str, Any]) -> _Extras:
    secure = changes.get("port_security_enabled")
    if secure is not None:
        validation.boolean("port_security_enabled", secure)
    return _Extras(
        groups=port_extras.security_group_ids(changes["security_groups"]) if "security_groups" in changes else None,
        secure=secure,
        pairs=port_extras.address_pairs(changes["allowed_address_pairs"])
        if "allowed_address_pairs" in changes else None,
        dhcp_opts=port_extras.dhcp_opts(changes["extra_dhcp_opts"]) if "extra_dhcp_opts" in changes else None,
    )


async def _extra_changes(conn: StoreConnection, ctx: RequestContext, before: Port, extras: _Extras) -> dict[str, Any]:
    """The port-row values an update of its groups, port security, pairs and DHCP options sets."""
    values: dict[str, Any] = {}
    secure = before.port_security_enabled if extras.secure is None else extras.secure
    groups = before.security_group_ids if extras.groups is None else extras.groups
    pairs = before.allowed_address_pairs if extras.pairs is None else extras.pairs
    if not secure:
        if extras.groups:
            raise PortSecurityAndIPRequiredForSecurityGroups()
        if groups:
            raise PortSecurityPortHasSecurityGroup()
        if pairs:
            raise AddressPairAndPortSecurityRequired()
    if extras.groups:
        if not before.fixed_ips:
            raise PortSecurityAndIPRequiredForSecurityGroups()
        await _check_groups(conn, ctx, before.project_id, extras.groups)
    if extras.groups is not None:
        values["security_group_ids"] = extras.groups
    if extras.secure is not None:
        values["port_security_enabled"] = extras.secure
    if extras.pairs is not None:
        values["allowed_address_pairs"] = port_extras.with_port_mac(extras.pairs, before.mac_address)
    if extras.dhcp_opts is not None:
        values["extra_dhcp_opts"] = port_extras.merged_dhcp_opts(before.extra_dhcp_opts or [], extras.dhcp_opts)
    return values


async def _l3_owner_exists(conn: StoreConnection, port: Port) -> bool:
    if port.device_owner == FLOATINGIP_OWNER:
        return await repos.floating_ips.get(conn, port.device_id) is not None
    return await repos.routers.get(conn, port.device_id) is not None


def _differs(before: Port, after: Port) -> bool:
    ignored = ("updated_at",)
    return any(getattr(before, f.name) != getattr(after, f.name) for f in fields(Port) if f.name not in ignored)
