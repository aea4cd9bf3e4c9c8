"""Nested stacks: a resource whose physical resource is a stack of its own (a ResourceGroup's
members, a template resource from the environment's ``resource_registry``).

The child is driven by the same engine as any stack; the parent's resource waits for the
child's action to end, and deleting the resource deletes the child (superseding whatever the
child was doing).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.domain.orchestration import stack_states
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.domain.orchestration.template import Template, parse_template
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.orchestration import actions
from tether.services.orchestration.records import stack_key
from tether.services.orchestration.resources.base import ResourceFailed, Run, claim_physical_id
from tether.store.database import Store

if TYPE_CHECKING:
    from tether.services.orchestration.engine import Engine
    from tether.services.orchestration.properties import Properties

POLL_SECONDS = 10.0


@dataclass(eq=False)
class NestedStacks:
    store: Store
    rt: Runtime
    rng: random.Random
    engine: Engine

    async def create(self, run: Run, template: Template, parameters: dict[str, Any],
                     data: dict[str, Any] | None = None) -> None:
        """Make the child stack (once: run again after a restart, it finds the child made)."""
        child_id = await claim_physical_id(self.store, self.rng, run.resource)
        async with self.store.begin() as uow:
            if await uow.stacks.get(child_id) is not None:
                return
        parent = run.stack
        child = Stack(id=child_id, name=f"{parent.name}-{run.resource.name}-{run.resource.id[:12]}",
                      project_id=parent.project_id, user_id=parent.user_id, user_roles=parent.user_roles,
                      files=parent.files, environment=parent.environment, parameters=parameters,
                      disable_rollback=True, timeout_mins=parent.timeout_mins, parent_id=parent.id,
                      parent_resource=run.resource.name, template=template.as_dict())
        async with self.store.begin() as uow:
            if data is not None:
                await uow.stack_resources.update(run.resource.id, data={**run.resource.data, **data})
            started = await actions.begin_create(uow, self.rng, child, template, self.rt.now())
        self.engine.start(started)

    async def child(self, resource: StackResource) -> Stack | None:
        async with self.store.begin() as uow:
            return await uow.stacks.get(resource.physical_id or "")

    async def members(self, resource: StackResource) -> list[StackResource]:
        async with self.store.begin() as uow:
            return await uow.stack_resources.find(stack_id=resource.physical_id or "", current=True)

    async def update(self, run: Run, template: Template, parameters: dict[str, Any],
                     data: dict[str, Any] | None = None) -> None:
        child = await self.child(run.resource)
        if child is None or child.deleted_at is not None:
            raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is gone")
        if child.state == stack_states.state(stack_states.UPDATE, stack_states.IN_PROGRESS):
            return  # begun before a restart: its own loop goes on (recovery started it)
        async with self.store.begin() as uow:
            if data is not None:
                await uow.stack_resources.update(run.resource.id, data={**run.resource.data, **data})
            updating = await actions.begin_update(uow, self.rng, child, template, self.rt.now(),
                                                  files=run.stack.files, environment=run.stack.environment,
                                                  parameters=parameters)
        if updating is None:
            raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is busy")
        self.engine.start(updating)

    async def delete(self, run: Run) -> None:
        async with self.store.begin() as uow:
            child = await uow.stacks.get(run.resource.physical_id or "")
            if child is None or child.deleted_at is not None or child.state == stack_states.state(
                    stack_states.DELETE, stack_states.IN_PROGRESS):
                return
            deleting = await actions.begin_delete(uow, self.rng, child, self.rt.now())
        if deleting is not None:
            self.rt.notify(stack_key(child.id))  # the action it supersedes stops now
            self.engine.start(deleting)

    async def wait_ready(self, run: Run) -> None:
        await self._wait(run, lambda child: child.status == stack_states.COMPLETE)

    async def wait_gone(self, run: Run) -> None:
        await self._wait(run, lambda child: child.deleted_at is not None, gone_is_done=True)

    async def _wait(self, run: Run, done: Callable[[Stack], bool], gone_is_done: bool = False) -> None:
        child_id = run.resource.physical_id or ""
        while True:
            async with self.store.begin() as uow:
                child = await uow.stacks.get(child_id)
            if child is None:
                if gone_is_done:
                    return
                raise ResourceFailed(reason=f"The nested stack of {run.resource.name} is gone")
            if done(child):
                return
            if child.status == stack_states.FAILED:
                raise ResourceFailed(reason=child.status_reason)
            await self.rt.wait(stack_key(child_id), POLL_SECONDS, "orchestration.engine.wait", guard=True)


@dataclass(eq=False)
class TemplateResource:
    """A resource whose type the environment maps to a template in ``files``: a nested stack of
    that template, its properties the nested template's parameters, its attributes its outputs."""

    nested: NestedStacks
    properties: Properties
    parameters_of: Callable[[Run], dict[str, Any]] = field(default=lambda run: dict(run.properties))

    def _template(self, run: Run) -> Template:
        stack = run.stack
        return parse_template(stack.files[run.resource.type], files=stack.files, environment=stack.environment)

    async def create(self, run: Run) -> None:
        await self.nested.create(run, self._template(run), self.parameters_of(run))

    def in_place(self, resource: StackResource, new: Any) -> bool:
        return True  # as heat: the nested stack is updated, and its own resources decide what to replace

    async def update(self, run: Run, old: Any) -> None:
        await self.nested.update(run, self._template(run), self.parameters_of(run))

    async def wait_ready(self, run: Run) -> None:
        await self.nested.wait_ready(run)

    async def delete(self, run: Run) -> None:
        await self.nested.delete(run)

    async def wait_gone(self, run: Run) -> None:
        await self.nested.wait_gone(run)

    async def prepare_for_replace(self, old: Run, new: Run) -> None:
        return None

    async def restore(self, run: Run) -> None:
        return None

    async def attributes(self, ctx: RequestContext, resource: StackResource) -> dict[str, Any]:
        child = await self.nested.child(resource)
        if child is None or child.deleted_at is not None:
            return {}
        outputs = {o["output_key"]: o.get("output_value") for o in await self.properties.outputs(child, ctx)}
        return {**outputs, "show": {"id": child.id, "stack_name": child.name, "stack_status": child.state}}
