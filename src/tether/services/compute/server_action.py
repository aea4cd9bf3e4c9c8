"""How every server action begins, steps and ends: through the instance state table, with nova's records.

``begin`` is the API-facing half (nova's compute API): it checks the lock and
the state table, moves the instance into the action's first task state with a
deadline (rule 3), records the instance action and a durable intent (rule 5)
in one transaction, and hands the work to the background (nova's 202).
``run`` is the compute manager's half: under the instance lock it does the
work, whose steps go through ``step``, and ends the action in one
transaction: the state the table gives, the power state the driver reports,
the event's result, and the intent forgotten. A delete that started meanwhile
wins: the action then ends its records and leaves the instance alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state, records
from tether.services.compute.guests import Guests
from tether.services.compute.instances import Instances, visible_instance
from tether.services.context import RequestContext
from tether.store import intents, repos
from tether.store.database import Store


@dataclass
class Ending:
    """How a finished action ends: ``done`` (or ``done_off``), with changes to the instance's columns."""

    event: str = "done"
    changes: dict[str, Any] = field(default_factory=dict)


Work = Callable[[Instance], Awaitable[Ending]]
Check = Callable[[Instance], None]

# What a failure in the middle leaves: a guest half rebuilt or half resized is broken (nova's ERROR);
# any other action that failed left it as it was (nova's reverts_task_state).
_FAILS_TO_ERROR = frozenset({"rebuild", "resize", "revert_resize"})


class ActionInterrupted(Exception):
    """The instance moved on under the action (a delete started): stop, and leave it to the delete."""


def refuse_if_locked(ctx: RequestContext, instance: Instance) -> None:
    """nova's check_instance_lock: a locked server refuses everyone but an admin."""
    if instance.locked and not ctx.is_admin:
        raise ce.InstanceIsLocked(instance_uuid=instance.uuid)


def intent_id(uuid: str) -> str:
    return f"action:{uuid}"


@dataclass(eq=False)
class ServerActions:
    store: Store
    rt: Runtime
    instances: Instances
    guests: Guests

    async def begin(
        self, ctx: RequestContext, uuid: str, event: str, record: str, work: Work, *,
        nova_event: str, check: Check | None = None, changes: dict[str, Any] | None = None,
    ) -> Instance:
        """Start action ``event`` (a key of ``ACTIONS``) recorded as ``record`` with its first event
        ``nova_event``; ``check`` refuses what the state table cannot see (a flavor, an image)."""
        action = vm.ACTIONS[event]
        if not ctx.can_write:
            raise ce.ComputeForbidden(action=f"os_compute_api:servers:{action.name}")
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            refuse_if_locked(ctx, instance)
            refused = vm.refusal(instance.vm_state, instance.task_state, event)
            if refused is not None:
                attr, state = refused
                raise ce.InstanceInvalidState(action=action.name, instance_uuid=uuid, attr=attr, state=state)
            if check is not None:
                check(instance)
            await instance_state.move(conn, instance, event, now, deadline=now + vm.ACTION_TIMEOUT,
                                      **(changes or {}))
            await records.start_action(conn, ctx, uuid, record, now, nova_event, project_id=instance.project_id)
            await intents.record(conn, intent_id(uuid), "action", uuid,
                                 {"request_id": ctx.request_id, "event": event}, now)
        self.rt.note(f"server {instance.name}: {action.name} accepted")
        self.rt.spawn(self.run(uuid, ctx.request_id, event, work), name=f"compute.{event}:{instance.name}")
        return instance

    async def run(self, uuid: str, request_id: str, event: str, work: Work) -> None:
        async with self.rt.locks.hold("instance", uuid):
            instance = await self.instances.live(uuid)
            if instance is None or instance.task_state not in vm.ACTIONS[event].steps:
                await self._end_records(uuid, request_id, ActionInterrupted("the server moved on"))
                return
            try:
                ending = await work(instance)
            except ActionInterrupted as interrupted:
                await self._end_records(uuid, request_id, interrupted)
                return
            except ce.NoValidHost as unscheduled:
                # nova's conductor: no host takes the move, so the instance keeps its vm_state and the fault
                # is the scheduler's own error, while the action's events carry the conductor's
                await self.end(uuid, request_id, Ending("abandon"), unscheduled,
                               fault=unscheduled.__cause__ or unscheduled)
                return
            except Exception as error:
                failed = event in _FAILS_TO_ERROR and not isinstance(error, ce.ComputeNotImplemented)
                await self.end(uuid, request_id, Ending("fail" if failed else "abandon"), error)
                return
            await self.end(uuid, request_id, ending)

    async def add_event(self, request_id: str, event: str) -> None:
        async with self.store.begin() as conn:
            await records.add_event(conn, request_id, event, self.rt.now())

    async def step(self, instance: Instance) -> Instance:
        """Move the action on to its next task state, unless someone moved the instance since."""
        now = self.rt.now()
        async with self.store.begin() as conn:
            moved = await instance_state.move(conn, instance, "step", now, unless_changed=True)
        if not moved:
            raise ActionInterrupted(f"instance {instance.uuid} moved on during its {instance.task_state}")
        instance.vm_state, instance.task_state = vm.next_state(instance.vm_state, instance.task_state, "step")
        instance.updated_at = now
        return instance

    async def end(self, uuid: str, request_id: str, ending: Ending, error: BaseException | None = None, *,
                  fault: BaseException | None = None) -> bool:
        """End the action as ``ending`` says; False when a delete came first (then only the records end).
        ``fault``: what the instance's fault says, when it is not the action's ``error``."""
        current = await self.instances.live(uuid)
        power = await self.guests.power_state(current) if current is not None else vm.NOSTATE
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await repos.instances.get(conn, uuid)
            moving = instance is not None and not instance.deleted and vm.can(
                instance.vm_state, instance.task_state, ending.event) and instance.task_state != vm.DELETING
            if instance is not None and moving:
                await instance_state.move(conn, instance, ending.event, now, power_state=power, deadline=None,
                                          **ending.changes)
            if error is not None and instance is not None:
                await records.record_fault(conn, uuid, fault or error, now)
            await records.finish_action(conn, request_id, uuid, now, error=error)
            await intents.forget(conn, intent_id(uuid))
        self.rt.note(f"server {uuid}: action ended ({ending.event})")
        self.rt.notify(("instance", uuid))
        return moving

    async def reset_state(self, ctx: RequestContext, uuid: str, state: str) -> None:
        """os-resetState (admin): force vm_state to active or error and clear the task state."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-admin-actions:reset_state")
        now = self.rt.now()
        async with self.store.begin() as conn:
            instance = await visible_instance(conn, ctx, uuid)
            event = f"reset_{state}"
            if not vm.can(instance.vm_state, instance.task_state, event):
                raise ce.InstanceInvalidState(action="os-resetState", instance_uuid=uuid, attr="task_state",
                                              state=instance.task_state or instance.vm_state)
            await instance_state.move(conn, instance, event, now, deadline=None)
            await intents.forget(conn, intent_id(uuid))
        self.rt.notify(("instance", uuid))

    async def abandon(self, uuid: str, request_id: str, reason: BaseException) -> bool:
        """Rule 3/5: end an action nothing drives any more (after a restart, or past its deadline)."""
        instance = await self.instances.live(uuid)
        if instance is None or instance.task_state is None or instance.task_state == vm.DELETING:
            async with self.store.begin() as conn:
                await intents.forget(conn, intent_id(uuid))
            return False
        # as nova's init_host: a rebuild cut short leaves a broken guest (ERROR); any other action's task
        # state is cleared, the vm_state kept, never resumed
        half_rebuilt = instance.task_state in vm.ACTIONS["rebuild"].steps
        return await self.end(uuid, request_id, Ending("fail" if half_rebuilt else "abandon"), reason)

    async def _end_records(self, uuid: str, request_id: str, error: BaseException) -> None:
        async with self.store.begin() as conn:
            await records.finish_action(conn, request_id, uuid, self.rt.now(), error=error)
            await intents.forget(conn, intent_id(uuid))
