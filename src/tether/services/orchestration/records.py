"""Every state a stack or a resource takes is written here, with the event heat would show for it.

A state and its event are written in one unit of work, so the event list is exactly the
history of the rows (``openstack stack event list`` reads it, and ``--wait`` follows it).
"""

from __future__ import annotations

import random
from typing import Any

from tether.domain.ids import new_uuid
from tether.domain.orchestration import stack_states
from tether.domain.orchestration.stacks import Stack, StackEvent, StackResource
from tether.store.unit_of_work import UnitOfWork

STACK_TYPE = "OS::Heat::Stack"


def stack_key(stack_id: str) -> tuple[str, str]:
    """What a stack's changes are announced on: its loop, a parent group and users' waits listen there."""
    return ("stack", stack_id)


def stack_event(rng: random.Random, stack: Stack, new_state: str, reason: str, now: float) -> StackEvent:
    """The event of a stack's own change of state (heat names it after the stack)."""
    return _event(rng, stack.id, stack.name, stack.id, new_state, reason, STACK_TYPE, now)


def _event(rng: random.Random, stack_id: str, name: str, physical_id: str, new_state: str, reason: str,
           kind: str, now: float) -> StackEvent:
    action, status = stack_states.split(new_state)
    return StackEvent(id=new_uuid(rng), stack_id=stack_id, resource_name=name, physical_resource_id=physical_id,
                      resource_action=action, resource_status=status, resource_status_reason=reason,
                      resource_type=kind, created_at=now)


async def move_stack(uow: UnitOfWork, rng: random.Random, stack: Stack, event: str, reason: str, now: float,
                     **changes: Any) -> Stack | None:
    """Apply ``event`` to the stack as read; None (and nothing written) if someone moved it meanwhile."""
    new_state = stack_states.next_state(stack.state, event)
    moved = await uow.stacks.update(stack.id, expect={"state": stack.state, "traversal": stack.traversal},
                                    state=new_state, status_reason=reason, updated_at=now, **changes)
    if not moved:
        return None
    await uow.stack_events.add(stack_event(rng, stack, new_state, reason, now))
    return await uow.stacks.get(stack.id)


async def set_resource(uow: UnitOfWork, rng: random.Random, resource: StackResource, new_state: str, reason: str,
                       now: float, *, expect: str | None = None, **changes: Any) -> bool:
    """Write the resource's new state (only if it is still ``expect``, when given) and its event."""
    conditions = {"state": expect} if expect is not None else None
    moved = await uow.stack_resources.update(resource.id, expect=conditions, state=new_state, status_reason=reason,
                                             updated_at=now, **changes)
    if moved:
        physical_id = changes.get("physical_id", resource.physical_id) or ""
        await uow.stack_events.add(_event(rng, resource.stack_id, resource.name, physical_id, new_state, reason,
                                          resource.type, now))
    return moved
