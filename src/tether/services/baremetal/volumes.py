"""A node's volume connectors and volume targets (ironic's boot-from-volume records).

Tether keeps them as ironic does, with ironic's uniqueness and power-state rules; no
storage interface acts on them (fake-hardware's storage interface is ``noop``).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import KW_ONLY, dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import Node, VolumeConnector, VolumeTarget
from tether.domain.baremetal_states import ENROLL, MANAGEABLE, POWER_OFF
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.lookup import get_node
from tether.services.baremetal.node_lock import NodeLock
from tether.services.baremetal.patches import apply_patch, changed
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

# ironic's DELETE_ALLOWED_STATES (without the adoption states Tether has no use for): there a volume
# record may go whatever the node's power; elsewhere only with the node powered off.
_DELETE_ANY_POWER = (MANAGEABLE, ENROLL)
_CONNECTOR_WRITABLE = {"connector_id": None, "extra": {}, "node_uuid": None, "type": None}
_TARGET_WRITABLE = {"boot_index": None, "extra": {}, "node_uuid": None, "properties": {}, "volume_id": None,
                    "volume_type": None}


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise be.InvalidParameterValue(err=f"Invalid input for field/attribute {field}. Value: '{value}'. "
                                           "Wrong type. Expected 'str'")
    return value


def _boot_index(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise be.InvalidParameterValue(err=f"Invalid input for field/attribute boot_index. Value: '{value}'. "
                                           "Wrong type. Expected 'int'")
    return value


def _powered_off_for(node: Node, action: str, *, deleting: bool) -> None:
    if deleting and node.provision_state in _DELETE_ANY_POWER:
        return
    if node.power_state != POWER_OFF:
        raise be.InvalidStateRequested(action=action, node=node.uuid, state=node.power_state)


async def _node_named_in_body(conn: StoreConnection, node_uuid: Any) -> Node:
    """The node a body names: ironic answers 400 (InvalidInput), not 404, when there is none."""
    try:
        return await get_node(conn, validation.uuid_value(node_uuid))
    except be.NodeNotFound:
        raise be.Invalid(reason=f"Invalid input for field/attribute node_uuid. Value: '{node_uuid}'. ") from None


@dataclass(eq=False)
class Volumes:
    store: Store
    rt: Runtime
    rng: random.Random
    _: KW_ONLY
    lock: NodeLock

    # -- connectors ------------------------------------------------------------------

    @staticmethod
    async def _connector(conn: StoreConnection, uuid: str) -> VolumeConnector:
        connector = await repos.volume_connectors.get(conn, uuid.lower()) if is_uuid_like(uuid) else None
        if connector is None:
            raise be.VolumeConnectorNotFound(connector=uuid)
        return connector

    async def create_connector(self, ctx: RequestContext, *, node_uuid: str, type: str, connector_id: str,
                               extra: dict[str, Any] | None = None, uuid: str | None = None) -> VolumeConnector:
        require_admin(ctx, "baremetal:volume:create")
        extra = validation.mapping(extra, "extra")
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        now = self.rt.now()
        try:
            async with self.store.begin() as conn:
                node = await _node_named_in_body(conn, node_uuid)
                if await repos.volume_connectors.get(conn, uuid) is not None:
                    raise be.VolumeConnectorAlreadyExists(uuid=uuid)
                if await repos.volume_connectors.first(conn, type=type, connector_id=connector_id):
                    raise be.VolumeConnectorTypeAndIdAlreadyExists(type=type, connector_id=connector_id)
                connector = VolumeConnector(uuid=uuid, node_uuid=node.uuid, type=type, connector_id=connector_id,
                                            extra=extra, created_at=now, updated_at=now)
                await repos.volume_connectors.add(conn, connector)
        except IntegrityError:
            raise be.VolumeConnectorTypeAndIdAlreadyExists(type=type, connector_id=connector_id) from None
        return connector

    async def get_connector(self, ctx: RequestContext, uuid: str) -> VolumeConnector:
        require_admin(ctx, "baremetal:volume:get")
        async with self.store.begin() as conn:
            return await self._connector(conn, uuid)

    async def list_connectors(self, ctx: RequestContext, *, node: str | None = None) -> list[VolumeConnector]:
        require_admin(ctx, "baremetal:volume:get")
        async with self.store.begin() as conn:
            filters = {"node_uuid": (await get_node(conn, node)).uuid} if node is not None else {}
            return await repos.volume_connectors.find(conn, order_by=("created_at", "uuid"), **filters)

    async def update_connector(self, ctx: RequestContext, uuid: str, patch: list[dict[str, Any]]) -> VolumeConnector:
        require_admin(ctx, "baremetal:volume:update")
        connector = await self.get_connector(ctx, uuid)
        current = dataclasses.asdict(connector)
        patched = apply_patch(current, patch, writable=_CONNECTOR_WRITABLE, mandatory=("connector_id", "type",
                                                                                       "node_uuid"))
        changes = changed(current, patched)
        for field in ("connector_id", "type"):
            if field in changes:
                _text(changes[field], field)
        if "extra" in changes:
            validation.mapping(changes["extra"], "extra")
        if not changes:
            return connector
        async with self.lock.locked(connector.node_uuid), self.store.begin() as conn:
            node = await get_node(conn, connector.node_uuid)
            _powered_off_for(node, "volume connector update", deleting=False)
            if "node_uuid" in changes:
                changes["node_uuid"] = (await _node_named_in_body(conn, changes["node_uuid"])).uuid
            kind = changes.get("type", connector.type)
            identifier = changes.get("connector_id", connector.connector_id)
            other = await repos.volume_connectors.first(conn, type=kind, connector_id=identifier)
            if other is not None and other.uuid != connector.uuid:
                raise be.VolumeConnectorTypeAndIdAlreadyExists(type=kind, connector_id=identifier)
            changes["updated_at"] = self.rt.now()
            await repos.volume_connectors.update(conn, connector.uuid, **changes)
        return dataclasses.replace(connector, **changes)

    async def delete_connector(self, ctx: RequestContext, uuid: str) -> None:
        require_admin(ctx, "baremetal:volume:delete")
        connector = await self.get_connector(ctx, uuid)
        async with self.lock.locked(connector.node_uuid), self.store.begin() as conn:
            node = await get_node(conn, connector.node_uuid)
            _powered_off_for(node, "volume connector deletion", deleting=True)
            await repos.volume_connectors.delete(conn, connector.uuid)

    # -- targets ---------------------------------------------------------------------

    @staticmethod
    async def _target(conn: StoreConnection, uuid: str) -> VolumeTarget:
        target = await repos.volume_targets.get(conn, uuid.lower()) if is_uuid_like(uuid) else None
        if target is None:
            raise be.VolumeTargetNotFound(target=uuid)
        return target

    async def create_target(self, ctx: RequestContext, *, node_uuid: str, volume_type: str, volume_id: str,
                            boot_index: int, properties: dict[str, Any] | None = None,
                            extra: dict[str, Any] | None = None, uuid: str | None = None) -> VolumeTarget:
        require_admin(ctx, "baremetal:volume:create")
        properties = validation.mapping(properties, "properties")
        extra = validation.mapping(extra, "extra")
        boot_index = _boot_index(boot_index)
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        now = self.rt.now()
        try:
            async with self.store.begin() as conn:
                node = await _node_named_in_body(conn, node_uuid)
                if await repos.volume_targets.get(conn, uuid) is not None:
                    raise be.VolumeTargetAlreadyExists(uuid=uuid)
                if await repos.volume_targets.first(conn, node_uuid=node.uuid, boot_index=boot_index):
                    raise be.VolumeTargetBootIndexAlreadyExists(boot_index=boot_index)
                target = VolumeTarget(uuid=uuid, node_uuid=node.uuid, volume_type=volume_type, volume_id=volume_id,
                                      boot_index=boot_index, properties=properties, extra=extra,
                                      created_at=now, updated_at=now)
                await repos.volume_targets.add(conn, target)
        except IntegrityError:
            raise be.VolumeTargetBootIndexAlreadyExists(boot_index=boot_index) from None
        return target

    async def get_target(self, ctx: RequestContext, uuid: str) -> VolumeTarget:
        require_admin(ctx, "baremetal:volume:get")
        async with self.store.begin() as conn:
            return await self._target(conn, uuid)

    async def list_targets(self, ctx: RequestContext, *, node: str | None = None) -> list[VolumeTarget]:
        require_admin(ctx, "baremetal:volume:get")
        async with self.store.begin() as conn:
            filters = {"node_uuid": (await get_node(conn, node)).uuid} if node is not None else {}
            return await repos.volume_targets.find(conn, order_by=("created_at", "uuid"), **filters)

    async def update_target(self, ctx: RequestContext, uuid: str, patch: list[dict[str, Any]]) -> VolumeTarget:
        require_admin(ctx, "baremetal:volume:update")
        target = await self.get_target(ctx, uuid)
        current = dataclasses.asdict(target)
        patched = apply_patch(current, patch, writable=_TARGET_WRITABLE,
                              mandatory=("boot_index", "node_uuid", "volume_id", "volume_type"))
        changes = changed(current, patched)
        for field in ("volume_id", "volume_type"):
            if field in changes:
                _text(changes[field], field)
        if "boot_index" in changes:
            _boot_index(changes["boot_index"])
        for field in ("extra", "properties"):
            if field in changes:
                validation.mapping(changes[field], field)
        if not changes:
            return target
        async with self.lock.locked(target.node_uuid), self.store.begin() as conn:
            node = await get_node(conn, target.node_uuid)
            _powered_off_for(node, "volume target update", deleting=False)
            if "node_uuid" in changes:
                changes["node_uuid"] = (await _node_named_in_body(conn, changes["node_uuid"])).uuid
            node_uuid = changes.get("node_uuid", target.node_uuid)
            boot_index = changes.get("boot_index", target.boot_index)
            other = await repos.volume_targets.first(conn, node_uuid=node_uuid, boot_index=boot_index)
            if other is not None and other.uuid != target.uuid:
                raise be.VolumeTargetBootIndexAlreadyExists(boot_index=boot_index)
            changes["updated_at"] = self.rt.now()
            await repos.volume_targets.update(conn, target.uuid, **changes)
        return dataclasses.replace(target, **changes)

    async def delete_target(self, ctx: RequestContext, uuid: str) -> None:
        require_admin(ctx, "baremetal:volume:delete")
        target = await self.get_target(ctx, uuid)
        async with self.lock.locked(target.node_uuid), self.store.begin() as conn:
            node = await get_node(conn, target.node_uuid)
            _powered_off_for(node, "volume target deletion", deleting=True)
            await repos.volume_targets.delete(conn, target.uuid)
