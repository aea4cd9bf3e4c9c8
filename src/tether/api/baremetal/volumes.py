"""/v1/volume (from 1.32): volume connectors and targets, also listed under /nodes/{node}/volume."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import params, views
from tether.api.baremetal.nodes import service
from tether.api.baremetal.params import field
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import VolumeConnector, VolumeTarget
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.services.context import RequestContext

router = paths.router("baremetal")

VOLUME_MINOR = 32  # ironic's MINOR_32_VOLUME

# ironic's CONNECTOR_SCHEMA and TARGET_SCHEMA.
CONNECTOR_SCHEMA = params.body_schema({
    "connector_id": field("string"), "extra": field("object", "null"), "node_uuid": field("string"),
    "type": field("string"), "uuid": field("string", "null")}, ("connector_id", "node_uuid", "type"))
TARGET_SCHEMA = params.body_schema({
    "boot_index": field("integer"), "extra": field("object", "null"), "node_uuid": field("string"),
    "properties": field("object", "null"), "volume_id": field("string"), "volume_type": field("string"),
    "uuid": field("string", "null")}, ("boot_index", "node_uuid", "volume_id", "volume_type"))
CONNECTOR_SHORT_FIELDS = ["uuid", "node_uuid", "type", "connector_id"]
TARGET_SHORT_FIELDS = ["uuid", "node_uuid", "volume_type", "boot_index", "volume_id"]
_LIST_ARGS = ("node", *params.PAGING, "fields", "detail")


def _available(version: Microversion) -> None:
    if params.minor(version) < VOLUME_MINOR:
        raise be.NotFound("The resource could not be found.")


def _uuid(value: str) -> str:
    """ironic's args.uuid on a path: a 400, not a 404, for something that is no UUID."""
    if not is_uuid_like(value):
        raise be.InvalidUUID(uuid=value)
    return value.lower()


def connector_values(connector: VolumeConnector) -> dict[str, Any]:
    return {"uuid": connector.uuid, "node_uuid": connector.node_uuid, "type": connector.type,
            "connector_id": connector.connector_id, "extra": connector.extra,
            "created_at": views.iso(connector.created_at), "updated_at": views.iso(connector.updated_at)}


def target_values(target: VolumeTarget) -> dict[str, Any]:
    return {"uuid": target.uuid, "node_uuid": target.node_uuid, "volume_type": target.volume_type,
            "volume_id": target.volume_id, "boot_index": target.boot_index, "properties": target.properties,
            "extra": target.extra, "created_at": views.iso(target.created_at),
            "updated_at": views.iso(target.updated_at)}


_SAMPLE_CONNECTOR = connector_values(VolumeConnector(uuid="", node_uuid="", type="", connector_id=""))
_SAMPLE_TARGET = target_values(VolumeTarget(uuid="", node_uuid="", volume_type="", volume_id="", boot_index=0))


def _check_fields(fields: list[str] | None, sample: dict[str, Any]) -> None:
    if fields is None:
        return
    invalid = [name for name in fields if name not in sample and name != "links"]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


def _body(values: dict[str, Any], url: str, resource: str, fields: list[str] | None) -> dict[str, Any]:
    values["links"] = views.links(url, resource, values["uuid"])
    if fields is not None:
        for name in set(values) - set(fields) - {"links"}:
            del values[name]
    return values


async def _collection(request: Request, version: Microversion, *, name: str, resource: str,
                      items: Callable[[str | None], Any], values: Callable[[Any], dict[str, Any]],
                      sample: dict[str, Any], short: list[str], not_found: Callable[[str], Exception],
                      node: str | None = None) -> dict[str, Any]:
    _available(version)
    args = params.query(request, _LIST_ARGS)
    fields = params.string_list(args.get("fields"))
    _check_fields(fields, sample)
    fields = params.fields_and_detail(args, version, short)
    page = params.Page.from_query(args)
    page.check_sort_key(sample, ("extra", "properties"))
    node = node or args.get("node")
    if node is not None:
        params.node_ident(node, version)
    listed = await items(node)
    by_uuid = {item.uuid: values(item) for item in listed}
    chosen = page.apply(listed, lambda item: by_uuid[item.uuid], not_found)
    url = views.public_url(request)
    bodies = [_body(dict(by_uuid[item.uuid]), url, f"volume/{name}", fields) for item in chosen]
    return views.collection(name, bodies, chosen[-1].uuid if chosen else None, page, url, resource, args)


# -- /v1/volume and /v1/nodes/{node}/volume ----------------------------------------------------


@router.get("/volume")
@router.get("/volume/", include_in_schema=False)
async def volume_root(request: Request, ctx: params.admin("baremetal:volume:get"),
                      version: params.Version) -> dict[str, Any]:
    _available(version)
    params.query(request, ())
    url = views.public_url(request)
    return {"links": views.links(url, "volume", ""),
            "connectors": views.links(url, "volume", "connectors"),
            "targets": views.links(url, "volume", "targets")}


@router.get("/nodes/{ident}/volume")
async def node_volume(ident: str, request: Request, ctx: params.admin("baremetal:node:get"),
                      version: params.Version) -> dict[str, Any]:
    _available(version)
    params.query(request, ())
    node = await service(request).get_node(ctx, params.node_ident(ident, version))
    url = views.public_url(request)
    return {"links": views.links(url, "nodes", f"{node.uuid}/volume"),
            "connectors": views.links(url, "nodes", f"{node.uuid}/volume/connectors"),
            "targets": views.links(url, "nodes", f"{node.uuid}/volume/targets")}


# -- connectors --------------------------------------------------------------------------------


async def _connectors(request: Request, ctx: RequestContext, version: Microversion, resource: str,
                      node: str | None = None) -> dict[str, Any]:
    return await _collection(
        request, version, name="connectors", resource=resource, node=node,
        items=lambda node: service(request).list_volume_connectors(ctx, node=node), values=connector_values,
        sample=_SAMPLE_CONNECTOR, short=CONNECTOR_SHORT_FIELDS,
        not_found=lambda marker: be.VolumeConnectorNotFound(connector=marker))


@router.get("/volume/connectors", openapi_extra=params.query_doc(*_LIST_ARGS))
@router.get("/volume/connectors/", include_in_schema=False)
async def list_connectors(request: Request, ctx: params.admin("baremetal:volume:get"),
                          version: params.Version) -> dict[str, Any]:
    return await _connectors(request, ctx, version, "volume/connectors")


@router.get("/nodes/{ident}/volume/connectors", openapi_extra=params.query_doc(*_LIST_ARGS))
async def list_node_connectors(ident: str, request: Request, ctx: params.admin("baremetal:volume:get"),
                               version: params.Version) -> dict[str, Any]:
    return await _connectors(request, ctx, version, f"nodes/{ident}/volume/connectors", node=ident)


@router.post("/volume/connectors", status_code=201, openapi_extra=params.body_doc(CONNECTOR_SCHEMA))
@router.post("/volume/connectors/", status_code=201, include_in_schema=False)
async def create_connector(request: Request, ctx: params.admin("baremetal:volume:create"),
                           version: params.Version) -> JSONResponse:
    _available(version)
    body = params.check_schema("connector", await json_object(request), CONNECTOR_SCHEMA)
    params.uuid("node_uuid", body["node_uuid"])
    if body.get("uuid") is not None:
        params.uuid("uuid", body["uuid"])
    connector = await service(request).create_volume_connector(
        ctx, node_uuid=body["node_uuid"], type=body["type"], connector_id=body["connector_id"],
        extra=body.get("extra"), uuid=body.get("uuid"))
    url = views.public_url(request)
    location = views.link("self", url, "volume/connectors", connector.uuid)["href"]
    return JSONResponse(_body(connector_values(connector), url, "volume/connectors", None), status_code=201,
                        headers={"Location": location})


@router.get("/volume/connectors/{uuid}", openapi_extra=params.query_doc("fields"))
async def show_connector(uuid: str, request: Request, ctx: params.admin("baremetal:volume:get"),
                         version: params.Version) -> dict[str, Any]:
    _available(version)
    args = params.query(request, ("fields",))
    fields = params.string_list(args.get("fields"))
    _check_fields(fields, _SAMPLE_CONNECTOR)
    connector = await service(request).get_volume_connector(ctx, _uuid(uuid))
    return _body(connector_values(connector), views.public_url(request), "volume/connectors", fields)


@router.patch("/volume/connectors/{uuid}", openapi_extra=params.PATCH_DOC)
async def update_connector(uuid: str, request: Request, ctx: params.admin("baremetal:volume:update"),
                           version: params.Version) -> dict[str, Any]:
    _available(version)
    params.query(request, ())
    patch = await json_body(request)
    connector = await service(request).update_volume_connector(ctx, _uuid(uuid), patch)
    return _body(connector_values(connector), views.public_url(request), "volume/connectors", None)


@router.delete("/volume/connectors/{uuid}", status_code=204)
async def delete_connector(uuid: str, request: Request, ctx: params.admin("baremetal:volume:delete"),
                           version: params.Version) -> Response:
    _available(version)
    params.query(request, ())
    await service(request).delete_volume_connector(ctx, _uuid(uuid))
    return Response(status_code=204)


# -- targets -----------------------------------------------------------------------------------


async def _targets(request: Request, ctx: RequestContext, version: Microversion, resource: str,
                   node: str | None = None) -> dict[str, Any]:
    return await _collection(
        request, version, name="targets", resource=resource, node=node,
        items=lambda node: service(request).list_volume_targets(ctx, node=node), values=target_values,
        sample=_SAMPLE_TARGET, short=TARGET_SHORT_FIELDS,
        not_found=lambda marker: be.VolumeTargetNotFound(target=marker))


@router.get("/volume/targets", openapi_extra=params.query_doc(*_LIST_ARGS))
@router.get("/volume/targets/", include_in_schema=False)
async def list_targets(request: Request, ctx: params.admin("baremetal:volume:get"),
                       version: params.Version) -> dict[str, Any]:
    return await _targets(request, ctx, version, "volume/targets")


@router.get("/nodes/{ident}/volume/targets", openapi_extra=params.query_doc(*_LIST_ARGS))
async def list_node_targets(ident: str, request: Request, ctx: params.admin("baremetal:volume:get"),
                            version: params.Version) -> dict[str, Any]:
    return await _targets(request, ctx, version, f"nodes/{ident}/volume/targets", node=ident)


@router.post("/volume/targets", status_code=201, openapi_extra=params.body_doc(TARGET_SCHEMA))
@router.post("/volume/targets/", status_code=201, include_in_schema=False)
async def create_target(request: Request, ctx: params.admin("baremetal:volume:create"),
                        version: params.Version) -> JSONResponse:
    _available(version)
    body = params.check_schema("target", await json_object(request), TARGET_SCHEMA)
    params.uuid("node_uuid", body["node_uuid"])
    if body.get("uuid") is not None:
        params.uuid("uuid", body["uuid"])
    target = await service(request).create_volume_target(
        ctx, node_uuid=body["node_uuid"], volume_type=body["volume_type"], volume_id=body["volume_id"],
        boot_index=body["boot_index"], properties=body.get("properties"), extra=body.get("extra"),
        uuid=body.get("uuid"))
    url = views.public_url(request)
    location = views.link("self", url, "volume/targets", target.uuid)["href"]
    return JSONResponse(_body(target_values(target), url, "volume/targets", None), status_code=201,
                        headers={"Location": location})


@router.get("/volume/targets/{uuid}", openapi_extra=params.query_doc("fields"))
async def show_target(uuid: str, request: Request, ctx: params.admin("baremetal:volume:get"),
                      version: params.Version) -> dict[str, Any]:
    _available(version)
    args = params.query(request, ("fields",))
    fields = params.string_list(args.get("fields"))
    _check_fields(fields, _SAMPLE_TARGET)
    target = await service(request).get_volume_target(ctx, _uuid(uuid))
    return _body(target_values(target), views.public_url(request), "volume/targets", fields)


@router.patch("/volume/targets/{uuid}", openapi_extra=params.PATCH_DOC)
async def update_target(uuid: str, request: Request, ctx: params.admin("baremetal:volume:update"),
                        version: params.Version) -> dict[str, Any]:
    _available(version)
    params.query(request, ())
    patch = await json_body(request)
    target = await service(request).update_volume_target(ctx, _uuid(uuid), patch)
    return _body(target_values(target), views.public_url(request), "volume/targets", None)


@router.delete("/volume/targets/{uuid}", status_code=204)
async def delete_target(uuid: str, request: Request, ctx: params.admin("baremetal:volume:delete"),
                        version: params.Version) -> Response:
    _available(version)
    params.query(request, ())
    await service(request).delete_volume_target(ctx, _uuid(uuid))
    return Response(status_code=204)
