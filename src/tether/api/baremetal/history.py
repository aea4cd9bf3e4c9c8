"""/v1/nodes/{node}/history (from 1.78): the errors a node met, as ironic's conductor records them."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tether.api import paths
from tether.api.baremetal import params, views
from tether.api.baremetal.nodes import find_node, service
from tether.domain.baremetal import NodeHistoryEvent
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like

router = paths.router("baremetal")

MINOR = 78
_LONGEST_SHORT_EVENT = 255


def _entry(url: str, node: str, event: NodeHistoryEvent, *, detail: bool) -> dict[str, Any]:
    """ironic's _history_event_convert_with_links (before 1.113's project and 1.115's state fields)."""
    entry: dict[str, Any] = {"uuid": event.uuid, "created_at": views.iso(event.created_at),
                             "severity": event.severity, "event": event.event}
    if detail:
        entry.update(event_type=event.event_type, conductor=event.conductor, user=event.user)
    elif len(event.event) > _LONGEST_SHORT_EVENT:
        entry["event"] = event.event[:251] + "..."
    entry["links"] = [views.link("self", url, "nodes", f"{node}/history/{event.uuid}")]
    return entry


@router.get("/nodes/{ident}/history", openapi_extra=params.query_doc("detail", *params.PAGING))
async def list_history(ident: str, request: Request, ctx: params.admin("baremetal:node:history:get"),
                       version: params.Version) -> dict[str, Any]:
    if params.minor(version) < MINOR:
        raise be.NotFound("The resource could not be found.")
    args = params.query(request, ("detail", *params.PAGING))
    detail = bool(params.boolean("detail", args.get("detail")))
    page = params.Page.from_query({"sort_key": "created_at", **args})
    if page.sort_key not in ("created_at", "uuid"):
        raise be.InvalidParameterValue(err=f"The sort_key value {page.sort_key} is an invalid field for sorting")
    node = await find_node(request, ctx, ident, version)
    events = await service(request).node_history(ctx, node.uuid)
    chosen = page.apply(events, lambda event: {"uuid": event.uuid, "created_at": event.created_at},
                        lambda marker: be.NotFound(f"Node history record {marker} could not be found."))
    url = views.public_url(request)
    return views.collection("history", [_entry(url, node.uuid, event, detail=detail) for event in chosen],
                            chosen[-1].uuid if chosen else None, page, url, f"nodes/{ident}/history", args)


@router.get("/nodes/{ident}/history/{event}")
async def show_history_event(ident: str, event: str, request: Request,
                             ctx: params.admin("baremetal:node:history:get"),
                             version: params.Version) -> dict[str, Any]:
    if params.minor(version) < MINOR:
        raise be.NotFound("The resource could not be found.")
    params.query(request, ())
    params.uuid_or_name("event", event)
    node = await find_node(request, ctx, ident, version)
    found = [item for item in await service(request).node_history(ctx, node.uuid)
             if is_uuid_like(event) and item.uuid == event.lower()]
    if not found:
        raise be.NotFound(f"Node history record {event} could not be found.")
    return _entry(views.public_url(request), node.uuid, found[0], detail=True)
