"""Events from the network service (os-server-external-events) and reconciling from truth.

The in-process notifier and the HTTP API deliver events through
``external_events``; an event only says which instance to look at
(level-triggered, after controller-runtime), so lost or reordered events are
harmless. The port-deleted event and cache refreshes both end in
``reconcile_network``, under the instance lock (rule 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.domain.network import CREATED_BY_COMPUTE, Port
from tether.services.compute import network_info
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.services.compute.service import ComputeService

EVENT_NAMES = ("network-vif-plugged", "network-vif-unplugged", "network-vif-deleted", "network-changed")
EVENT_STATUSES = ("failed", "completed", "in-progress")
STALE_VIF = "stale-vif-on-terminate"
ZOMBIE = "zombie-interface-on-attach-race"
SETTLED = (vm.ACTIVE, vm.STOPPED, vm.ERROR)


class EventOps:
    async def external_events(
        self: ComputeService, ctx: RequestContext, events: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Nova's os-server-external-events: validate all, then accept each (code 200/404/422)."""
        if not (ctx.is_admin or "service" in ctx.roles):
            raise ce.ComputeForbidden(action="os_compute_api:os-server-external-events:create")
        if not isinstance(events, list) or not events:
            raise ce.ComputeBadRequest(reason="Invalid input for field/attribute events.")
        for event in events:
            _validate_event(event)
        results = []
        for event in events:
            result = {"server_uuid": event["server_uuid"], "name": event["name"],
                      "status": event.get("status", "completed")}
            if "tag" in event:
                result["tag"] = event["tag"]
            instance = await self._live_instance(event["server_uuid"])
            if instance is None:
                result.update(code=404, status="failed")
            elif instance.host is None:
                result.update(code=422, status="failed")
            else:
                result["code"] = 200
                self._dispatch(instance, event)
            results.append(result)
        return results

    def _dispatch(self: ComputeService, instance: Instance, event: dict[str, Any]) -> None:
        name, port_id = event["name"], event.get("tag", "")
        self.rt.note(f"event {name} for {instance.name} port {port_id[:8]}")
        if name in ("network-vif-plugged", "network-vif-unplugged"):
            # Builds wait on this key and re-read the ports; no lock, or a build could never hear it.
            self.rt.notify(("instance", instance.uuid))
        elif name == "network-vif-deleted":
            self.rt.spawn(self._vif_deleted(instance.uuid, port_id), name=f"compute.vif_deleted:{port_id[:8]}")
        elif name == "network-changed":
            self.rt.spawn(self.refresh_network_cache(instance.uuid), name=f"compute.refresh:{instance.name}")

    async def _vif_deleted(self: ComputeService, uuid: str, port_id: str) -> None:
        if STALE_VIF in self.rt.bugs or ZOMBIE in self.rt.bugs:
            await self._vif_deleted_like_nova(uuid, port_id)
            return
        await self.reconcile_network(uuid, point="compute.vif_deleted.before_detach")

    async def refresh_network_cache(self: ComputeService, uuid: str) -> None:
        """network-changed and the periodic heal: bring the cache in line with the truth."""
        if ZOMBIE in self.rt.bugs:
            await self._refresh_like_nova(uuid)
            return
        await self.reconcile_network(uuid, point="compute.refresh_cache.before_drop")

    async def reconcile_network(
        self: ComputeService, uuid: str, point: str = "compute.refresh_cache.before_drop"
    ) -> bool:
        """Make the cache, the plugged devices and the ports of a settled instance agree.

        Returns True when something had to change. An instance that is being
        built or deleted is left to that operation, which owns it.
        """
        async with self.rt.locks.hold("instance", uuid):
            instance = await self._live_instance(uuid)
            if instance is None or instance.vm_state not in SETTLED or instance.task_state is not None:
                return False
            return await self._reconcile_network_locked(instance, point)

    async def _reconcile_network_locked(self: ComputeService, instance: Instance, point: str) -> bool:
        uuid = instance.uuid
        async with self.store.begin() as conn:
            cached = {entry.port_id: entry for entry in await network_info.cached_vifs(conn, uuid)}
        plugged = set(await self._plugged_ports(instance))
        ours = {port.id: port for port in await self.network.list_ports(self._internal(instance), device_id=uuid)}
        changed = False
        # rule 1 (seeds 000, 004): unplug first, drop the cache entry only once the device is gone.
        for port_id in sorted((set(cached) | plugged) - set(ours)):
            await self.rt.checkpoint(point)
            if port_id in plugged:
                await self._unplug(instance, port_id)
            async with self.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)
            changed = True
        # rule 2: a port bound to us that we do not list was left by an interrupted attach.
        for port_id in sorted(set(ours) - set(cached)):
            if port_id in plugged:
                await self._unplug(instance, port_id)
            await self.give_back_port(ours[port_id])
            changed = True
        # Every port the instance lists is plugged (zombie-interface, second half); a
        # bare-metal instance that lost its node is ended by ``node_released``.
        if instance.vm_state == vm.ACTIVE and await self._still_placed(instance):
            if instance.is_baremetal and self.rt.locks.is_locked("node", instance.node or ""):
                # rule 4 (found by the explorer): the node's conductor holds it, a tear-down
                # detaching every VIF; it ends the instance when it forgets it (node_released).
                return changed
            for port_id in sorted(set(cached) & set(ours) - plugged):
                await self._plug(instance, ours[port_id])
                changed = True
        return changed

    async def _plugged_ports(self: ComputeService, instance: Instance) -> list[str]:
        if instance.is_baremetal:
            node = await self.baremetal.find_node(instance.node) if instance.node else None
            if node is None or node.instance_uuid != instance.uuid:
                return []
            return await self.baremetal.vif_list(self._internal(instance), node.uuid)
        return [iface.port_id for iface in self.hypervisor.interfaces(instance_uuid=instance.uuid)]

    async def _still_placed(self: ComputeService, instance: Instance) -> bool:
        if not instance.is_baremetal:
            return instance.host is not None
        node = await self.baremetal.find_node(instance.node) if instance.node else None
        return node is not None and node.instance_uuid == instance.uuid

    async def give_back_port(self: ComputeService, port: Port) -> None:
        """Rule 2: delete a port compute created; release (unbind, clear the device) one the user brought.

        A NIC's MAC was already replaced when its VIF left the node. A port
        that is gone meanwhile is fine.
        """
        try:
            if port.created_by == CREATED_BY_COMPUTE:
                await self.network.delete_port(RequestContext.internal(port.project_id), port.id)
            else:
                await self.network.release_port(port.id, reset_mac=False)
        except TetherError as error:
            if error.status != 404:
                raise

    # -- emulated upstream behaviour ------------------------------------------------

    async def _vif_deleted_like_nova(self: ComputeService, uuid: str, port_id: str) -> None:
        """Emulated seeds 000/004: no instance lock, and only the cache is consulted."""
        instance = await self._live_instance(uuid)
        if instance is None:
            return
        async with self.store.begin() as conn:
            listed = any(entry.port_id == port_id for entry in await network_info.cached_vifs(conn, uuid))
        if not listed:
            return  # seed 004 case B: the cache does not hold the port yet, so nothing is done
        drop_first = STALE_VIF in self.rt.bugs
        if drop_first:
            async with self.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)
        await self.rt.checkpoint("compute.vif_deleted.before_detach")
        try:
            await self._unplug(instance, port_id)
        except TetherError as error:
            self.rt.note(f"detach of VIF {port_id[:8]} failed and was ignored: {error}")
            if not drop_first:
                return
        if not drop_first:
            async with self.store.begin() as conn:
                await network_info.drop_vif(conn, uuid, port_id)

    async def _refresh_like_nova(self: ComputeService, uuid: str) -> None:
        """Emulated seed 004 case C: the refresh drops vanished ports from the cache, unplugging nothing."""
        instance = await self._live_instance(uuid)
        if instance is None:
            return
        async with self.store.begin() as conn:
            cached = [entry.port_id for entry in await network_info.cached_vifs(conn, uuid)]
        for port_id in cached:
            port = await self.network.find_port(port_id)
            if port is None or port.device_id != uuid:
                await self.rt.checkpoint("compute.refresh_cache.before_drop")
                async with self.store.begin() as conn:
                    await network_info.drop_vif(conn, uuid, port_id)


def _validate_event(event: Any) -> None:
    if not isinstance(event, dict):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute events.")
    unknown = set(event) - {"server_uuid", "name", "status", "tag"}
    if unknown:
        # jsonschema's words, as nova's validator passes them on
        names, verb = ", ".join(repr(name) for name in sorted(unknown)), "was" if len(unknown) == 1 else "were"
        raise ce.ComputeBadRequest(reason=f"Additional properties are not allowed ({names} {verb} unexpected)")
    if not is_uuid_like(event.get("server_uuid")):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute server_uuid.")
    if event.get("name") not in EVENT_NAMES:
        raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute name. Value: {event.get('name')}.")
    if event.get("status", "completed") not in EVENT_STATUSES:
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute status.")
    tag = event.get("tag")
    if tag is not None and (not isinstance(tag, str) or len(tag) > 255):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute tag.")
