"""/v1/chassis: groups of nodes, and the nodes in each."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import params, views
from tether.api.baremetal.nodes import DETAIL_DOC, LIST_DOC, node_collection, service
from tether.api.baremetal.params import field
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import Chassis
from tether.domain.errors import baremetal as be
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's CHASSIS_SCHEMA.
CHASSIS_SCHEMA = params.body_schema({"uuid": field("string", "null"), "extra": field("object", "null"),
                                    "description": field("string", "null", max_length=255)})


def body_of(request: Request, chassis: Chassis, fields: list[str] | None = None) -> dict[str, Any]:
    return views.chassis_body(chassis, views.public_url(request), fields)


async def _collection(request: Request, ctx: RequestContext, version: Microversion, *, detail: bool) -> dict[str, Any]:
    args = params.query(request, [*params.PAGING, *([] if detail else ["fields", "detail"])])
    views.check_chassis_fields(params.string_list(args.get("fields")))
    fields = None if detail else params.fields_and_detail(args, version, views.CHASSIS_SHORT_FIELDS)
    page = params.Page.from_query(args)
    page.check_sort_key(views.chassis_values(Chassis(uuid="")), views.CHASSIS_UNSORTABLE)
    everything = await service(request).list_chassis(ctx)
    values = {chassis.uuid: views.chassis_values(chassis) for chassis in everything}
    chosen = page.apply(everything, lambda chassis: values[chassis.uuid],
                        lambda marker: be.ChassisNotFound(chassis=marker))
    bodies = [body_of(request, chassis, fields) for chassis in chosen]
    return views.collection("chassis", bodies, chosen[-1].uuid if chosen else None, page,
                            views.public_url(request), "chassis/detail" if detail else "chassis", args)


@router.get("/chassis", openapi_extra=params.query_doc(*params.PAGING, "fields", "detail"))
@router.get("/chassis/", include_in_schema=False)
async def list_chassis(request: Request, ctx: params.admin("baremetal:chassis:get"),
                       version: params.Version) -> dict[str, Any]:
    return await _collection(request, ctx, version, detail=False)


@router.get("/chassis/detail", openapi_extra=params.query_doc(*params.PAGING))
async def list_chassis_detail(request: Request, ctx: params.admin("baremetal:chassis:get"),
                              version: params.Version) -> dict[str, Any]:
    return await _collection(request, ctx, version, detail=True)


@router.post("/chassis", status_code=201, openapi_extra=params.body_doc(CHASSIS_SCHEMA))
@router.post("/chassis/", status_code=201, include_in_schema=False)
async def create_chassis(request: Request, ctx: params.admin("baremetal:chassis:create")) -> JSONResponse:
    body = params.check_schema("chassis", await json_object(request), CHASSIS_SCHEMA)
    if body.get("uuid") is not None:
        params.uuid("uuid", body["uuid"])
    chassis = await service(request).create_chassis(ctx, description=body.get("description"),
                                                    extra=body.get("extra"), uuid=body.get("uuid"))
    location = views.link("self", views.public_url(request), "chassis", chassis.uuid)["href"]
    return JSONResponse(body_of(request, chassis), status_code=201, headers={"Location": location})


@router.get("/chassis/{uuid}", openapi_extra=params.query_doc("fields"))
async def show_chassis(uuid: str, request: Request, ctx: params.admin("baremetal:chassis:get"),
                       version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("fields",))
    chassis = await service(request).get_chassis(ctx, uuid)
    fields = params.string_list(args.get("fields"))
    if fields is not None:
        params.require(version, 8)
    views.check_chassis_fields(fields)
    return body_of(request, chassis, fields)


@router.get("/chassis/{uuid}/nodes", openapi_extra=LIST_DOC)
async def list_chassis_nodes(uuid: str, request: Request, ctx: params.admin("baremetal:node:list"),
                             version: params.Version) -> dict[str, Any]:
    chassis = await service(request).get_chassis(ctx, uuid)
    return await node_collection(request, ctx, version, detail=False, resource=f"chassis/{chassis.uuid}/nodes",
                                 chassis_uuid=chassis.uuid)


@router.get("/chassis/{uuid}/nodes/detail", openapi_extra=DETAIL_DOC)
async def list_chassis_nodes_detail(uuid: str, request: Request, ctx: params.admin("baremetal:node:list"),
                                    version: params.Version) -> dict[str, Any]:
    chassis = await service(request).get_chassis(ctx, uuid)
    return await node_collection(request, ctx, version, detail=True,
                                 resource=f"chassis/{chassis.uuid}/nodes/detail", chassis_uuid=chassis.uuid)


@router.patch("/chassis/{uuid}", openapi_extra=params.PATCH_DOC)
async def update_chassis(uuid: str, request: Request, ctx: params.admin("baremetal:chassis:update")) \
        -> dict[str, Any]:
    params.query(request, ())
    patch = await json_body(request)
    return body_of(request, await service(request).update_chassis(ctx, uuid, patch))


@router.delete("/chassis/{uuid}", status_code=204)
async def delete_chassis(uuid: str, request: Request, ctx: params.admin("baremetal:chassis:delete")) \
        -> Response:
    params.query(request, ())
    await service(request).delete_chassis(ctx, uuid)
    return Response(status_code=204)
