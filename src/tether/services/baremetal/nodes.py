"""Nodes: enrolment, lookup, JSON-patch updates, deletion, maintenance and power."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import KW_ONLY, dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import Node, NodeHistoryEvent
from tether.domain.baremetal_drivers import HARDWARE_TYPE, INTERFACE_FIELDS, check_driver, interfaces_with_defaults
from tether.domain.baremetal_states import (
    ACTIVE,
    AVAILABLE,
    DELETE_ALLOWED_STATES,
    ENROLL,
    MANAGEABLE,
    POWER_ON,
    POWER_TARGETS,
    TRANSIENT_STATES,
)
from tether.domain.errors import baremetal as be
from tether.domain.events import InstanceReleased
from tether.domain.ids import new_uuid
from tether.domain.listing import ListQuery
from tether.drivers.hardware import FakeHardware, HardwareError
from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.jobs import ConductorJobs
from tether.services.baremetal.lookup import NodeLookup, get_node
from tether.services.baremetal.node_lock import NodeLock
from tether.services.baremetal.patches import apply_patch, changed
from tether.services.baremetal.provisioning import Provisioning
from tether.services.baremetal.transitions import node_key
from tether.services.baremetal.vifs import Vifs
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

# What a node PATCH may touch, and what each field becomes when removed (an interface removed
# goes back to its default, as ironic's check_and_update_node_interfaces makes it).
_WRITABLE = {
    "name": None, "instance_uuid": None, "instance_info": {}, "properties": {}, "extra": {},
    "driver_info": {}, "resource_class": None, "maintenance": False, "chassis_uuid": None,
    "driver": HARDWARE_TYPE, **dict.fromkeys(INTERFACE_FIELDS), "description": None, "owner": None,
    "lessee": None, "protected": False, "protected_reason": None, "retired": False, "retired_reason": None,
    "shard": None,
}
# ironic's NodePatchType.internal_attrs that Tether's nodes have.
_INTERNAL = (
    "provision_state", "target_provision_state", "power_state", "target_power_state",
    "last_error", "reservation", "provision_updated_at", "maintenance_reason", "traits", "console_enabled",
    "allocation_uuid",
)
# ironic's conductor: the states in which a node's interfaces (and an active node's resource class) may change.
_INTERFACE_UPDATE_STATES = (ENROLL, MANAGEABLE, AVAILABLE)
# Free text fields and their longest value.
_TEXTS = {"description": 4096, "owner": 255, "lessee": 255, "protected_reason": 255, "retired_reason": 255,
          "shard": 255}


@dataclass(eq=False)
class Nodes:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    hardware: FakeHardware
    lookup: NodeLookup
    lock: NodeLock
    vifs: Vifs
    jobs: ConductorJobs
    provisioning: Provisioning
    bus: MessageBus | None

    async def create_node(
        self,
        ctx: RequestContext,
        *,
        name: str | None = None,
        driver: str = "fake-hardware",
        resource_class: str | None = None,
        properties: dict[str, Any] | None = None,
        driver_info: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        chassis_uuid: str | None = None,
        uuid: str | None = None,
        fields: dict[str, Any] | None = None,
        available: bool = False,
    ) -> Node:
        """Enrol a node; ``fields`` are its optional ones (interfaces, description, owner, lessee,
        retired, retired_reason, instance_info), each checked as a PATCH checks it. ``available``: the node
        starts available rather than enrolled, as ironic's API before 1.11 enrols it."""
        require_admin(ctx, "baremetal:node:create")
        name = validation.node_name(name, creating=True)
        check_driver(driver)
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        given = dict(fields or {})
        optional = {key: value for key, value in given.items() if key not in INTERFACE_FIELDS and value is not None}
        unknown = sorted(set(optional) - set(_WRITABLE))
        if unknown:
            raise be.InvalidParameterValue(err=f"Unexpected arguments: {', '.join(unknown)}")
        now = self.rt.now()
        node = Node(
            uuid=uuid, name=name, driver=driver, provision_state=AVAILABLE if available else ENROLL,
            power_state=self.hardware.power_state(uuid),
            resource_class=validation.optional_text(resource_class, "resource_class", 80),
            properties=validation.mapping(properties, "properties"),
            driver_info=validation.mapping(driver_info, "driver_info"),
            extra=validation.mapping(extra, "extra"),
            chassis_uuid=chassis_uuid, provision_updated_at=now, created_at=now, updated_at=now,
            **interfaces_with_defaults(given),
        )
        if optional:
            self._check_node_fields(node, optional)
            node = dataclasses.replace(node, **optional)
        try:
            async with self.store.begin() as conn:
                if await repos.nodes.get(conn, uuid) is not None:
                    raise be.NodeAlreadyExists(uuid=uuid)
                if name is not None and await repos.nodes.first(conn, name=name) is not None:
                    raise be.DuplicateName(name=name)
                if chassis_uuid is not None and await repos.chassis.get(conn, chassis_uuid) is None:
                    raise be.ChassisNotFound(chassis=chassis_uuid)
                await repos.nodes.add(conn, node)
        except IntegrityError:
            raise be.DuplicateName(name=name) from None  # a concurrent create won the name
        return node

    async def get_node(self, ctx: RequestContext, ident: str) -> Node:
        require_admin(ctx, "baremetal:node:get")
        return await self.lookup.read(ident)

    async def list_nodes(
        self,
        ctx: RequestContext,
        *,
        instance_uuid: str | None = None,
        associated: bool | None = None,
        maintenance: bool | None = None,
        provision_state: str | None = None,
        resource_class: str | None = None,
    ) -> list[Node]:
        require_admin(ctx, "baremetal:node:list")
        filters: dict[str, Any] = {}
        if instance_uuid is not None:
            filters["instance_uuid"] = instance_uuid
        if maintenance is not None:
            filters["maintenance"] = maintenance
        if provision_state is not None:
            filters["provision_state"] = provision_state
        if resource_class is not None:
            filters["resource_class"] = resource_class
        async with self.store.begin() as conn:
            nodes = await repos.nodes.find(conn, order_by=("created_at", "uuid"), **filters)
        if associated is not None:
            nodes = [node for node in nodes if (node.instance_uuid is not None) == associated]
        return nodes

    async def page_nodes(self, ctx: RequestContext, query: ListQuery) -> list[Node]:
        """One page of ``query`` (filters by column, order, marker, limit) run in the database; its marker
        must be a node the filters keep (NodeNotFound otherwise, as ironic's list answers)."""
        require_admin(ctx, "baremetal:node:list")
        async with self.store.begin() as conn:
            marker = None
            if query.marker is not None:
                marker = await repos.nodes.listed_marker(conn, query)
                if marker is None:
                    raise be.NodeNotFound(node=query.marker)
            return await repos.nodes.page(conn, query, marker=marker)

    async def history(self, ctx: RequestContext, ident: str) -> list[NodeHistoryEvent]:
        """The errors the node met, oldest first (ironic's node history)."""
        require_admin(ctx, "baremetal:node:history:get")
        async with self.store.begin() as conn:
            node = await get_node(conn, ident)
            return await repos.node_history.find(conn, order_by=("created_at", "uuid"), node_uuid=node.uuid)

    async def shards(self, ctx: RequestContext) -> list[tuple[str | None, int]]:
        """Each shard (None for the nodes in none) with its number of nodes, the largest first."""
        require_admin(ctx, "baremetal:shards:get")
        async with self.store.begin() as conn:
            counted = await repos.nodes.tally(conn, ("shard",))
        return sorted(((shard, count) for shard, count in counted), key=lambda pair: pair[1], reverse=True)

    async def update_node(
        self, ctx: RequestContext, ident: str, patch: list[dict[str, Any]], *, reset_interfaces: bool = False
    ) -> Node:
        require_admin(ctx, "baremetal:node:update")
        async with self.lock.locked(ident) as node:
            patched = apply_patch(
                dataclasses.asdict(node), patch, writable=_WRITABLE, internal=_INTERNAL, mandatory=("driver",)
            )
            changes = changed(dataclasses.asdict(node), patched)
            if reset_interfaces and "driver" in changes:
                for field in INTERFACE_FIELDS:
                    if field not in changes:
                        changes[field] = None  # defaulted below, as ironic's reset_interfaces does
            if not changes:
                return dataclasses.replace(node, reservation=None)
            self._check_node_fields(node, changes)
            if "maintenance" in changes and not changes["maintenance"]:
                changes["maintenance_reason"] = None
            changes["updated_at"] = self.rt.now()
            try:
                async with self.store.begin() as conn:
                    await self._check_node_conflicts(conn, node, changes)
                    if "instance_uuid" in changes and changes["instance_uuid"] is None and node.allocation_uuid:
                        # ironic: taking the instance off a node ends the allocation that put it there.
                        changes["allocation_uuid"] = None
                        await repos.allocations.delete(conn, node.allocation_uuid)
                    await repos.nodes.update(conn, node.uuid, **changes)
            except IntegrityError:
                # A concurrent update took the name or the instance first.
                async with self.store.begin() as conn:
                    await self._check_node_conflicts(conn, node, changes)
                raise
            updated = dataclasses.replace(node, **changes)
        if "maintenance" in changes:
            self._maintenance_changed(updated)
        return await self.lookup.read(node.uuid)

    def _check_node_fields(self, node: Node, changes: dict[str, Any]) -> None:
        if "name" in changes and not validation.is_logical_name(changes["name"]) and changes["name"] is not None:
            raise be.InvalidParameterValue(
                err=f"Node {node.uuid}: Cannot change name to invalid name '{changes['name']}'"
            )
        if "instance_uuid" in changes and changes["instance_uuid"] is not None:
            changes["instance_uuid"] = validation.uuid_value(changes["instance_uuid"])
            if node.instance_uuid is not None:
                raise be.NodeAssociated(node=node.uuid, instance=node.instance_uuid)
        for field in ("instance_info", "properties", "extra", "driver_info"):
            if field in changes:
                validation.mapping(changes[field], field)
        if "resource_class" in changes:
            validation.optional_text(changes["resource_class"], "resource_class", 80)
        for flag in ("maintenance", "protected", "retired"):
            if flag in changes:
                validation.boolean(changes[flag], flag)
        for field, longest in _TEXTS.items():
            value = changes.get(field)
            if value is not None and (not isinstance(value, str) or len(value) > longest):
                raise be.InvalidParameterValue(
                    err=f"Invalid input for field/attribute {field}. Value: '{value}'. "
                        f"Expected a string of at most {longest} characters")
        if "driver" in changes:
            check_driver(changes["driver"])
        self._check_interfaces(node, changes)
        self._check_protected_and_retired(node, changes)

    @staticmethod
    def _check_interfaces(node: Node, changes: dict[str, Any]) -> None:
        """ironic's conductor update_node: interfaces change only in a stable state or in maintenance."""
        changing = [field for field in INTERFACE_FIELDS if field in changes]
        if not changing:
            return
        explicit = [field for field in changing if changes[field] is not None]
        if explicit and node.provision_state not in _INTERFACE_UPDATE_STATES and not node.maintenance:
            raise be.InvalidState(
                f"Node {node.uuid} can not have {explicit[0]} updated unless it is in one of allowed "
                f"({', '.join(_INTERFACE_UPDATE_STATES)}) states or in maintenance mode. "
                f"Current state is '{node.provision_state}'.")
        values = interfaces_with_defaults({**dataclasses.asdict(node), **changes})
        changes.update({field: values[field] for field in changing})

    @staticmethod
    def _check_protected_and_retired(node: Node, changes: dict[str, Any]) -> None:
        """ironic's _check_update_protected and _check_update_retired."""
        after = dataclasses.replace(node, **changes)
        if "protected" in changes:
            if not after.protected:
                changes["protected_reason"] = after.protected_reason = None
            elif node.provision_state != ACTIVE:
                raise be.InvalidState(
                    f"Node {node.uuid} can only be made protected in provision states 'active' or 'rescue', "
                    f"the current state is '{node.provision_state}'")
        if changes.get("protected_reason") and not after.protected:
            raise be.InvalidParameterValue(err="The protected_reason field can only be set when protected is True")
        if "retired" in changes:
            if not after.retired:
                changes["retired_reason"] = after.retired_reason = None
            elif node.provision_state == AVAILABLE:
                raise be.InvalidState(
                    f"Node {node.uuid} can not have 'retired' set in provision state 'available', the current "
                    f"state is '{node.provision_state}'")
        if changes.get("retired_reason") and not after.retired:
            raise be.InvalidParameterValue(err="The retired_reason field can only be set when retired is True")

    @staticmethod
    async def _check_node_conflicts(conn: Any, node: Node, changes: dict[str, Any]) -> None:
        name = changes.get("name")
        if name is not None:
            other = await repos.nodes.first(conn, name=name)
            if other is not None and other.uuid != node.uuid:
                raise be.DuplicateName(name=name)
        instance_uuid = changes.get("instance_uuid")
        if instance_uuid is not None:
            other = await repos.nodes.first(conn, instance_uuid=instance_uuid)
            if other is not None and other.uuid != node.uuid:
                raise be.InstanceAssociated(instance_uuid=instance_uuid, node=node.uuid)
        chassis_uuid = changes.get("chassis_uuid")
        if chassis_uuid is not None and await repos.chassis.get(conn, chassis_uuid) is None:
            raise be.ChassisNotFound(chassis=chassis_uuid)

    async def delete_node(self, ctx: RequestContext, ident: str) -> None:
        require_admin(ctx, "baremetal:node:delete")
        async with self.lock.locked(ident) as node:
            if node.protected:
                raise be.NodeProtected(node=node.uuid)
            if node.instance_uuid is not None and not node.maintenance:
                raise be.NodeAssociated(node=node.uuid, instance=node.instance_uuid)
            if node.provision_state not in DELETE_ALLOWED_STATES and not node.maintenance:
                raise be.NodeInWrongStateForDelete(
                    node=node.uuid, state=node.provision_state, valid=", ".join(DELETE_ALLOWED_STATES)
                )
            # rule 2: the ports the node's NICs held are released (unbound, MAC reset) before it goes.
            await self.vifs.detach_all(node.uuid)
            async with self.store.begin() as conn:
                await repos.node_ports.delete_where(conn, node_uuid=node.uuid)
                await repos.portgroups.delete_where(conn, node_uuid=node.uuid)
                await repos.allocations.delete_where(conn, node_uuid=node.uuid)
                await repos.volume_connectors.delete_where(conn, node_uuid=node.uuid)
                await repos.node_history.delete_where(conn, node_uuid=node.uuid)
                await repos.volume_targets.delete_where(conn, node_uuid=node.uuid)
                await repos.nodes.delete(conn, node.uuid)
            # Any job still waiting on the node finds it gone (rule 3) and ends.
            self.jobs.retire(node.uuid)
            self.rt.note(f"node {node.uuid}: deleted in {node.provision_state}")
        self.rt.notify(node_key(node.uuid))
        if node.instance_uuid is not None and self.bus is not None:
            self.bus.publish(InstanceReleased(node.instance_uuid, node.uuid))

    async def set_maintenance(
        self, ctx: RequestContext, ident: str, on: bool, reason: str | None = None
    ) -> Node:
        require_admin(ctx, "baremetal:node:set_maintenance")
        validation.boolean(on, "maintenance")
        async with self.lock.locked(ident) as node:
            values = {"maintenance": on, "maintenance_reason": reason if on else None, "updated_at": self.rt.now()}
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, node.uuid, **values)
            updated = dataclasses.replace(node, **values)
        if node.maintenance != on:
            self._maintenance_changed(updated)
        return await self.lookup.read(node.uuid)

    def _maintenance_changed(self, node: Node) -> None:
        self.rt.notify(node_key(node.uuid))
        # rule 3: a job that stopped because the node went into maintenance resumes when it leaves it.
        if not node.maintenance and node.provision_state in TRANSIENT_STATES and not self.jobs.running(node.uuid):
            self.provisioning.start_job_for(node, resume=True)

    async def set_power_state(self, ctx: RequestContext, ident: str, target: str) -> Node:
        require_admin(ctx, "baremetal:node:set_power_state")
        desired = POWER_TARGETS.get(target) if isinstance(target, str) else None
        if desired is None:
            raise be.InvalidParameterValue(
                err=f"The requested power state {target!r} is not valid; expected one of "
                    f"{', '.join(sorted(POWER_TARGETS))}"
            )
        async with self.lock.locked(ident) as node:
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, node.uuid, target_power_state=desired, last_error=None)
            try:
                if target in ("rebooting", "reboot", "soft rebooting"):
                    self.hardware.set_power(node.uuid, False)
                power_state = self.hardware.set_power(node.uuid, desired == POWER_ON)
                values: dict[str, Any] = {"power_state": power_state}
            except HardwareError as error:
                # ironic answers 202 and reports a failed power action in last_error.
                values = {"last_error": f"Failed to change power state to '{desired}' by '{target}'. "
                                        f"Error: {error}"}
            async with self.store.begin() as conn:
                await repos.nodes.update(conn, node.uuid, target_power_state=None, updated_at=self.rt.now(), **values)
        return await self.lookup.read(node.uuid)
