"""/servers/{id}/os-instance-actions: what `openstack server event list|show` reads.

From 2.21 a deleted server's actions stay readable; from 2.51 its owner sees
the events (without tracebacks); from 2.62 events carry an obfuscated hostId
(and the host, for admins); from 2.84 admins see each event's details.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from tether.api import paths
from tether.api.compute import views
from tether.api.compute.query import Moment, PageQuery, next_links, timestamp
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.compute import ActionEvent, InstanceAction
from tether.domain.listing import AtLeast, AtMost, ListQuery
from tether.services.context import RequestContext

router = paths.router("compute")


def action_body(action: InstanceAction, version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {
        "action": action.action,
        "instance_uuid": action.instance_uuid,
        "request_id": action.request_id,
        "user_id": action.user_id,
        "project_id": action.project_id,
        "start_time": views.naive_time(action.start_time),
        "message": action.message,
    }
    if version.at_least("2.58"):
        body["updated_at"] = views.naive_time(action.updated_at)
    return body


def event_body(event: ActionEvent, project_id: str, version: Microversion, admin: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "event": event.event,
        "start_time": views.naive_time(event.start_time),
        "finish_time": views.naive_time(event.finish_time),
        "result": event.result,
    }
    if admin:  # os_compute_api:os-instance-actions:events
        body["traceback"] = event.traceback
        if version.at_least("2.62"):
            body["host"] = event.host or ""  # nova's schema: a string; "" as its hostId has for no host
    if version.at_least("2.62"):
        body["hostId"] = views.host_id(event.host, project_id)
    if admin and version.at_least("2.84"):  # os_compute_api:os-instance-actions:events:details
        body["details"] = failure_details(event)
    return body


def failure_details(event: ActionEvent) -> str | None:
    """The message of the error that failed the event, as nova's event details (no traceback)."""
    if event.result != "Error" or not event.traceback:
        return None
    first = event.traceback.splitlines()[-1]
    _, _, message = first.partition(": ")
    return message or first


class ActionsQuery(PageQuery):
    changes_since: Annotated[Moment, Field(alias="changes-since")] = None
    changes_before: Annotated[Moment, Field(alias="changes-before")] = None


@router.get("/servers/{server_id}/os-instance-actions")
async def list_actions(server_id: str, request: Request, query: Annotated[ActionsQuery, Query()],
                       ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    compute = cloud(request).compute
    include_deleted = version.at_least("2.21")
    if not version.at_least("2.58"):
        actions = await compute.instance_actions(ctx, server_id, include_deleted=include_deleted)
        return JSONResponse({"instanceActions": [action_body(action, version) for action in actions]})
    # each bound a group of its own: both may hold for the one column
    bounds: list[tuple[dict[str, Any], ...]] = []
    for bound, newer, raw in (("changes-since", True, query.changes_since),
                              ("changes-before", False, query.changes_before)):
        if raw is not None:
            moment = timestamp(bound, raw)
            bounds.append(({"updated_at": AtLeast(moment) if newer else AtMost(moment)},))
    limit, marker = query.page()
    chosen = await compute.instance_actions(ctx, server_id, include_deleted=include_deleted,
                                            query=ListQuery(alternatives=tuple(bounds), marker=marker, limit=limit))
    return JSONResponse({"instanceActions": [action_body(action, version) for action in chosen],
                         **next_links(request, f"servers/{server_id}/os-instance-actions", chosen,
                                      chosen[-1].request_id if chosen else None)})


@router.get("/servers/{server_id}/os-instance-actions/{request_id}")
async def show_action(server_id: str, request_id: str, request: Request,
                      ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    instance, action, events = await cloud(request).compute.instance_action(
        ctx, server_id, request_id, include_deleted=version.at_least("2.21"))
    body = action_body(action, version)
    if ctx.is_admin or version.at_least("2.51"):
        project_id = action.project_id or instance.project_id
        body["events"] = [event_body(event, project_id, version, ctx.is_admin) for event in events]
    return JSONResponse({"instanceAction": body})

