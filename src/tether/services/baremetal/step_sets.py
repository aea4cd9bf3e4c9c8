"""Named sets of steps: deploy templates (deploy steps an instance's trait asks for) and runbooks
(clean or service steps a node with the matching trait may run).

Both are kept as ironic keeps them: a unique name, the steps, and ``extra``; a runbook also has an
owner, a public flag and ``disable_ramdisk``. What makes a body or a patched document well formed
is ironic's JSON schema, checked by the API layer through the ``check`` each write is given.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy.exc import IntegrityError

from tether.domain.baremetal import DeployTemplate, Runbook
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like, new_uuid
from tether.runtime.runtime import Runtime
from tether.services.baremetal import validation
from tether.services.baremetal.access import require_admin
from tether.services.baremetal.patches import apply_patch
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store
from tether.store.repository import Repository

T = TypeVar("T", DeployTemplate, Runbook)
Check = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class StepSetKind(Generic[T]):
    """What differs between deploy templates and runbooks."""

    entity: type[T]
    repo: Repository[T]
    policy: str  # ironic's policy prefix, e.g. baremetal:deploy_template
    ordering: str  # the key of a step's place: priority (deploy steps) or order (runbook steps)
    writable: dict[str, Any]  # the patchable fields and what each becomes when removed
    not_found: Callable[[str], be.BaremetalError]
    already_exists: Callable[[str], be.BaremetalError]
    duplicate_name: Callable[[str], be.BaremetalError]


DEPLOY_TEMPLATES: StepSetKind[DeployTemplate] = StepSetKind(
    DeployTemplate, repos.deploy_templates, "baremetal:deploy_template", "priority",
    {"name": None, "steps": None, "extra": {}, "description": None},
    lambda ident: be.DeployTemplateNotFound(template=ident),
    lambda uuid: be.DeployTemplateAlreadyExists(uuid=uuid),
    lambda name: be.DeployTemplateDuplicateName(name=name),
)
RUNBOOKS: StepSetKind[Runbook] = StepSetKind(
    Runbook, repos.runbooks, "baremetal:runbook", "order",
    {"name": None, "steps": None, "extra": {}, "owner": None, "public": False, "disable_ramdisk": False},
    lambda ident: be.RunbookNotFound(runbook=ident),
    lambda uuid: be.RunbookAlreadyExists(uuid=uuid),
    lambda name: be.RunbookDuplicateName(name=name),
)


def _normalised_steps(steps: list[dict[str, Any]], ordering: str) -> list[dict[str, Any]]:
    """Steps as ironic stores them: args always present, the priority or order an integer."""
    result = []
    for step in steps:
        stored = {"interface": step["interface"], "step": step["step"], "args": copy.deepcopy(step.get("args", {}))}
        if ordering in step:
            stored[ordering] = int(step[ordering])
        result.append(stored)
    return result


def _check_duplicates(steps: list[dict[str, Any]]) -> None:
    """ironic's duplicate_steps: an interface's step appears at most once."""
    counts = collections.Counter((step["interface"], step["step"]) for step in steps)
    duplicates = sorted(f"interface: {interface}, step: {name}"
                        for (interface, name), count in counts.items() if count > 1)
    if duplicates:
        raise be.InvalidDeployTemplate(
            err="Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface "
                f"and step. Duplicates: {'; '.join(duplicates)}")


@dataclass(eq=False)
class StepSets(Generic[T]):
    store: Store
    rt: Runtime
    rng: random.Random
    kind: StepSetKind[T]

    async def _find(self, ident: str) -> T | None:
        async with self.store.begin() as conn:
            if is_uuid_like(ident):
                return await self.kind.repo.get(conn, ident.lower())
            return await self.kind.repo.first(conn, name=ident)

    async def get(self, ctx: RequestContext, ident: str) -> T:
        require_admin(ctx, f"{self.kind.policy}:get")
        found = await self._find(ident)
        if found is None:
            raise self.kind.not_found(ident)
        return found

    async def list(self, ctx: RequestContext) -> list[T]:
        require_admin(ctx, f"{self.kind.policy}:get")
        async with self.store.begin() as conn:
            return await self.kind.repo.find(conn, order_by=("created_at", "uuid"))

    async def create(self, ctx: RequestContext, fields: dict[str, Any], check: Check) -> T:
        """A new set from a body ``check`` accepted (ironic's schema); ``uuid`` is optional."""
        require_admin(ctx, f"{self.kind.policy}:create")
        check(fields)
        _check_duplicates(fields["steps"])
        uuid = validation.uuid_value(fields["uuid"]) if fields.get("uuid") is not None else new_uuid(self.rng)
        values = {name: fields[name] for name in self.kind.writable if fields.get(name) is not None}
        values["steps"] = _normalised_steps(fields["steps"], self.kind.ordering)
        now = self.rt.now()
        entity = self.kind.entity(uuid=uuid, **values, created_at=now, updated_at=now)
        try:
            async with self.store.begin() as conn:
                if await self.kind.repo.get(conn, uuid) is not None:
                    raise self.kind.already_exists(uuid)
                if await self.kind.repo.first(conn, name=entity.name) is not None:
                    raise self.kind.duplicate_name(entity.name)
                await self.kind.repo.add(conn, entity)
        except IntegrityError:
            raise self.kind.duplicate_name(entity.name) from None
        return entity

    async def update(self, ctx: RequestContext, ident: str, patch: list[dict[str, Any]], check: Check) -> T:
        """The set after ``patch``, whose result ``check`` must accept whole, as ironic re-validates it."""
        require_admin(ctx, f"{self.kind.policy}:update")
        current = await self.get(ctx, ident)
        document = dataclasses.asdict(current)
        patched = apply_patch(document, patch, writable=self.kind.writable, mandatory=("name", "steps"))
        # a removed optional field is absent from what ironic validates, not null
        check({name: value for name, value in patched.items()
               if value is not None or name in ("name", "steps")})
        _check_duplicates(patched["steps"])
        patched["steps"] = _normalised_steps(patched["steps"], self.kind.ordering)
        changes = {name: value for name, value in patched.items() if document[name] != value}
        if not changes:
            return current
        changes["updated_at"] = self.rt.now()
        try:
            async with self.store.begin() as conn:
                if "name" in changes:
                    other = await self.kind.repo.first(conn, name=changes["name"])
                    if other is not None and other.uuid != current.uuid:
                        raise self.kind.duplicate_name(changes["name"])
                if not await self.kind.repo.update(conn, current.uuid, **changes):
                    raise self.kind.not_found(ident)
        except IntegrityError:
            raise self.kind.duplicate_name(changes.get("name", current.name)) from None
        return dataclasses.replace(current, **changes)

    async def delete(self, ctx: RequestContext, ident: str) -> None:
        require_admin(ctx, f"{self.kind.policy}:delete")
        current = await self.get(ctx, ident)
        async with self.store.begin() as conn:
            await self.kind.repo.delete(conn, current.uuid)
