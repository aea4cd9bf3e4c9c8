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

import dataclasses
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
    INIT_COMPLETE,
    ROLLBACK,
    UPDATE,
    is_in_progress,
    state,
)
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.domain.orchestration.template import parse_template
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.orchestration import records
from tether.services.orchestration.properties import Properties, template_of
from tether.services.orchestration.records import stack_key
from tether.services.orchestration.resources.base import Handler, ResourceFailed, Run
from tether.store.database import Store

log = logging.getLogger(__name__)

# How long the loop waits for a resource to report before it looks again anyway.
POLL_SECONDS = 10.0


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
                rows = await uow.stack_resources.find(stack_id=stack_id, order_by=("created_at", "id"))
            current = [row for row in rows if row.current]
            if stack.deadline is not None and self.rt.now() >= stack.deadline:
                await self._time_out(stack, rows)
                return
            if stack.action == CREATE:
                step = plan.create_step(self._needs(stack, current), {row.id: row.state for row in current})
                starts = [(row, CREATE) for row in current if row.id in step.start]
            elif stack.action == UPDATE or (stack.action == ROLLBACK and stack.previous is not None):
                step, starts = await self._update_turn(stack, rows)
            else:  # a delete, or the rollback of a create: everything goes, dependents first
                live = [row for row in rows if row.state not in plan.GONE]
                step = plan.delete_step(self._needs(stack, current), {row.id: row.state for row in live})
                starts = [(row, DELETE) for row in live if row.id in step.start]
            if step.finished:
                traversal = await self._finish(stack, rows, step)
                self.rt.notify(stack_key(stack.id))  # a parent's group may be waiting for this stack
                if traversal is None:
                    return
                continue
            for row, action in starts:
                await self._start(stack, row, action)
            await self.rt.wait(stack_key(stack_id), POLL_SECONDS, "orchestration.engine.wait", guard=True)

    def _needs(self, stack: Stack, current: list[StackResource]) -> dict[str, frozenset[str]]:
        """What each current resource needs, by row id."""
        ids = {row.name: row.id for row in current}
        by_name = self.properties.dependencies(stack, current)
        return {ids[name]: frozenset(ids[need] for need in needs) for name, needs in by_name.items()}

    async def _update_turn(self, stack: Stack, rows: list[StackResource]
                           ) -> tuple[plan.Step, list[tuple[StackResource, str]]]:
        """One turn of an update: look at each resource whose turn has come, then clean up what it replaced."""
        current = [row for row in rows if row.current]
        done = frozenset(row.id for row in current if row.traversal == stack.traversal)
        step = plan.update_step(self._needs(stack, current), {row.id: row.state for row in current}, done)
        if step.failed or not step.finished:
            starts = []
            for row in current:
                if row.id in step.start:
                    starts += await self._update_one(stack, row)
            return step, starts
        # every resource is up to date: delete what was replaced or removed
        leftovers = [row for row in rows if not row.current and row.state not in plan.GONE]
        cleanup = plan.delete_step(self._leftover_needs(stack, leftovers), {row.id: row.state for row in leftovers})
        if cleanup.finished and not cleanup.failed:
            for row in current:
                if row.data.get("restore"):
                    await self._restore(stack, row)
        return cleanup, [(row, DELETE) for row in leftovers if row.id in cleanup.start]

    def _leftover_needs(self, stack: Stack, leftovers: list[StackResource]) -> dict[str, frozenset[str]]:
        """What the replaced and removed resources needed of one another, in the template they were
        made from (the one before an update; a rollback's leftovers come from the template it undoes,
        whose names are the ones it shares with this one): a port goes before its old subnet."""
        source = stack.previous if stack.action == UPDATE and stack.previous else None
        template = parse_template(source["template"], files=source.get("files") or {},
                                  environment=source.get("environment") or {}) if source else template_of(stack)
        declared = template.dependencies()
        ids = {row.name: row.id for row in leftovers}
        return {row.id: frozenset(ids[need] for need in declared.get(row.name, ()) if need in ids)
                for row in leftovers}

    async def _restore(self, stack: Stack, row: StackResource) -> None:
        """After a rollback deleted its replacement: give the old resource back what it lent it."""
        async with self.rt.locks.hold("stack", row.id):
            try:
                await self.handlers[row.type].restore(Run(acting_as(stack), stack, row))
            except TetherError as error:
                self.rt.note(f"resource {row.name} not fully restored: {error.message}")
            async with self.store.begin() as uow:
                await uow.stack_resources.update(row.id, data={k: v for k, v in row.data.items() if k != "restore"})

    async def _update_one(self, stack: Stack, row: StackResource) -> list[tuple[StackResource, str]]:
        """Keep, make or replace one resource for the update (Tether updates nothing in place yet:
        a changed resource is replaced, as heat replaces what it cannot update)."""
        now = self.rt.now()
        if row.state == INIT_COMPLETE and not row.physical_id:
            async with self.store.begin() as uow:
                await uow.stack_resources.update(row.id, traversal=stack.traversal)
            return [(dataclasses.replace(row, traversal=stack.traversal), CREATE)]
        template = template_of(stack)
        definition = template.resources[row.name]
        same_type = definition.type == row.type
        changed = True
        new: dict[str, Any] = {}
        try:
            new = await self.properties.of(stack, row, acting_as(stack))
            changed = new != (row.properties or {})
        except TetherError:
            pass  # replaced, and the replacement's create says what is wrong
        if same_type and row.physical_id and self.handlers[row.type].in_place(row, new):
            async with self.store.begin() as uow:
                await uow.stack_resources.update(row.id, traversal=stack.traversal)
            return [(dataclasses.replace(row, traversal=stack.traversal), UPDATE)]
        if not plan.needs_replacement(row.state, same_type, changed):
            async with self.store.begin() as uow:
                await uow.stack_resources.update(row.id, traversal=stack.traversal)
            return []
        replacement = StackResource(id=new_uuid(self.rng), stack_id=stack.id, name=row.name, type=definition.type,
                                    traversal=stack.traversal, created_at=now)
        async with self.store.begin() as uow:
            moved = await uow.stack_resources.update(row.id, expect={"current": True, "state": row.state},
                                                     current=False, replaced_by=replacement.id)
            if not moved:
                return []
            await uow.stack_resources.add(replacement)
        return [(replacement, CREATE)]

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
                    replaced = await self._replaced_by(resource)
                    if replaced is not None:
                        await handler.prepare_for_replace(Run(run.ctx, stack, replaced), run)
                    await handler.create(run)
                elif action == UPDATE:
                    run.properties = await self.properties.of(stack, resource, run.ctx)
                    await handler.update(run, resource.properties or {})
                else:
                    await handler.delete(run)
            await self.rt.checkpoint(f"orchestration.{'delete' if action == DELETE else 'create'}.before_wait")
            if action == DELETE:
                await handler.wait_gone(run)
            else:
                await handler.wait_ready(run)
                changes["properties"] = dict(run.properties)
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

    async def _replaced_by(self, resource: StackResource) -> StackResource | None:
        """The resource that ``resource`` replaces, if it is a replacement."""
        async with self.store.begin() as uow:
            return await uow.stack_resources.first(stack_id=resource.stack_id, replaced_by=resource.id)

    async def _current(self, stack_id: str, resource_id: str) -> tuple[Stack | None, StackResource | None]:
        async with self.store.begin() as uow:
            return await uow.stacks.get(stack_id), await uow.stack_resources.get(resource_id)

    async def _finish(self, stack: Stack, rows: list[StackResource], step: plan.Step) -> str | None:
        """End the action; the traversal of the rollback that follows a failure, if one does."""
        now = self.rt.now()
        by_id = {row.id: row for row in rows}
        async with self.store.begin() as uow:
            if not step.failed:
                changes: dict[str, Any] = {"deadline": None}
                if stack.action == DELETE:
                    changes["deleted_at"] = now
                if stack.action in (UPDATE, ROLLBACK):
                    changes["previous"] = None
                await records.move_stack(uow, self.rng, stack, "complete",
                                         f"Stack {stack.action} completed successfully", now, **changes)
                return None
            first = by_id[step.failed[0]]
            reason = f"Resource {first.action} failed: {first.status_reason}"
            failed = await records.move_stack(uow, self.rng, stack, "fail", reason, now, deadline=None)
            if failed is None or failed.disable_rollback or stack.action not in (CREATE, UPDATE):
                return None
            traversal = new_uuid(self.rng)
            back: dict[str, Any] = {}
            if stack.action == UPDATE and stack.previous is not None:
                back = {key: stack.previous[key] for key in ("template", "files", "environment", "parameters")}
                await self._swap_back(uow, stack, rows, traversal)
            rolling = await records.move_stack(uow, self.rng, failed, "rollback", "Stack rollback started", now,
                                               traversal=traversal, deadline=stack.deadline, **back)
            return None if rolling is None else traversal

    async def _swap_back(self, uow: Any, stack: Stack, rows: list[StackResource], traversal: str) -> None:
        """The rollback of an update: each replaced resource is current again (with the ports the stack
        had handed to its replacement, to be attached back to it), what the update made goes, and
        what it removed but has not deleted yet stays."""
        assert stack.previous is not None
        before = set(parse_template(stack.previous["template"], files=stack.previous.get("files") or {},
                                    environment=stack.previous.get("environment") or {}).resources)
        for row in rows:
            if not row.current:
                if row.replaced_by is None and row.state not in plan.GONE and row.name in before:
                    await uow.stack_resources.update(row.id, current=True, traversal=traversal)
                continue
            replaced = next((old for old in rows if old.replaced_by == row.id), None)
            if replaced is not None:
                await uow.stack_resources.update(row.id, current=False)
                await uow.stack_ports.update_where({"resource_id": row.id}, resource_id=replaced.id)
                await uow.stack_resources.update(replaced.id, current=True, replaced_by=None, traversal=traversal,
                                                 data={**replaced.data, "restore": True})
            elif row.name not in before:
                await uow.stack_resources.update(row.id, current=False)
            else:
                await uow.stack_resources.update(row.id, traversal=traversal)

    async def _time_out(self, stack: Stack, resources: list[StackResource]) -> None:
        now = self.rt.now()
        async with self.store.begin() as uow:
            for resource in resources:
                if is_in_progress(resource.state):
                    await records.set_resource(uow, self.rng, resource, state(resource.action, FAILED), "Timed out",
                                               now, expect=resource.state)
            await records.move_stack(uow, self.rng, stack, "fail", "Timed out", now, deadline=None)


__all__ = ["Engine", "acting_as"]
