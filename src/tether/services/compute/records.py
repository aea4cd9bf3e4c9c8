"""Instance actions, their events and instance faults: what `server event list` shows."""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from tether.domain.compute import ActionEvent, Instance, InstanceAction, InstanceFault
from tether.domain.errors import TetherError
from tether.services.context import RequestContext
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection


async def start_action(
    conn: StoreConnection, ctx: RequestContext, instance_uuid: str, action: str, now: float,
    event: str | None = "", *, project_id: str | None = None,
) -> InstanceAction:
    """Record an action and its first event (``event``: nova's event name; None: an action without events,
    as nova records lock and unlock). ``project_id``: the instance's, where an admin acts on another's."""
    record = InstanceAction(
        request_id=ctx.request_id, instance_uuid=instance_uuid, action=action,
        project_id=project_id or ctx.project_id or "", user_id=ctx.user_id, start_time=now, updated_at=now,
    )
    await repos.instance_actions.add(conn, record)
    if event is not None:
        await repos.action_events.add(
            conn, ActionEvent(request_id=ctx.request_id, event=event or f"compute_{action}", start_time=now)
        )
    return record


async def add_event(conn: StoreConnection, request_id: str, event: str, now: float) -> None:
    """A further event of an action under way (nova's wrap_instance_event on each step it reaches)."""
    await repos.action_events.add(conn, ActionEvent(request_id=request_id, event=event, start_time=now))


async def finish_action(
    conn: StoreConnection, request_id: str, instance_uuid: str, now: float,
    error: BaseException | None = None, instance: Instance | None = None,
) -> None:
    """``instance``, when given, is the row as this transaction already read it."""
    result = "Success" if error is None else "Error"
    trace = None if error is None else "".join(traceback.format_exception_only(error)).strip()
    if instance is None:
        instance = await repos.instances.get(conn, instance_uuid)
    # As nova records it: the compute host the event ran on, if the instance reached one.
    host = instance.host if instance is not None else None
    await repos.action_events.update_where(
        conn, {"request_id": request_id, "finish_time": None},
        finish_time=now, result=result, traceback=trace, host=host,
    )
    values: dict[str, object] = {"updated_at": now}
    if error is not None:
        values["message"] = "Error"
    await repos.instance_actions.update_where(
        conn, {"request_id": request_id, "instance_uuid": instance_uuid}, **values
    )


def fault_for(instance_uuid: str, error: BaseException, now: float) -> InstanceFault:
    message = error.message if isinstance(error, TetherError) else str(error)
    code = error.status if isinstance(error, TetherError) else 500
    return InstanceFault(
        instance_uuid=instance_uuid, code=code, message=message,
        details="".join(traceback.format_exception_only(error)).strip(), created_at=now,
    )


async def record_fault(conn: StoreConnection, instance_uuid: str, error: BaseException, now: float) -> None:
    await repos.instance_faults.add(conn, fault_for(instance_uuid, error, now))

