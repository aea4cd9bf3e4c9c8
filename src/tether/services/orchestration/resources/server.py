"""OS::Nova::Server: a server, its internal ports made first and deleted first (seed 001)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.domain import compute_states as vm
from tether.domain.errors import compute as ce
from tether.domain.orchestration.stacks import StackResource
from tether.runtime.runtime import Runtime
from tether.services.compute import ComputeService
from tether.services.context import RequestContext
from tether.services.orchestration.internal_ports import InternalPorts, delete_or_hand_over
from tether.services.orchestration.lookups import Lookups
from tether.services.orchestration.resources.base import (
    ResourceFailed,
    Run,
    changed,
    changes_in_place,
    claim_physical_id,
    public,
)
from tether.store.database import Store

# What an update changes without replacing the server (heat's update_allowed properties Tether acts on).
IN_PLACE = ("name", "metadata", "flavor", "image", "flavor_update_policy", "image_update_policy")

# How often a wait looks again without being told: compute tells (``instance_key``), this is the backstop.
POLL_SECONDS = 10.0


# What becomes of a server's ports when it is replaced; emulation supplies upstream's version.
PreparePorts = Callable[[InternalPorts, Run, str], Awaitable[None]]


def instance_key(uuid: str) -> tuple[str, str]:
    """What compute's state changes are announced on (see ``Cloud``), and a stack's server waits on."""
    return ("instance", uuid)


@dataclass(eq=False)
class Server:
    store: Store
    rt: Runtime
    rng: random.Random
    compute: ComputeService
    lookups: Lookups
    ports: InternalPorts
    prepare_ports: PreparePorts = delete_or_hand_over
    # The servers a stack is waiting on now: only their state changes are worth a signal (a signal
    # nobody waits for would still be one more step for the race explorer to order).
    awaited: set[str] = field(default_factory=set)

    def instance_changed(self, uuid: str) -> None:
        if uuid in self.awaited:
            self.rt.notify(instance_key(uuid))

    async def create(self, run: Run) -> None:
        uuid = await claim_physical_id(self.store, self.rng, run.resource)
        props = run.properties
        nics = await self.ports.nics(run, list(props.get("networks") or []))
        if await self.compute.live_instance(uuid) is not None:
            return
        flavor_id = await self.lookups.flavor_id(run.ctx, props["flavor"])
        image_id = await self.lookups.image_id(run.ctx, props["image"]) if props.get("image") else None
        await self.compute.create_server(
            run.ctx, name=props.get("name") or run.physical_name, flavor_id=flavor_id, image_id=image_id,
            networks=nics if props.get("networks") else "auto", metadata=props.get("metadata") or None, uuid=uuid)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        await self.prepare_ports(self.ports, old, new.resource.id)

    def in_place(self, resource: StackResource, new: Mapping[str, Any]) -> bool:
        """heat's Server: a new name, metadata, flavor (resized) or image (rebuilt) is taken in place, unless
        the template's update policy says REPLACE; anything else changed replaces the server."""
        updatable = set(IN_PLACE)
        if new.get("flavor_update_policy") == "REPLACE":
            updatable.discard("flavor")
        if new.get("image_update_policy") == "REPLACE":
            updatable.discard("image")
        return changes_in_place(resource, new, frozenset(updatable))

    async def update(self, run: Run, old: Mapping[str, Any]) -> None:
        """As heat's handle_update: rename, set the metadata, then resize (confirmed in ``wait_ready``, as
        heat's check_update_complete confirms) or rebuild; compute's state table says what may start.
        Each is a request of its own (its own request id), as heat's calls to nova are."""
        uuid, props = run.resource.physical_id or "", run.properties
        difference = changed(old, props)
        if "name" in difference:
            await self.compute.update_server(run.ctx.fresh(), uuid, name=props.get("name") or run.physical_name)
        if "metadata" in difference:
            await self.compute.set_server_metadata(run.ctx.fresh(), uuid, dict(props.get("metadata") or {}),
                                                   replace=True)
        if "flavor" in difference:
            flavor_id = await self.lookups.flavor_id(run.ctx, props["flavor"])
            await self.compute.resize_server(run.ctx.fresh(), uuid, flavor_id)
        if "image" in difference and props.get("image"):
            image_id = await self.lookups.image_id(run.ctx, props["image"])
            await self.compute.rebuild_server(
                run.ctx.fresh(), uuid, image_id,
                preserve_ephemeral=props.get("image_update_policy") == "REBUILD_PRESERVE_EPHEMERAL")

    async def restore(self, run: Run) -> None:
        """heat's restore_prev_rsrc: the ports handed to the replacement go back on the old server."""
        uuid = run.resource.physical_id or ""
        if await self.compute.live_instance(uuid) is None:
            return
        for row in await self.ports.owned(run.resource.id):
            port = await self.ports.network.find_port(row.port_id)
            if port is not None and port.device_id != uuid:
                await self.compute.attach_interface(run.ctx, uuid, port_id=row.port_id)

    async def wait_ready(self, run: Run) -> None:
        uuid = run.resource.physical_id or ""
        self.awaited.add(uuid)
        try:
            await self._wait_ready(run, uuid)
        finally:
            self.awaited.discard(uuid)

    async def _wait_ready(self, run: Run, uuid: str) -> None:
        flavor = run.properties.get("flavor")
        flavor_id = await self.lookups.flavor_id(run.ctx, flavor) if flavor else None
        while True:
            instance = await self.compute.live_instance(uuid)
            if instance is None:
                raise ResourceFailed(reason=f"Failed to find instance {uuid}")
            if instance.vm_state == vm.ACTIVE and instance.task_state is None:
                if flavor_id is not None and instance.flavor_id != flavor_id:
                    # a resize that compute refused or undid: heat's check_resize says so
                    raise ResourceFailed(reason=f"Resizing to '{flavor}' failed, status 'ACTIVE'")
                return
            if instance.vm_state == vm.RESIZED and instance.task_state is None:
                await self.compute.confirm_resize(run.ctx.fresh(), uuid)  # heat confirms its own resize
            if instance.vm_state == vm.ERROR:
                fault = (await self.compute.server_record(run.ctx, uuid)).fault
                why = f"Message: {fault.message}, Code: {fault.code}" if fault else "Unknown"
                raise ResourceFailed(reason=f'Went to status ERROR due to "{why}"')
            await self.rt.wait(instance_key(uuid), POLL_SECONDS, "orchestration.server.wait_active", guard=True)

    async def delete(self, run: Run) -> None:
        # heat's Server._delete: the internal ports first, then the server (seed 001)
        await self.ports.delete(run)
        if run.resource.physical_id:
            with contextlib.suppress(ce.InstanceNotFound):
                await self.compute.delete_server(run.ctx, run.resource.physical_id)

    async def wait_gone(self, run: Run) -> None:
        uuid = run.resource.physical_id or ""
        self.awaited.add(uuid)
        try:
            await self._wait_gone(uuid)
        finally:
            self.awaited.discard(uuid)

    async def _wait_gone(self, uuid: str) -> None:
        while True:
            instance = await self.compute.live_instance(uuid)
            if instance is None:
                return
            if instance.vm_state == vm.ERROR and instance.task_state is None:
                raise ResourceFailed(reason=f"Server {instance.name} delete failed: (500) Unknown")
            await self.rt.wait(instance_key(uuid), POLL_SECONDS, "orchestration.server.wait_deleted", guard=True)


    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        record = await self.compute.server_record(ctx, resource.physical_id or "")
        networks: dict[str, list[str]] = {}
        addresses: dict[str, list[dict[str, Any]]] = {}
        for vif in record.vifs:
            name = record.network_names.get(vif.network_id, vif.network_id)
            ips = [ip["ip_address"] for ip in vif.fixed_ips]
            networks.setdefault(name, []).extend(ips)
            networks.setdefault(vif.network_id, []).extend(ips)
            addresses.setdefault(name, []).extend(
                {"addr": ip, "version": 6 if ":" in ip else 4, "OS-EXT-IPS-MAC:mac_addr": vif.address,
                 "OS-EXT-IPS:type": "fixed", "port": vif.port_id} for ip in ips)
        first = next((ip["ip_address"] for vif in record.vifs for ip in vif.fixed_ips), "")
        instance = record.instance
        return {"name": instance.name, "first_address": first, "networks": networks, "addresses": addresses,
                "accessIPv4": "", "accessIPv6": "", "instance_name": instance.name,
                "show": public(instance)}
