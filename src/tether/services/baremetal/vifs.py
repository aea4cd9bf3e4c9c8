"""VIFs: which network port each NIC of a node carries, attached and detached as ironic does.

The NICs' and portgroups' ``internal_info`` is the one record of what is
attached; every step that touches a network port is written down first as a
durable intent, so a crash between the record and the port is mended on
restart (rule 5).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from tether.domain.baremetal import TENANT_VIF_KEY, Node, NodePort, Portgroup
from tether.domain.baremetal_vifs import (
    Nic,
    attached_vifs,
    choose_nic,
    holder_of,
    local_link_information,
)
from tether.domain.errors import baremetal as be
from tether.domain.errors import network as ne
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.baremetal.access import network_context, require_admin
from tether.services.baremetal.lookup import NodeLookup, get_node
from tether.services.baremetal.node_lock import NodeHold, NodeLock
from tether.services.context import RequestContext
from tether.store import intents, repos
from tether.store.database import Store, StoreConnection

if TYPE_CHECKING:
    from tether.services.network import NetworkService

# The device_owner ironic gives a port that has none when it binds it to a node.
BAREMETAL_OWNER = "baremetal:none"
ATTACH_INTENT = "baremetal.vif_attach"
DETACH_INTENT = "baremetal.vif_detach"

# How a detached VIF's network port is released (``BaremetalSteps.release_port``).
ReleasePort = Callable[["Vifs", str], Awaitable[None]]


async def nics_of(conn: StoreConnection, node_uuid: str) -> tuple[list[NodePort], list[Portgroup]]:
    """The node's NICs and portgroups, oldest first."""
    ports = await repos.node_ports.find(conn, order_by=("created_at", "uuid"), node_uuid=node_uuid)
    portgroups = await repos.portgroups.find(conn, order_by=("created_at", "uuid"), node_uuid=node_uuid)
    return ports, portgroups


@dataclass(eq=False)
class Vifs:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    network: NetworkService
    lookup: NodeLookup
    lock: NodeLock
    release_port: ReleasePort

    # -- reading -------------------------------------------------------------------

    async def vif_list(self, ctx: RequestContext, node_ident: str) -> list[str]:
        require_admin(ctx, "baremetal:node:vif:list")
        async with self.store.begin() as conn:
            node = await get_node(conn, node_ident)
            return attached_vifs(*await nics_of(conn, node.uuid))

    # -- attach ----------------------------------------------------------------------

    async def vif_attach(
        self,
        ctx: RequestContext,
        node_ident: str,
        vif_id: str,
        *,
        port_uuid: str | None = None,
        portgroup_uuid: str | None = None,
    ) -> None:
        require_admin(ctx, "baremetal:node:vif:attach")
        if port_uuid is not None and portgroup_uuid is not None:
            raise be.InvalidParameterValue(err="Cannot specify both port_uuid and portgroup_uuid")
        await self.lookup.read(node_ident)
        port = await self._port_by_id_or_name(vif_id)
        vif_id = port.id  # the node records the port's id, whatever the caller named it by
        network = await self.network.get_network(network_context(), port.network_id)
        physnets = {network.provider_physical_network} if network.provider_physical_network else set()
        async with self.lock.locked(node_ident) as node:
            async with self.store.begin() as conn:
                ports, portgroups = await nics_of(conn, node.uuid)
                if port_uuid is not None and not any(nic.uuid == port_uuid for nic in ports):
                    raise be.PortNotFound(port=port_uuid)
                if portgroup_uuid is not None and not any(pg.uuid == portgroup_uuid for pg in portgroups):
                    raise be.PortgroupNotFound(portgroup=portgroup_uuid)
                nic = choose_nic(vif_id, ports, portgroups, physnets,
                                 port_uuid=port_uuid, portgroup_uuid=portgroup_uuid)
                intent_id = await self._record_intent(conn, ATTACH_INTENT, node.uuid, vif_id, nic.address)
            await self._plug(node, nic, port, local_link_information(nic, ports), intent_id)

    async def _port_by_id_or_name(self, ident: str) -> Any:
        """The network port ``ident`` names: its id, or else its name, resolved through the network service."""
        port = await self.network.find_port(ident)
        if port is not None:
            return port
        if is_uuid_like(ident):
            raise be.InvalidParameterValue(err=f"Neutron port {ident} was not found")
        named = await self.network.list_ports(network_context(), name=ident)
        if len(named) > 1:
            raise be.InvalidParameterValue(
                err=f"Multiple ports match the name {ident}: {', '.join(sorted(p.id for p in named))}; "
                    "use the port's id")
        if not named:
            raise be.InvalidParameterValue(err=f"Neutron port {ident} was not found")
        return named[0]

    async def _plug(self, node: Node, nic: Nic, port: Any, links: list[dict[str, Any]], intent_id: str) -> None:
        vif_id = port.id
        mac_changed = recorded = False
        try:
            await self.rt.checkpoint("baremetal.vif_attach.before_mac_update")
            if nic.address:
                await self._set_mac(vif_id, nic.address)
                mac_changed = True
            async with self.store.begin() as conn:
                recorded = await self._write_vif(conn, nic, vif_id, None)
            if not recorded:
                raise be.NoFreePhysicalPorts(vif=vif_id)  # the NIC went or was taken meanwhile
            # rule 4: re-check after the side effects; the port may have gone or changed hands.
            port = await self.network.find_port(vif_id)
            if port is None:
                raise be.InvalidParameterValue(err=f"Neutron port {vif_id} was not found")
            try:
                await self.network.bind_port(
                    vif_id, device_id=port.device_id or node.instance_uuid or node.uuid,
                    device_owner=port.device_owner or BAREMETAL_OWNER, host_id=node.uuid,
                    vnic_type="baremetal", profile={"local_link_information": links},
                )
            except ne.PortNotFound:
                raise be.InvalidParameterValue(err=f"Neutron port {vif_id} was not found") from None
            except ne.NetworkError as error:
                raise be.NetworkError(
                    f"Could not add public network VIF {vif_id} to node {node.uuid}, possible network "
                    f"issue. {error.message}"
                ) from None
        except Exception:
            # rule 4: after a side effect, undo it if the rest failed: no half-attached VIF.
            if recorded:
                async with self.store.begin() as conn:
                    await self._write_vif(conn, nic, None, vif_id)
            if mac_changed:
                await self.network.unbind_port(vif_id, reset_mac=True)
            await self._forget_intent(intent_id)
            raise
        await self._forget_intent(intent_id)
        self.rt.note(f"node {node.uuid}: VIF {vif_id} attached to {type(nic).__name__} {nic.uuid}")

    async def _set_mac(self, vif_id: str, address: str) -> None:
        try:
            await self.network.set_mac_address(vif_id, address)
        except ne.PortNotFound:
            raise be.InvalidParameterValue(err=f"Neutron port {vif_id} was not found") from None
        except ne.NetworkError as error:
            raise be.NetworkError(
                f"Unable to attach VIF {vif_id} because Ironic can not update Neutron port {vif_id} "
                f"MAC address to match physical MAC address {address}: {error.message}"
            ) from None

    async def _write_vif(self, conn: StoreConnection, nic: Nic, vif_id: str | None, expected: str | None) -> bool:
        """Set the NIC's VIF to ``vif_id`` (None clears it), only if it still holds ``expected``."""
        repo: Any = repos.portgroups if isinstance(nic, Portgroup) else repos.node_ports
        current = await repo.get(conn, nic.uuid)
        if current is None or current.vif != expected:
            return False
        info = {key: value for key, value in current.internal_info.items() if key != TENANT_VIF_KEY}
        if vif_id is not None:
            info[TENANT_VIF_KEY] = vif_id
        await repo.update(conn, nic.uuid, internal_info=info, updated_at=self.rt.now())
        return True

    # -- detach ----------------------------------------------------------------------

    async def vif_detach(self, ctx: RequestContext, node_ident: str, vif_id: str) -> None:
        require_admin(ctx, "baremetal:node:vif:detach")
        if not is_uuid_like(vif_id):
            # The node records the port's id; a port's name (as attach takes it) stands for it.
            named = await self.network.list_ports(network_context(), name=vif_id)
            if len(named) == 1:
                vif_id = named[0].id
        async with self.lock.locked(node_ident) as node:
            await self.detach(node.uuid, vif_id)

    async def detach(self, node_uuid: str, vif_id: str) -> None:
        """Take ``vif_id`` off the node and release its port; the caller holds the node lock."""
        async with self.store.begin() as conn:
            holder = holder_of(vif_id, *await nics_of(conn, node_uuid))
            if holder is None:
                raise be.VifNotAttached(vif=vif_id, node=node_uuid)
            intent_id = await self._record_intent(conn, DETACH_INTENT, node_uuid, vif_id, holder.address)
            await self._write_vif(conn, holder, None, vif_id)
        try:
            await self.rt.checkpoint("baremetal.vif_detach.before_unbind")
            await self.release_port(self, vif_id)
        except Exception:
            # The port is still bound to the node: the node keeps listing the VIF so that a
            # retry (or tear-down) can finish the job (rule 1: drop a record only when it is gone).
            async with self.store.begin() as conn:
                await self._write_vif(conn, holder, vif_id, None)
                await intents.forget(conn, intent_id)
            raise
        await self._forget_intent(intent_id)
        self.rt.note(f"node {node_uuid}: VIF {vif_id} detached")

    async def detach_all(self, node_uuid: str) -> None:
        """Detach every VIF the node lists; the caller holds the node lock."""
        async with self.store.begin() as conn:
            vifs = attached_vifs(*await nics_of(conn, node_uuid))
        for vif_id in vifs:
            try:
                await self.detach(node_uuid, vif_id)
            except be.VifNotAttached:
                continue  # already off: that is what we wanted

    # -- intents (rule 5) ----------------------------------------------------------------

    async def _record_intent(
        self, conn: StoreConnection, kind: str, node_uuid: str, vif_id: str, address: str | None
    ) -> str:
        intent_id = new_uuid(self.rng)
        await intents.record(conn, intent_id, kind, node_uuid, {"vif": vif_id, "address": address}, self.rt.now())
        return intent_id

    async def _forget_intent(self, intent_id: str) -> None:
        async with self.store.begin() as conn:
            await intents.forget(conn, intent_id)

    async def recover_intents(self) -> None:
        """Mend VIF attaches and detaches a dead incarnation left halfway.

        The node's record is the truth: a port the node does not list must not
        stay bound to it or keep its NIC's MAC; a port it lists is the owner's
        to detach.
        """
        async with self.store.begin() as conn:
            pending = [i for i in await intents.pending(conn) if i.kind in (ATTACH_INTENT, DETACH_INTENT)]
        for intent in pending:
            node_uuid, vif_id, address = intent.key, intent.payload["vif"], intent.payload.get("address")
            hold = NodeHold(self.lock, node_uuid)
            try:
                await hold.take()
                async with self.store.begin() as conn:
                    listed = vif_id in attached_vifs(*await nics_of(conn, node_uuid))
                if not listed:
                    port = await self.network.find_port(vif_id)
                    if port is not None and (port.binding_host_id == node_uuid or port.mac_address == address):
                        await self.network.unbind_port(vif_id, reset_mac=True)
                await self._forget_intent(intent.id)
                self.rt.note(f"node {node_uuid}: recovered {intent.kind} of VIF {vif_id}")
            finally:
                await hold.give()
