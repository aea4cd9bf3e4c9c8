"""How each stack action begins, written in the caller's unit of work: the stack's new state
and traversal, its resources' rows, the event. Shared by the API's operations and by nested
stacks (a ResourceGroup's members), so both begin an action the same way.
"""

from __future__ import annotations

import random
from typing import Any

from tether.domain.ids import new_uuid
from tether.domain.orchestration import stack_states
from tether.domain.orchestration.stack_states import CREATE, IN_PROGRESS, state
from tether.domain.orchestration.stacks import Stack, StackResource
from tether.domain.orchestration.template import Template
from tether.services.orchestration import records
from tether.store.unit_of_work import UnitOfWork


def deadline(now: float, timeout_mins: int | None) -> float:
    return now + 60 * (timeout_mins or stack_states.DEFAULT_TIMEOUT_MINUTES)


async def begin_create(uow: UnitOfWork, rng: random.Random, stack: Stack, template: Template, now: float) -> Stack:
    """Write a new stack, CREATE_IN_PROGRESS, with a row for each of its resources."""
    stack.state, stack.status_reason = state(CREATE, IN_PROGRESS), "Stack CREATE started"
    stack.traversal, stack.deadline, stack.created_at = new_uuid(rng), deadline(now, stack.timeout_mins), now
    await uow.stacks.add(stack)
    await uow.stack_resources.add_all(
        StackResource(id=new_uuid(rng), stack_id=stack.id, name=resource.name, type=resource.type, created_at=now)
        for resource in template.resources.values())
    await uow.stack_events.add(records.stack_event(rng, stack, stack.state, stack.status_reason, now))
    return stack


async def begin_update(uow: UnitOfWork, rng: random.Random, stack: Stack, template: Template, now: float,
                       **changes: Any) -> Stack | None:
    """Move the stack to UPDATE_IN_PROGRESS towards ``template``: rows for its new resources, the
    ones it drops marked for deletion once the rest is up to date, the old template kept for a
    rollback. None if someone moved the stack meanwhile."""
    rows = await uow.stack_resources.find(stack_id=stack.id, current=True)
    have = {row.name for row in rows}
    for row in rows:
        if row.name not in template.resources:
            await uow.stack_resources.update(row.id, current=False)
    await uow.stack_resources.add_all(
        StackResource(id=new_uuid(rng), stack_id=stack.id, name=resource.name, type=resource.type, created_at=now)
        for resource in template.resources.values() if resource.name not in have)
    previous = {"template": stack.template, "files": stack.files, "environment": stack.environment,
                "parameters": stack.parameters}
    timeout = changes.get("timeout_mins", stack.timeout_mins)
    return await records.move_stack(uow, rng, stack, "update", "Stack UPDATE started", now,
                                    traversal=new_uuid(rng), deadline=deadline(now, timeout), previous=previous,
                                    template=template.as_dict(), **changes)


async def begin_delete(uow: UnitOfWork, rng: random.Random, stack: Stack, now: float) -> Stack | None:
    """Move the stack to DELETE_IN_PROGRESS, superseding whatever it was doing."""
    return await records.move_stack(uow, rng, stack, "delete", "Stack DELETE started", now, traversal=new_uuid(rng),
                                    deadline=deadline(now, stack.timeout_mins))
