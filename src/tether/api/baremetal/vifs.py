"""/v1/nodes/{node}/vifs: the network ports a node's NICs carry (from 1.28)."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import errors, params
from tether.api.baremetal.nodes import service
from tether.api.deps import json_object
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be

router = paths.router("baremetal")


def _node(ident: str, version: Microversion) -> str:
    if params.minor(version) < 28:
        raise be.NotFound("The resource could not be found.")  # ironic has no vifs sub-resource before 1.28
    return params.node_ident(ident, version)


# ironic's VIF_VALIDATOR: an object with a string id (a uuid or a name); other keys pass through.
VIF_SCHEMA = openapi.obj({"id": openapi.STRING}, ["id"], closed=False)


async def _vif_body(request: Request) -> dict[str, Any]:
    return params.check_schema("vif", await json_object(request), VIF_SCHEMA)  # type: ignore[no-any-return]


@router.get("/nodes/{ident}/vifs")
async def list_vifs(ident: str, request: Request,
                    ctx: params.admin("baremetal:node:vif:list"),
                    version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    vifs = await service(request).vif_list(ctx, _node(ident, version))
    return {"vifs": [{"id": vif} for vif in vifs]}


@router.post("/nodes/{ident}/vifs", status_code=204, openapi_extra=openapi.extra(openapi.json_body(openapi.obj(
    {"id": openapi.STRING, "port_uuid": openapi.UUID, "portgroup_uuid": openapi.UUID}, ["id"], closed=False))))
async def attach_vif(ident: str, request: Request,
                     ctx: params.admin("baremetal:node:vif:attach"),
                     version: params.Version) -> Response:
    node = _node(ident, version)
    vif = await _vif_body(request)
    params.uuid_or_name("id", vif["id"])
    port_uuid, portgroup_uuid = vif.get("port_uuid"), vif.get("portgroup_uuid")
    if params.minor(version) >= 67 and "port_uuid" in vif and "portgroup_uuid" in vif:
        raise be.Invalid(reason="Cannot specify both port_uuid and portgroup_uuid")
    for name, value in (("port_uuid", port_uuid), ("portgroup_uuid", portgroup_uuid)):
        if value is not None:
            params.uuid(name, value)
    await service(request).vif_attach(ctx, node, vif["id"], port_uuid=port_uuid, portgroup_uuid=portgroup_uuid)
    return Response(status_code=204)


@router.delete("/nodes/{ident}/vifs", status_code=204, include_in_schema=False)
async def detach_no_vif(ident: str) -> Response:
    # ironic's args.validate: the detach's vif_id is a mandatory argument
    raise be.InvalidParameterValue(err="Missing mandatory parameter: vif_id")


@router.delete("/nodes/{ident}/vifs/", status_code=204, include_in_schema=False)
async def detach_empty_vif(ident: str, ctx: params.admin("baremetal:node:vif:detach")) -> Response:
    # ironic routes the trailing slash to its detach with an empty VIF id, which is no UUID or name
    raise errors.InvalidUuidOrName(what="vif_id", value="")


@router.delete("/nodes/{ident}/vifs/{vif_id}", status_code=204)
async def detach_vif(ident: str, vif_id: str, request: Request,
                     ctx: params.admin("baremetal:node:vif:detach"),
                     version: params.Version) -> Response:
    params.query(request, ())
    node = _node(ident, version)
    params.uuid_or_name("vif_id", vif_id)
    await service(request).vif_detach(ctx, node, vif_id)
    return Response(status_code=204)
