"""The one way an instance's vm_state and task_state are written: through the state table."""

from __future__ import annotations

from typing import Any

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.events import InstanceStateChanged
from tether.store import repos
from tether.store.unit_of_work import UnitOfWork


async def move(
    uow: UnitOfWork, instance: Instance, event: str, now: float, *, unless_changed: bool = False,
    **changes: Any,
) -> bool:
    """Apply ``event`` to the instance as read, with ``changes`` to other columns; True if a row changed.

    ``unless_changed``: write only if nobody moved the instance since it was read
    (a build's step must never overwrite a delete that started meanwhile).
    An event the table does not allow from the state read raises
    ``IllegalInstanceTransition``, and nothing is written.
    """
    vm_state, task_state = vm.next_state(instance.vm_state, instance.task_state, event)
    expect = {"vm_state": instance.vm_state, "task_state": instance.task_state} if unless_changed else None
    moved = await repos.instances.update(uow, instance.uuid, expect=expect, vm_state=vm_state,
                                         task_state=task_state, updated_at=now, **changes)
    if moved:
        uow.emit(InstanceStateChanged(instance.uuid, event, (instance.vm_state, instance.task_state),
                                      (vm_state, task_state)))
    return moved
