"""POST /os-server-external-events: how the network service tells compute about ports.

The same service path the in-process notifier uses. 200 when every event was
accepted, 207 when any was not; each event comes back with its own code
(404 unknown server, 422 no host yet) and status, as neutron reads them.
"""

from __future__ import annotations

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute import bodies
from tether.api.compute.bodies import fail
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.services.context import RequestContext

router = paths.router("compute")


@router.post("/os-server-external-events")
async def create_events(request: Request, parsed: bodies.ExternalEventsRequest,
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    known = [*bodies.NETWORK_EVENTS, *(name for name, since in bodies.LATER_EVENTS.items()
                                       if version.at_least(since))]
    for event in parsed.events:
        if event.name not in known:
            raise fail(f"Invalid input for field/attribute name. Value: {event.name}. "
                       f"'{event.name}' is not one of {known}")
        if event.name not in bodies.NETWORK_EVENTS:
            raise fail(f"Invalid input for field/attribute name. Value: {event.name}. Tether has no volumes, "
                       f"accelerators or power events: it only handles {list(bodies.NETWORK_EVENTS)}")
    events = [event.model_dump(exclude_unset=True) for event in parsed.events]
    results = await cloud(request).compute.external_events(ctx, events)
    replies = []
    for event, result in zip(events, results, strict=True):
        reply = dict(event)
        reply["code"] = result["code"]
        reply["status"] = "completed" if result["code"] == 200 else "failed"
        replies.append(reply)
    failed = any(reply["code"] != 200 for reply in replies)
    return JSONResponse({"events": replies}, status_code=207 if failed else 200)
