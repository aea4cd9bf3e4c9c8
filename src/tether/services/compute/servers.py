"""Creating and deleting servers: the API-facing half (reading them is ``queries``).

Builds and deletes return at once (nova's 202/204) and run as background
work; both record a durable intent before their first side effect (rule 5).
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from tether.domain import compute_states as vm
from tether.domain.aggregates import zone_of
from tether.domain.compute import Flavor, Instance
from tether.domain.errors import TetherError
from tether.domain.errors import compute as ce
from tether.domain.errors import image as ie
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state, quotas, records, server_groups
from tether.services.compute.build import Build
from tether.services.compute.delete import Delete
from tether.services.compute.flavors import Flavors
from tether.services.compute.instances import visible_instance
from tether.services.compute.keypairs import boot_key
from tether.services.compute.server_action import refuse_if_locked
from tether.services.compute.translate import network_error
from tether.services.context import RequestContext
from tether.store import intents, repos
from tether.store.database import Store, StoreConnection

if TYPE_CHECKING:
    from tether.services.baremetal import BaremetalService
    from tether.services.image import ImageService
    from tether.services.network import NetworkService

MAX_NAME = 255


@dataclass(eq=False)
class Servers:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    flavors: Flavors
    image: ImageService
    network: NetworkService
    baremetal: BaremetalService
    build: Build
    delete: Delete

    async def create_server(
        self,
        ctx: RequestContext,
        *,
        name: str,
        flavor_id: str,
        image_id: str | None,
        networks: str | list[dict[str, Any]] = "auto",
        metadata: dict[str, str] | None = None,
        key_name: str | None = None,
        uuid: str | None = None,
        group_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> Instance:
        """Accept a server and start its build. ``uuid``: for internal callers that name the server
        before asking for it (a stack records the id first, so a crash cannot lose the server).
        ``details``: access_ip_v4/6, description, tags, as the API validated them."""
        servers, _ = await self.create_servers(ctx, name=name, flavor_id=flavor_id, image_id=image_id,
                                               networks=networks, metadata=metadata, key_name=key_name, uuid=uuid,
                                               group_id=group_id, details=details)
        return servers[0]

    async def create_servers(
        self,
        ctx: RequestContext,
        *,
        name: str,
        flavor_id: str,
        image_id: str | None,
        networks: str | list[dict[str, Any]] = "auto",
        metadata: dict[str, str] | None = None,
        key_name: str | None = None,
        uuid: str | None = None,
        group_id: str | None = None,
        details: dict[str, Any] | None = None,
        min_count: int = 1,
        max_count: int = 1,
        security_groups: list[str] | None = None,
    ) -> tuple[list[Instance], str]:
        """Accept ``max_count`` servers, or as many as the quota allows if that is at least ``min_count``
        (nova's multi-create), each named ``name-N`` when more than one is asked for; and their
        reservation id. All are recorded in one transaction, with the quota that counts them."""
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:servers:create")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise ce.ComputeBadRequest(reason="Invalid input for field/attribute name.")
        metadata = _validated_metadata(metadata)
        # nova's create answers 400, not 404, for a flavor, image, network or port that is not there;
        # a private flavor is not there for a non-admin (GET /flavors/{id} would be a 404 too)
        try:
            flavor = await self.flavors.visible_flavor(ctx, flavor_id)
        except ce.FlavorNotFound:
            raise ce.ComputeBadRequest(reason="Invalid flavorRef provided.") from None
        if image_id is not None:
            try:
                image = await self.image.get_image(ctx, image_id)
            except ie.ImageNotFound:
                raise ce.ComputeBadRequest(reason="Can not find requested image") from None
            if image.status != "active":
                raise ce.ComputeBadRequest(reason=f"Image {image_id} is not active.")
            _flavor_fits_image(flavor, image.min_ram, image.min_disk, image.size)
        try:
            requested = await self._resolve_networks(ctx, networks)
        except (ce.NetworkNotFound, ce.PortNotFound) as error:
            raise ce.ComputeBadRequest(reason=error.message) from None
        if security_groups is not None:
            group_ids = await self._resolve_security_groups(ctx, security_groups)
            # nova hands the groups to the ports it creates; a port the user brought keeps its own
            requested = [{**entry, "security_groups": group_ids} if "network_id" in entry else entry
                         for entry in requested]
        if max_count > 1:
            _one_port_or_address_per_server(requested)
        now = self.rt.now()
        project_id = ctx.project_id or ""
        reservation_id = f"r-{new_uuid(self.rng).replace('-', '')[:8]}"
        async with self.store.begin() as conn:
            if (details or {}).get("pinned_availability_zone") is not None:
                await _zone_available(conn, details["pinned_availability_zone"])
            if key_name is not None:
                await boot_key(conn, ctx.user_id, key_name)
            await quotas.check_metadata(conn, project_id, ctx.user_id, len(metadata))
            await quotas.check_injected_files(conn, project_id, ctx.user_id,
                                              (details or {}).get("injected_files") or [])
            count = await quotas.check_boot(conn, project_id, ctx.user_id, flavor, min_count, max_count)
            instances = [Instance(
                uuid=(uuid if index == 0 and uuid else new_uuid(self.rng)),
                name=f"{name}-{index + 1}" if max_count > 1 else name, project_id=project_id,
                user_id=ctx.user_id, flavor_id=flavor.id, image_id=image_id, vm_state=vm.BUILDING,
                task_state=vm.SCHEDULING, is_baremetal=flavor.is_baremetal, requested_networks=requested,
                metadata=dict(metadata), key_name=key_name, deadline=now + vm.BUILD_TIMEOUT, created_at=now,
                updated_at=now, reservation_id=reservation_id, launch_index=index, **(details or {}),
            ) for index in range(count)]
            for instance in instances:
                await repos.instances.add(conn, instance)
                if group_id is not None:
                    await server_groups.join(conn, ctx, group_id, instance.uuid)
                await records.start_action(conn, ctx, instance.uuid, "create", now)
                await intents.record(conn, f"build:{instance.uuid}", "build", instance.uuid,
                                     {"request_id": ctx.request_id}, now)
        for instance in instances:
            self.rt.note(f"server {instance.name} ({instance.uuid}) accepted")
            self.rt.spawn(self.build.run(instance.uuid, ctx.request_id), name=f"compute.build:{instance.name}")
        return instances, reservation_id

    async def _resolve_security_groups(self, ctx: RequestContext, names: list[str]) -> list[str]:
        """nova's ``_process_security_groups``: each name (or id) names exactly one of the project's groups."""
        visible = await self.network.list_security_groups(ctx, project_id=ctx.project_id) \
            if ctx.project_id else []
        found: list[str] = []
        for name in names:
            matches = [group.id for group in visible if group.name == name]
            if len(matches) > 1:
                raise ce.ComputeConflict(reason=f"Multiple security groups found matching '{name}'. "
                                                "Use an ID to be more specific.")
            if not matches:
                matches = [group.id for group in visible if group.id == name]
            if not matches:
                raise ce.ComputeBadRequest(reason=f"Security group {name} not found.")
            if matches[0] not in found:
                found.append(matches[0])
        return found

    async def _resolve_networks(
        self, ctx: RequestContext, networks: str | list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        if networks == "none":
            return []
        if networks == "auto":
            visible = [n for n in await self.network.list_networks(ctx) if not n.external]
            own = [n for n in visible if n.project_id == ctx.project_id]
            candidates = own if len(own) == 1 else visible
            if not candidates:
                raise ce.NoNetworksFound(project_id=ctx.project_id)
            if len(candidates) > 1:
                raise ce.MultipleNetworksFound()
            return [{"network_id": candidates[0].id}]
        if not isinstance(networks, list):
            raise ce.ComputeBadRequest(reason="Invalid input for field/attribute networks.")
        resolved: list[dict[str, Any]] = []
        seen_ports: set[str] = set()
        for entry in networks:
            if not isinstance(entry, dict):
                raise ce.ComputeBadRequest(reason="Invalid input for field/attribute networks.")
            port_id, net_id = entry.get("port"), entry.get("uuid")
            fixed_ip, tag = entry.get("fixed_ip"), entry.get("tag")
            if tag is not None and (not isinstance(tag, str) or len(tag) > 60):
                raise ce.ComputeBadRequest(reason="Invalid input for field/attribute tag.")
            if port_id is not None:
                if not is_uuid_like(port_id):
                    raise ce.ComputeBadRequest(reason=f"Bad port format: port uuid is not in proper format ({port_id})")
                if port_id in seen_ports:
                    raise ce.ComputeBadRequest(reason=f"Port {port_id} is duplicated in the request.")
                seen_ports.add(port_id)
                try:
                    port = await self.network.get_port(ctx, port_id)
                except TetherError as error:
                    raise network_error(error, port_id=port_id) from None
                if port.device_id:
                    raise ce.PortInUse(port_id=port_id)
                resolved.append({"port_id": port_id, "tag": tag})
                continue
            if not is_uuid_like(net_id):
                raise ce.ComputeBadRequest(
                    reason=f"Bad networks format: network uuid is not in proper format ({net_id})")
            try:
                await self.network.get_network(ctx, net_id)
            except TetherError as error:
                raise network_error(error, network_id=net_id) from None
            if fixed_ip is not None:
                try:
                    ipaddress.ip_address(fixed_ip)
                except ValueError:
                    raise ce.ComputeBadRequest(reason=f"Invalid fixed IP address ({fixed_ip})") from None
            resolved.append({"network_id": net_id, "fixed_ip": fixed_ip, "tag": tag})
        return resolved

    # -- deleting ----------------------------------------------------------------

    async def delete_server(self, ctx: RequestContext, uuid: str) -> None:
        if not ctx.can_write:
            raise ce.ComputeForbidden(action="os_compute_api:servers:delete")
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            refuse_if_locked(ctx, instance)
            if instance.task_state == vm.DELETING:
                return
            await instance_state.move(conn, instance, "delete", now, deadline=now + vm.DELETE_TIMEOUT)
            await records.start_action(conn, ctx, uuid, "delete", now)
            await intents.record(conn, f"delete:{uuid}", "delete", uuid, {"request_id": ctx.request_id}, now)
        self.rt.note(f"server {instance.name} delete requested")
        # A build waiting on its node polls task_state and aborts (seed 003's legitimate case).
        self.rt.notify(("instance", uuid))
        if instance.is_baremetal and instance.node:
            self.rt.notify(self.baremetal.node_key(instance.node))
        self.rt.spawn(self.delete.run(uuid, ctx.request_id), name=f"compute.delete:{instance.name}")


def _one_port_or_address_per_server(requested: list[dict[str, Any]]) -> None:
    """nova's refusals of a multi-create that would give one port or one address to several servers."""
    if any(entry.get("port_id") for entry in requested):
        raise ce.ComputeBadRequest(reason="Unable to launch multiple instances with a single configured port ID. "
                                          "Please launch your instance one by one with different ports.")
    if any(entry.get("fixed_ip") for entry in requested):
        raise ce.ComputeBadRequest(reason="Failed to launch instances: max_count cannot be greater than 1 if an "
                                          "fixed_ip is specified.")


def _validated_metadata(metadata: dict[str, str] | None) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= 255 and len(v) <= 255
        for k, v in metadata.items()
    ):
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute metadata.")
    return dict(metadata)


async def _zone_available(conn: StoreConnection, zone: str) -> None:
    """nova's check of a requested zone: one where an enabled compute service is (aggregates name them)."""
    aggregates = await repos.aggregates.find(conn)
    hypervisors = await repos.hypervisors.find(conn, status="enabled")
    if zone not in {zone_of(hypervisor.hostname, aggregates) for hypervisor in hypervisors}:
        raise ce.ComputeBadRequest(reason="The requested availability zone is not available")


def _flavor_fits_image(flavor: Flavor, min_ram: int, min_disk: int, size: int | None) -> None:
    """nova's _validate_flavor_image: the image's min_ram, then (for a flavor with a root disk) its size and
    min_disk, in nova's words and order."""
    if min_ram and flavor.ram < min_ram:
        raise ce.ComputeBadRequest(reason="Flavor's memory is too small for requested image.")
    if not flavor.disk:
        return
    flavor_bytes = flavor.disk * 1024**3
    if size and size > flavor_bytes:
        raise ce.ComputeBadRequest(reason=f"Flavor's disk is too small for requested image. Flavor disk is "
                                          f"{flavor_bytes} bytes, image is {size} bytes.")
    if min_disk and min_disk * 1024**3 > flavor_bytes:
        raise ce.ComputeBadRequest(reason=f"Flavor's disk is smaller than the minimum size specified in image "
                                          f"metadata. Flavor disk is {flavor_bytes} bytes, minimum size is "
                                          f"{min_disk * 1024**3} bytes.")
