"""Inspection rules (ironic's, from 1.96): kept, listed, patched and deleted.

fake-hardware's inspection gathers no inventory, so no rule ever finds data to act on, as with
ironic's fake inspect interface.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.domain.inspection_rules import InspectionRule
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.patches import apply_patch
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store

Check = Callable[[dict[str, Any]], None]
_WRITABLE = {"actions": None, "conditions": [], "description": None, "priority": 0, "sensitive": False,
             "phase": "main"}


@dataclass(eq=False)
class InspectionRules:
    store: Store
    rt: Runtime
    rng: random.Random

    async def get(self, ctx: RequestContext, uuid: str) -> InspectionRule:
        require_admin(ctx, "baremetal:inspection_rule:get")
        async with self.store.begin() as conn:
            rule = await repos.inspection_rules.get(conn, uuid.lower()) if is_uuid_like(uuid) else None
        if rule is None:
            raise be.InspectionRuleNotFound(rule=uuid)
        return rule

    async def list(self, ctx: RequestContext, *, phase: str | None = None) -> list[InspectionRule]:
        require_admin(ctx, "baremetal:inspection_rule:get")
        filters = {"phase": phase} if phase is not None else {}
        async with self.store.begin() as conn:
            return await repos.inspection_rules.find(conn, order_by=("created_at", "uuid"), **filters)

    async def create(self, ctx: RequestContext, body: dict[str, Any], check: Check) -> InspectionRule:
        """A rule from a body ``check`` accepted (ironic's schema and validate_rule)."""
        require_admin(ctx, "baremetal:inspection_rule:create")
        check(body)
        uuid = validation.uuid_value(body["uuid"]) if body.get("uuid") is not None else new_uuid(self.rng)
        now = self.rt.now()
        values = {name: body[name] for name in _WRITABLE if body.get(name) is not None}
        rule = InspectionRule(uuid=uuid, **values, created_at=now, updated_at=now)
        async with self.store.begin() as conn:
            if await repos.inspection_rules.get(conn, uuid) is not None:
                raise be.InspectionRuleAlreadyExists(uuid=uuid)
            await repos.inspection_rules.add(conn, rule)
        return rule

    async def update(self, ctx: RequestContext, uuid: str, patch: list[dict[str, Any]], check: Check) \
            -> InspectionRule:
        require_admin(ctx, "baremetal:inspection_rule:update")
        rule = await self.get(ctx, uuid)
        for op in patch if isinstance(patch, list) else ():
            if isinstance(op, dict) and op.get("path") == "/sensitive" and op.get("value") is False \
                    and rule.sensitive:
                raise be.PatchError(patch=patch, reason="Inspection rules cannot have the sensitive flag unset.")
        current = dataclasses.asdict(rule)
        patched = apply_patch(current, patch, writable=_WRITABLE, mandatory=("actions",))
        check({name: value for name, value in patched.items() if value is not None})
        changes = {name: value for name, value in patched.items() if current[name] != value}
        if not changes:
            return rule
        changes["updated_at"] = self.rt.now()
        async with self.store.begin() as conn:
            if not await repos.inspection_rules.update(conn, rule.uuid, **changes):
                raise be.InspectionRuleNotFound(rule=uuid)
        return dataclasses.replace(rule, **changes)

    async def delete(self, ctx: RequestContext, uuid: str) -> None:
        require_admin(ctx, "baremetal:inspection_rule:delete")
        rule = await self.get(ctx, uuid)
        async with self.store.begin() as conn:
            await repos.inspection_rules.delete(conn, rule.uuid)
