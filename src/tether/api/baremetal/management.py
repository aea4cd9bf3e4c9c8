"""A node's management: /management/boot_device (get, set, supported), /states/console, and /validate."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import find_node, service
from tether.api.baremetal.states import arguments
from tether.api.deps import json_object
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.services.context import RequestContext

router = paths.router("baremetal")

_BOOT_DEVICE_DOC = openapi.extra(openapi.json_body(openapi.obj(
    {"boot_device": openapi.STRING, "persistent": {"type": "boolean"}}, ["boot_device"])))
_CONSOLE_DOC = openapi.extra(openapi.json_body(openapi.obj({"enabled": {"type": "boolean"}}, ["enabled"])))


async def _uuid(request: Request, ctx: RequestContext, ident: str, version: Microversion) -> str:
    return (await find_node(request, ctx, ident, version)).uuid


# -- boot device ---------------------------------------------------------------------------


@router.get("/nodes/{ident}/management/boot_device")
async def get_boot_device(ident: str, request: Request, ctx: params.admin("baremetal:node:get_boot_device"),
                          version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    return await service(request).get_boot_device(ctx, await _uuid(request, ctx, ident, version))


@router.get("/nodes/{ident}/management/boot_device/supported")
async def supported_boot_devices(ident: str, request: Request, ctx: params.admin("baremetal:node:get_boot_device"),
                                 version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    node = await _uuid(request, ctx, ident, version)
    return {"supported_boot_devices": await service(request).supported_boot_devices(ctx, node)}


@router.put("/nodes/{ident}/management/boot_device", status_code=204, openapi_extra={
    **_BOOT_DEVICE_DOC, **params.query_doc("boot_device", "persistent")})
async def set_boot_device(ident: str, request: Request, ctx: params.admin("baremetal:node:set_boot_device"),
                          version: params.Version) -> Response:
    # ironic takes its arguments from the body or, as older clients send them, the query string.
    body = {**params.query(request, ("boot_device", "persistent")),
            **(await json_object(request) if await request.body() else {})}
    arguments(body, ("boot_device", "persistent"), "boot_device")
    persistent = bool(params.boolean("persistent", body.get("persistent")))
    node = await _uuid(request, ctx, ident, version)
    await service(request).set_boot_device(ctx, node, body["boot_device"], persistent)
    return Response(status_code=204)


# -- console -------------------------------------------------------------------------------


@router.get("/nodes/{ident}/states/console")
@router.get("/nodes/states/console/{ident}", include_in_schema=False)  # ironic's pecan routes it there too
async def get_console(ident: str, request: Request, ctx: params.admin("baremetal:node:get_console"),
                      version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    return await service(request).get_console(ctx, await _uuid(request, ctx, ident, version))


@router.put("/nodes/{ident}/states/console", status_code=202, openapi_extra={
    **_CONSOLE_DOC, **params.query_doc("enabled")})
async def set_console(ident: str, request: Request, ctx: params.admin("baremetal:node:set_console_state"),
                      version: params.Version) -> Response:
    body = {**params.query(request, ("enabled",)), **(await json_object(request) if await request.body() else {})}
    unexpected = sorted(set(body) - {"enabled"})
    if unexpected:
        raise be.InvalidParameterValue(err=f"Unexpected arguments: {', '.join(unexpected)}")
    if body.get("enabled") is None:
        raise be.Invalid(reason="Missing mandatory parameter: enabled")
    enabled = bool(params.boolean("enabled", body["enabled"]))
    node = await _uuid(request, ctx, ident, version)
    await service(request).set_console(ctx, node, enabled)
    location = views.link("self", views.public_url(request), "nodes", f"{ident}/states/console")["href"]
    return Response(status_code=202, headers={"Location": location})


# -- validate ------------------------------------------------------------------------------


@router.get("/nodes/{ident}/validate")
async def validate_node(ident: str, request: Request, ctx: params.admin("baremetal:node:validate"),
                        version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    return await service(request).validate_node(ctx, await _uuid(request, ctx, ident, version))


@router.get("/nodes/validate", openapi_extra=params.query_doc("node", "node_uuid"))
async def validate_node_by_query(request: Request, ctx: params.admin("baremetal:node:validate"),
                                 version: params.Version) -> dict[str, Any]:
    """The older spelling: ?node=<uuid or name> (or the deprecated ?node_uuid=<uuid>)."""
    args = params.query(request, ("node", "node_uuid"))
    node, node_uuid = args.get("node"), args.get("node_uuid")
    if node_uuid is not None:
        params.uuid("node_uuid", node_uuid)
    if node is not None:
        params.uuid_or_name("node", node)
        if not is_uuid_like(node) and params.minor(version) < 5:
            raise errors.NotAcceptable()
    ident = node_uuid or node
    if ident is None:
        raise be.Invalid(reason="Missing mandatory parameter: node")
    return await service(request).validate_node(ctx, await _uuid(request, ctx, ident, version))
