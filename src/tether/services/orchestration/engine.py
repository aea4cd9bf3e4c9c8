"""The engine: drives one stack action from the resources' rows to COMPLETE or FAILED.

``drive`` reads the rows, asks ``plan`` what comes next, starts each resource whose turn has
come as an operation of its own (independent resources run concurrently), and waits to be
told that one finished. Everything it knows is in the store, so a restart runs the same
loop over the same rows and the action goes on (design rule 5); a stack's deadline fails
whatever is still in progress (rule 3). A new action on the stack (a delete that supersedes
a create) takes a new ``traversal``, and the old loop and its resources' operations stop at
their next step.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import TetherError
from tether.domain.ids import new_uuid
from tether.domain.orchestration import plan
from tether.domain.orchestration.stack_states import (
    COMPLETE,
    CREATE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    ROLLBACK,
    is_in_progress,
    state,
)
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.orchestration import records
from tether.services.orchestration.properties import Properties
from tether.services.orchestration.resources.base import Handler, ResourceFailed, Run
from tether.store.database import Store

log = logging.getLogger(__name__)

# How long the loop waits for a resource to report before it looks again anyway.
POLL_SECONDS = 5.0


def stack_key(stack_id: str) -> tuple[str, str]:
    """What a resource's operation signals when it ends, and the stack's loop waits on."""
    return ("stack", stack_id)


def acting_as(stack: Stack) -> RequestContext:
    """The stack's creator: its actions run as that user, as heat's stored context does."""
    return RequestContext(user_id=stack.user_id, project_id=stack.project_id, roles=frozenset(stack.user_roles))


@dataclass(eq=False)
class Engine:
    store: Store
    rt: Runtime
    rng: random.Random
    handlers: Mapping[str, Handler]
    properties: Properties

    def start(self, stack: Stack) -> None:
        self.rt.spawn(self.drive(stack.id, stack.traversal),
                      name=f"orchestration.{stack.action.lower()}:{stack.name}")

    async def drive(self, stack_id: str, traversal: str) -> None:
        while True:
            async with self.store.begin() as uow:
                stack = await uow.stacks.get(stack_id)
                if stack is None or stack.traversal != traversal or not is_in_progress(stack.state):
                    return
                resources = await uow.stack_resources.find(stack_id=stack_id, current=True,
                                                           order_by=("created_at", "id"))
            await self.rt.checkpoint("orchestration.engine.step")
            if stack.deadline is not None and self.rt.now() >= stack.deadline:
                await self._time_out(stack, resources)
                return
            dependencies = self.properties.dependencies(stack, resources)
            states = {resource.name: resource.state for resource in resources}
            creating = stack.action == CREATE
            step = plan.create_step(dependencies, states) if creating else plan.delete_step(dependencies, states)
            if step.finished:
                traversal = await self._finish(stack, resources, step)
                if traversal is None:
                    return
                continue
            by_name = {resource.name: resource for resource in resources}
            for name in step.start:
                await self._start(stack, by_name[name], CREATE if creating else DELETE)
            await self.rt.wait(stack_key(stack_id), POLL_SECONDS, "orchestration.engine.wait", guard=True)

    async def _start(self, stack: Stack, resource: StackResource, action: str) -> None:
        now = self.rt.now()
        async with self.store.begin() as uow:
            started = await records.set_resource(uow, self.rng, resource, state(action, IN_PROGRESS),
                                                 "state changed", now, expect=resource.state)
        if started:
            self.resume(stack, resource, action)

    def resume(self, stack: Stack, resource: StackResource, action: str) -> None:
        """Run a resource's action (again, after a restart: its row says IN_PROGRESS and nobody runs it)."""
        self.rt.spawn(self.act(stack.id, resource.id, action),
                      name=f"orchestration.{action.lower()}:{stack.name}.{resource.name}")

    async def act(self, stack_id: str, resource_id: str, action: str) -> None:
        in_progress = state(action, IN_PROGRESS)
        failure: tuple[str, str] | None = None
        changes: dict[str, Any] = {}
        try:
            async with self.rt.locks.hold("stack", resource_id):
                stack, resource = await self._current(stack_id, resource_id)
                if stack is None or resource is None or resource.state != in_progress:
                    return
                run = Run(acting_as(stack), stack, resource)
                handler = self.handlers[resource.type]
                if action == CREATE:
                    run.properties = await self.properties.of(stack, resource, run.ctx)
                    await handler.create(run)
                else:
                    await handler.delete(run)
            await self.rt.checkpoint(f"orchestration.{action.lower()}.before_wait")
            if action == CREATE:
                await handler.wait_ready(run)
                changes["properties"] = dict(run.properties)
            else:
                await handler.wait_gone(run)
        except ResourceFailed as error:
            failure = ("ResourceInError", error.message)
        except TetherError as error:
            failure = (error.kind, error.message)
        except Exception as error:  # a bug in Tether: the resource fails, never stays IN_PROGRESS (rule 3)
            log.exception("orchestration: %s of resource %s failed", action, resource_id)
            failure = (type(error).__name__, str(error))
        async with self.rt.locks.hold("stack", resource_id), self.store.begin() as uow:
            resource = await uow.stack_resources.get(resource_id)
            if resource is not None:
                # heat's words: 'ResourceInError: resources.server: Went to status ERROR due to "..."'
                outcome, reason = ((state(action, COMPLETE), "state changed") if failure is None else
                                   (state(action, FAILED), f"{failure[0]}: resources.{resource.name}: {failure[1]}"))
                await records.set_resource(uow, self.rng, resource, outcome, reason, self.rt.now(),
                                           expect=in_progress, **(changes if failure is None else {}))
        self.rt.notify(stack_key(stack_id))

    async def _current(self, stack_id: str, resource_id: str) -> tuple[Stack | None, StackResource | None]:
        async with self.store.begin() as uow:
            return await uow.stacks.get(stack_id), await uow.stack_resources.get(resource_id)

    async def _finish(self, stack: Stack, resources: list[StackResource], step: plan.Step) -> str | None:
        """End the action; the traversal of the rollback that follows a failure, if one does."""
        now = self.rt.now()
        by_name = {resource.name: resource for resource in resources}
        async with self.store.begin() as uow:
            if not step.failed:
                changes: dict[str, Any] = {"deadline": None}
                if stack.action == DELETE:
                    changes["deleted_at"] = now
                await records.move_stack(uow, self.rng, stack, "complete",
                                         f"Stack {stack.action} completed successfully", now, **changes)
                return None
            first = by_name[step.failed[0]]
            reason = f"Resource {first.action} failed: {first.status_reason}"
            failed = await records.move_stack(uow, self.rng, stack, "fail", reason, now, deadline=None)
            if failed is None or failed.disable_rollback or stack.action != CREATE:
                return None
            traversal = new_uuid(self.rng)
            rolling = await records.move_stack(uow, self.rng, failed, "rollback", "Stack rollback started", now,
                                               traversal=traversal, deadline=stack.deadline)
            return None if rolling is None else traversal

    async def _time_out(self, stack: Stack, resources: list[StackResource]) -> None:
        now = self.rt.now()
        async with self.store.begin() as uow:
            for resource in resources:
                if is_in_progress(resource.state):
                    await records.set_resource(uow, self.rng, resource, state(resource.action, FAILED), "Timed out",
                                               now, expect=resource.state)
            await records.move_stack(uow, self.rng, stack, "fail", "Timed out", now, deadline=None)


__all__ = ["ROLLBACK", "Engine", "acting_as", "stack_key"]
