"""/os-aggregates (admin): create, list, show, update, delete; add_host, remove_host, set_metadata.

Shown as nova shows them (``uuid`` from 2.41); a create's answer has no
hosts or metadata yet, as nova's has not.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, Field, StrictStr

from tether.api import openapi, paths
from tether.api.compute import views
from tether.api.compute.bodies import Body, Name, fail, parse
from tether.api.deps import caller, cloud, json_body
from tether.api.versions import Microversion
from tether.domain.aggregates import Aggregate
from tether.services.context import RequestContext

router = paths.router("compute")


def _zone(value: str) -> str:
    if not 1 <= len(value) <= 255 or value != value.strip():
        raise ValueError("printable characters. Can not start or end with whitespace.")
    return value


Zone = Annotated[StrictStr, AfterValidator(_zone)]


class AggregateCreate(Body):
    name: Name
    availability_zone: Zone | None = None


class AggregateCreateRequest(Body):
    aggregate: AggregateCreate


class AggregateUpdate(Body):
    name: Name | None = None
    availability_zone: Zone | None = None


class AggregateUpdateRequest(Body):
    aggregate: AggregateUpdate


class HostRef(Body):
    host: Annotated[StrictStr, Field(min_length=1, max_length=255)]


class MetadataRef(Body):
    metadata: dict[Annotated[StrictStr, Field(min_length=1, max_length=255)],
                   Annotated[StrictStr, Field(max_length=255)] | None]


def aggregate_body(aggregate: Aggregate, version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": aggregate.id, "name": aggregate.name, "availability_zone": aggregate.availability_zone,
        "hosts": list(aggregate.hosts), "metadata": dict(aggregate.metadata),
        "created_at": views.naive_time(aggregate.created_at), "updated_at": views.naive_time(aggregate.updated_at),
        "deleted": False, "deleted_at": None,
    }
    if version.at_least("2.41"):
        body["uuid"] = aggregate.uuid
    return body


@router.get("/os-aggregates")
async def list_aggregates(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    aggregates = await cloud(request).compute.aggregates(ctx)
    return JSONResponse({"aggregates": [aggregate_body(aggregate, version) for aggregate in aggregates]})


@router.post("/os-aggregates")
async def create_aggregate(request: Request, parsed: AggregateCreateRequest,
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    created = await cloud(request).compute.create_aggregate(ctx, parsed.aggregate.name,
                                                            parsed.aggregate.availability_zone)
    body = aggregate_body(created, version)
    del body["hosts"], body["metadata"]
    return JSONResponse({"aggregate": body})


@router.get("/os-aggregates/{aggregate_id}")
async def show_aggregate(aggregate_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    aggregate = await cloud(request).compute.aggregate(ctx, aggregate_id)
    return JSONResponse({"aggregate": aggregate_body(aggregate, version)})


@router.put("/os-aggregates/{aggregate_id}")
async def update_aggregate(aggregate_id: str, request: Request, parsed: AggregateUpdateRequest,
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    asked = parsed.aggregate
    if not asked.given():
        raise fail("Invalid input for field/attribute aggregate. {} does not have enough properties")
    aggregate = await cloud(request).compute.update_aggregate(
        ctx, aggregate_id, name=asked.name, zone=asked.availability_zone,
        zone_given="availability_zone" in asked.given())
    return JSONResponse({"aggregate": aggregate_body(aggregate, version)})


@router.delete("/os-aggregates/{aggregate_id}")
async def delete_aggregate(aggregate_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_aggregate(ctx, aggregate_id)
    return Response(status_code=200)


@router.post("/os-aggregates/{aggregate_id}/action",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"add_host": openapi.obj({"host": openapi.STRING}, ["host"]),
                  "remove_host": openapi.obj({"host": openapi.STRING}, ["host"]),
                  "set_metadata": openapi.obj({"metadata": {"type": "object"}}, ["metadata"])}))))
async def aggregate_action(aggregate_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    body = await json_body(request)
    compute = cloud(request).compute
    if not isinstance(body, dict) or len(body) != 1:
        raise fail("Invalid input for field/attribute body. The request body must name exactly one action.")
    (action, argument), = body.items()
    if action == "add_host":
        aggregate = await compute.add_aggregate_host(ctx, aggregate_id, parse(HostRef, argument).host)
    elif action == "remove_host":
        aggregate = await compute.remove_aggregate_host(ctx, aggregate_id, parse(HostRef, argument).host)
    elif action == "set_metadata":
        aggregate = await compute.set_aggregate_metadata(ctx, aggregate_id, parse(MetadataRef, argument).metadata)
    else:
        raise fail(f"Invalid input for field/attribute body. Additional properties are not allowed "
                   f"('{action}' was unexpected)")
    return JSONResponse({"aggregate": aggregate_body(aggregate, version)})
