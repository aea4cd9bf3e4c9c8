"""Chassis: groups of nodes, kept because Tempest's ironic plugin creates them."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

from tether.domain.baremetal import Chassis
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.patches import apply_patch, changed
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store


@dataclass(eq=False)
class ChassisRegistry:
    store: Store
    rt: Runtime
    rng: random.Random

    async def create_chassis(
        self,
        ctx: RequestContext,
        *,
        description: str | None = None,
        extra: dict[str, Any] | None = None,
        uuid: str | None = None,
    ) -> Chassis:
        require_admin(ctx, "baremetal:chassis:create")
        description = validation.optional_text(description, "description", 255)
        extra = validation.mapping(extra, "extra")
        uuid = validation.uuid_value(uuid) if uuid is not None else new_uuid(self.rng)
        now = self.rt.now()
        chassis = Chassis(uuid=uuid, description=description, extra=extra, created_at=now, updated_at=now)
        async with self.store.begin() as conn:
            if await repos.chassis.get(conn, uuid) is not None:
                raise be.ChassisAlreadyExists(uuid=uuid)
            await repos.chassis.add(conn, chassis)
        return chassis

    async def get_chassis(self, ctx: RequestContext, uuid: str) -> Chassis:
        require_admin(ctx, "baremetal:chassis:get")
        async with self.store.begin() as conn:
            chassis = await repos.chassis.get(conn, uuid.lower()) if is_uuid_like(uuid) else None
        if chassis is None:
            raise be.ChassisNotFound(chassis=uuid)
        return chassis

    async def list_chassis(self, ctx: RequestContext) -> list[Chassis]:
        require_admin(ctx, "baremetal:chassis:get")
        async with self.store.begin() as conn:
            return await repos.chassis.find(conn, order_by=("created_at", "uuid"))

    async def update_chassis(self, ctx: RequestContext, uuid: str, patch: list[dict[str, Any]]) -> Chassis:
        require_admin(ctx, "baremetal:chassis:update")
        chassis = await self.get_chassis(ctx, uuid)
        current = dataclasses.asdict(chassis)
        changes = changed(current, apply_patch(current, patch, writable={"description": None, "extra": {}}))
        if "description" in changes:
            validation.optional_text(changes["description"], "description", 255)
        if "extra" in changes:
            changes["extra"] = validation.mapping(changes["extra"], "extra")
        if not changes:
            return chassis
        changes["updated_at"] = self.rt.now()
        async with self.store.begin() as conn:
            if not await repos.chassis.update(conn, chassis.uuid, **changes):
                raise be.ChassisNotFound(chassis=uuid)
        return dataclasses.replace(chassis, **changes)

    async def delete_chassis(self, ctx: RequestContext, uuid: str) -> None:
        require_admin(ctx, "baremetal:chassis:delete")
        chassis = await self.get_chassis(ctx, uuid)
        async with self.store.begin() as conn:
            if await repos.nodes.count(conn, chassis_uuid=chassis.uuid):
                raise be.ChassisNotEmpty(chassis=chassis.uuid)
            await repos.chassis.delete(conn, chassis.uuid)
