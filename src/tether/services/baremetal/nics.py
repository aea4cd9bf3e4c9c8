"""A node's NICs (ironic ports) and portgroups."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import KW_ONLY, dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import Node, NodePort, Portgroup
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.domain.listing import ListQuery
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.lookup import get_node
from tether.services.baremetal.node_lock import NodeLock
from tether.services.baremetal.patches import apply_patch, changed
from tether.services.baremetal.vifs import Vifs
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

_PORT_WRITABLE = {
    "address": None, "physical_network": None, "pxe_enabled": True, "local_link_connection": {},
    "portgroup_uuid": None, "extra": {},
}
_PORT_INTERNAL = ("node_uuid", "internal_info")
# ironic's portgroup PATCH_ALLOWED_FIELDS up to Tether's newest microversion (physical_network and
# category come with 1.102 and 1.103).
_PORTGROUP_WRITABLE = {
    "address": None, "extra": {}, "mode": None, "name": None, "node_uuid": None, "properties": {},
    "standalone_ports_supported": True,
}
# Changing these under an attached VIF would leave the network port describing another NIC.
_PORT_WIRING = ("address", "physical_network", "portgroup_uuid")


@dataclass(eq=False)
class Nics:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    lock: NodeLock
    vifs: Vifs

    # -- lookup --------------------------------------------------------------------

    @staticmethod
    async def _get_port(conn: StoreConnection, uuid: str) -> NodePort:
        port = await repos.node_ports.get(conn, uuid.lower()) if is_uuid_like(uuid) else None
        if port is None:
            raise be.PortNotFound(port=uuid)
        return port

    @staticmethod
    async def _get_portgroup(conn: StoreConnection, ident: str) -> Portgroup:
        if is_uuid_like(ident):
            portgroup = await repos.portgroups.get(conn, ident.lower())
        else:
            portgroup = await repos.portgroups.first(conn, name=ident) if isinstance(ident, str) else None
        if portgroup is None:
            raise be.PortgroupNotFound(portgroup=ident)
        return portgroup

    async def _portgroup_on(self, conn: StoreConnection, ident: str, node_uuid: str) -> Portgroup:
        """The portgroup ``ident``, which must belong to the NIC's own node."""
        portgroup = await self._get_portgroup(conn, ident)
        if portgroup.node_uuid != node_uuid:
            raise be.InvalidParameterValue(err=f"Port can not be added to portgroup {portgroup.uuid} of another node")
        return portgroup

    async def _free_for_deletion(self, node: Node, holder: NodePort | Portgroup, what: str) -> None:
        """A NIC or portgroup carrying a VIF goes only in maintenance, and releases the VIF first."""
        if holder.vif is None:
            return
        if not node.maintenance:
            raise be.InvalidState(
                f"Cannot delete the {what} {holder.uuid} as it is bound to VIF {holder.vif} for tenant use."
            )
        # rule 2: the NIC goes, so the network port it carried is released (unbound, MAC reset) first.
        await self.vifs.detach(node.uuid, holder.vif)

    @staticmethod
    async def _check_physnet_fits(
        conn: StoreConnection, portgroup: Portgroup, physnet: str | None, port_uuid: str | None
    ) -> None:
        """Every member of a portgroup is on one physical network (ironic's validate_port_physnet)."""
        members = await repos.node_ports.find(conn, portgroup_uuid=portgroup.uuid)
        others = {member.physical_network for member in members if member.uuid != port_uuid}
        if others and physnet not in others:
            raise be.PortgroupPhysnetConflict(
                physnet=physnet, portgroup=portgroup.uuid, pg_physnet=", ".join(sorted(map(str, others)))
            )

    # -- ports -----------------------------------------------------------------------

    async def create_port(
        self,
        ctx: RequestContext,
        *,
        address: str,
        node_uuid: str,
        physical_network: str | None = None,
        pxe_enabled: bool = True,
        local_link_connection: dict[str, Any] | None = None,
        portgroup_uuid: str | None = None,
        extra: dict[str, Any] | None = None,
        uuid: str | None = None,
    ) -> NodePort:
        require_admin(ctx, "baremetal:port:create")
        mac = validation.mac_address(address)
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        physical_network = validation.optional_text(physical_network, "physical_network")
        validation.boolean(pxe_enabled, "pxe_enabled")
        links = validation.mapping(local_link_connection, "local_link_connection")
        extra = validation.mapping(extra, "extra")
        now = self.rt.now()
        try:
            async with self.store.begin() as conn:
                node = await get_node(conn, node_uuid)
                if await repos.node_ports.get(conn, uuid) is not None:
                    raise be.PortAlreadyExists(uuid=uuid)
                if await repos.node_ports.first(conn, address=mac) is not None:
                    raise be.MACAlreadyExists(mac=mac)
                if portgroup_uuid is not None:
                    portgroup = await self._portgroup_on(conn, portgroup_uuid, node.uuid)
                    await self._check_physnet_fits(conn, portgroup, physical_network, None)
                    portgroup_uuid = portgroup.uuid
                port = NodePort(
                    uuid=uuid, address=mac, node_uuid=node.uuid, portgroup_uuid=portgroup_uuid,
                    physical_network=physical_network, pxe_enabled=pxe_enabled, local_link_connection=links,
                    extra=extra, created_at=now, updated_at=now,
                )
                await repos.node_ports.add(conn, port)
        except IntegrityError:
            raise be.MACAlreadyExists(mac=mac) from None
        return port

    async def get_port(self, ctx: RequestContext, uuid: str) -> NodePort:
        require_admin(ctx, "baremetal:port:get")
        async with self.store.begin() as conn:
            return await self._get_port(conn, uuid)

    async def list_ports(
        self,
        ctx: RequestContext,
        *,
        node: str | None = None,
        address: str | None = None,
        portgroup: str | None = None,
        shards: list[str] | None = None,
        query: ListQuery | None = None,
    ) -> list[NodePort]:
        """Every port the filters pick in creation order, or with ``query`` one page of them, paged in the
        database; its marker must be a port the filters keep (PortNotFound otherwise, as ironic answers)."""
        require_admin(ctx, "baremetal:port:list")
        filters: dict[str, list[Any]] = {}
        if address is not None:
            filters["address"] = [validation.mac_address(address)]
        async with self.store.begin() as conn:
            if node is not None:
                filters["node_uuid"] = [(await get_node(conn, node)).uuid]
            if portgroup is not None:
                filters["portgroup_uuid"] = [(await self._get_portgroup(conn, portgroup)).uuid]
            if shards is not None:
                # the ports of the nodes in those shards (ironic joins the node table)
                filters["node_uuid"] = [found.uuid for found in await repos.nodes.find(conn, shard=shards)]
            if query is None:
                return await repos.node_ports.find(conn, order_by=("created_at", "uuid"), **filters)
            query = query._replace(filters={**query.filters, **filters})
            marker = None
            if query.marker is not None:
                marker = await repos.node_ports.listed_marker(conn, query)
                if marker is None:
                    raise be.PortNotFound(port=query.marker)
            return await repos.node_ports.page(conn, query, marker=marker)

    async def update_port(self, ctx: RequestContext, uuid: str, patch: list[dict[str, Any]]) -> NodePort:
        require_admin(ctx, "baremetal:port:update")
        port = await self.get_port(ctx, uuid)
        async with self.lock.locked(port.node_uuid):
            async with self.store.begin() as conn:
                port = await self._get_port(conn, uuid)
            current = dataclasses.asdict(port)
            patched = apply_patch(current, patch, writable=_PORT_WRITABLE, internal=_PORT_INTERNAL,
                                  mandatory=("address",))
            changes = changed(current, patched)
            if "address" in changes:
                changes["address"] = validation.mac_address(changes["address"])
            if "physical_network" in changes:
                validation.optional_text(changes["physical_network"], "physical_network")
            if "pxe_enabled" in changes:
                validation.boolean(changes["pxe_enabled"], "pxe_enabled")
            for field in ("local_link_connection", "extra"):
                if field in changes:
                    validation.mapping(changes[field], field)
            changes = {name: value for name, value in changes.items() if value != current[name]}
            if not changes:
                return port
            wiring = [field for field in _PORT_WIRING if field in changes]
            if port.vif is not None and wiring:
                raise be.InvalidState(
                    f"Cannot update {', '.join(wiring)} of port {uuid} while VIF {port.vif} is attached to it"
                )
            changes["updated_at"] = self.rt.now()
            try:
                async with self.store.begin() as conn:
                    if "address" in changes and await repos.node_ports.first(conn, address=changes["address"]):
                        raise be.MACAlreadyExists(mac=changes["address"])
                    portgroup_uuid = changes.get("portgroup_uuid", port.portgroup_uuid)
                    if portgroup_uuid is not None and wiring:
                        portgroup = await self._portgroup_on(conn, portgroup_uuid, port.node_uuid)
                        changes["portgroup_uuid"] = portgroup.uuid
                        physnet = changes.get("physical_network", port.physical_network)
                        await self._check_physnet_fits(conn, portgroup, physnet, port.uuid)
                    await repos.node_ports.update(conn, uuid, **changes)
            except IntegrityError:
                raise be.MACAlreadyExists(mac=changes.get("address")) from None
            return dataclasses.replace(port, **changes)

    async def delete_port(self, ctx: RequestContext, uuid: str) -> None:
        require_admin(ctx, "baremetal:port:delete")
        port = await self.get_port(ctx, uuid)
        async with self.lock.locked(port.node_uuid) as node:
            async with self.store.begin() as conn:
                port = await self._get_port(conn, uuid)
            await self._free_for_deletion(node, port, "port")
            async with self.store.begin() as conn:
                await repos.node_ports.delete(conn, uuid)

    # -- portgroups ------------------------------------------------------------------

    async def create_portgroup(
        self,
        ctx: RequestContext,
        *,
        node_uuid: str,
        address: str | None = None,
        name: str | None = None,
        mode: str | None = None,
        standalone_ports_supported: bool = True,
        extra: dict[str, Any] | None = None,
        properties: dict[str, Any] | None = None,
    ) -> Portgroup:
        require_admin(ctx, "baremetal:portgroup:create")
        properties = validation.mapping(properties, "properties")
        mac = validation.mac_address(address) if address is not None else None
        name = validation.logical_name(name)
        mode = validation.optional_text(mode, "mode")
        validation.boolean(standalone_ports_supported, "standalone_ports_supported")
        extra = validation.mapping(extra, "extra")
        now = self.rt.now()
        async with self.store.begin() as conn:
            node = await get_node(conn, node_uuid)
            if mac is not None and await repos.portgroups.first(conn, address=mac) is not None:
                raise be.PortgroupMACAlreadyExists(mac=mac)
            if name is not None and await repos.portgroups.first(conn, name=name) is not None:
                raise be.PortgroupDuplicateName(name=name)
            portgroup = Portgroup(
                uuid=new_uuid(self.rng), node_uuid=node.uuid, name=name, address=mac, mode=mode,
                standalone_ports_supported=standalone_ports_supported, extra=extra, properties=properties,
                created_at=now, updated_at=now,
            )
            await repos.portgroups.add(conn, portgroup)
        return portgroup

    async def get_portgroup(self, ctx: RequestContext, ident: str) -> Portgroup:
        require_admin(ctx, "baremetal:portgroup:get")
        async with self.store.begin() as conn:
            return await self._get_portgroup(conn, ident)

    async def list_portgroups(
        self, ctx: RequestContext, *, node: str | None = None, address: str | None = None
    ) -> list[Portgroup]:
        require_admin(ctx, "baremetal:portgroup:list")
        filters: dict[str, Any] = {}
        if address is not None:
            filters["address"] = validation.mac_address(address)
        async with self.store.begin() as conn:
            if node is not None:
                filters["node_uuid"] = (await get_node(conn, node)).uuid
            return await repos.portgroups.find(conn, order_by=("created_at", "uuid"), **filters)

    async def update_portgroup(self, ctx: RequestContext, ident: str, patch: list[dict[str, Any]]) -> Portgroup:
        require_admin(ctx, "baremetal:portgroup:update")
        portgroup = await self.get_portgroup(ctx, ident)
        async with self.lock.locked(portgroup.node_uuid):
            async with self.store.begin() as conn:
                portgroup = await self._get_portgroup(conn, portgroup.uuid)
            current = dataclasses.asdict(portgroup)
            patched = apply_patch(current, patch, writable=_PORTGROUP_WRITABLE, internal=("internal_info",),
                                  mandatory=("node_uuid",))
            changes = changed(current, patched)
            if changes.get("address") is not None:
                changes["address"] = validation.mac_address(changes["address"])
            if "name" in changes:
                validation.logical_name(changes["name"])
            if "mode" in changes:
                validation.optional_text(changes["mode"], "mode")
            if "standalone_ports_supported" in changes:
                validation.boolean(changes["standalone_ports_supported"], "standalone_ports_supported")
            for field in ("extra", "properties"):
                if field in changes:
                    changes[field] = validation.mapping(changes[field], field)
            changes = {name: value for name, value in changes.items() if value != current[name]}
            if not changes:
                return portgroup
            if portgroup.vif is not None and "address" in changes:
                raise be.InvalidState(
                    f"Cannot update address of portgroup {portgroup.uuid} while VIF {portgroup.vif} is attached to it"
                )
            changes["updated_at"] = self.rt.now()
            try:
                async with self.store.begin() as conn:
                    if "node_uuid" in changes:
                        changes["node_uuid"] = (await get_node(conn, validation.uuid_value(changes["node_uuid"]))).uuid
                        # ironic moves a portgroup to another node only once it has no ports
                        if await repos.node_ports.count(conn, portgroup_uuid=portgroup.uuid):
                            raise be.PortgroupNotEmpty(portgroup=portgroup.uuid)
                    if changes.get("address") is not None and \
                            await repos.portgroups.first(conn, address=changes["address"]) is not None:
                        raise be.PortgroupMACAlreadyExists(mac=changes["address"])
                    if changes.get("name") is not None and \
                            await repos.portgroups.first(conn, name=changes["name"]) is not None:
                        raise be.PortgroupDuplicateName(name=changes["name"])
                    await repos.portgroups.update(conn, portgroup.uuid, **changes)
            except IntegrityError:
                raise be.PortgroupMACAlreadyExists(mac=changes.get("address")) from None
            return dataclasses.replace(portgroup, **changes)

    async def delete_portgroup(self, ctx: RequestContext, ident: str) -> None:
        require_admin(ctx, "baremetal:portgroup:delete")
        portgroup = await self.get_portgroup(ctx, ident)
        async with self.lock.locked(portgroup.node_uuid) as node:
            async with self.store.begin() as conn:
                portgroup = await self._get_portgroup(conn, portgroup.uuid)
                if await repos.node_ports.count(conn, portgroup_uuid=portgroup.uuid):
                    raise be.PortgroupNotEmpty(portgroup=portgroup.uuid)
            await self._free_for_deletion(node, portgroup, "portgroup")
            async with self.store.begin() as conn:
                await repos.portgroups.delete(conn, portgroup.uuid)
