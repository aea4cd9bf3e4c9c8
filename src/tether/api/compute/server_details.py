"""What a server says about itself: PUT /servers/{id} (name, description, access IPs, hostname), its metadata,
its tags (from 2.26) and its addresses (/ips), as nova answers them."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute import views
from tether.api.compute.bodies import fail, hostname_field, unexpected
from tether.api.compute.server_actions import (
    JsonBody,
    access_ip,
    basic_view,
    description_field,
    metadata_field,
    name_field,
)
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.services.compute.queries import ServerRecord
from tether.services.context import RequestContext

router = paths.router("compute")


def _not_found() -> JSONResponse:
    return JSONResponse({"itemNotFound": {"code": 404, "message": "The resource could not be found."}},
                        status_code=404)


# -- update --------------------------------------------------------------------------


@router.put("/servers/{server_id}")
async def update_server(server_id: str, request: Request, raw: JsonBody,
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    version: Microversion = request.state.microversion
    if not isinstance(body, dict) or "server" not in body:
        raise fail("Invalid input for field/attribute body. 'server' is a required property")
    for key in body:
        if key != "server":
            raise unexpected("body", key)
    server = body["server"]
    if not isinstance(server, dict):
        raise fail(f"Invalid input for field/attribute server. Value: {server!r}. {server!r} is not of type "
                   f"'object'")
    allowed = {"name", "accessIPv4", "accessIPv6", "OS-DCF:diskConfig"}
    if version.at_least("2.19"):
        allowed.add("description")
    if version.at_least("2.90"):
        allowed.add("hostname")
    changes: dict[str, Any] = {}
    for key, value in server.items():
        if key not in allowed:
            raise unexpected("server", key)
        if key == "name":
            changes["name"] = name_field(value)
        elif key == "description":
            changes["description"] = description_field(value)
        elif key in ("accessIPv4", "accessIPv6"):
            ip_version = 4 if key == "accessIPv4" else 6
            changes[f"access_ip_v{ip_version}"] = access_ip(key, value, ip_version)
        elif key == "OS-DCF:diskConfig":
            if value not in ("AUTO", "MANUAL"):
                raise fail(f"Invalid input for field/attribute OS-DCF:diskConfig. Value: {value}. {value!r} is not "
                           f"one of ['AUTO', 'MANUAL']")
            changes["disk_config"] = value
        elif key == "hostname":
            changes["hostname"] = hostname_field(value, version)
    compute = cloud(request).compute
    await compute.update_server(ctx, server_id, **changes)
    record = await compute.server_record(ctx, server_id, **views.record_reads(ctx, version))
    server = views.server_detail(request.app.state.base_url, record, version, ctx)
    return JSONResponse({"server": basic_view(server, version)})


# -- password (os-server-password) --------------------------------------------------------


@router.get("/servers/{server_id}/os-server-password")
async def show_password(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """The encrypted password a guest posted to the metadata service: Tether has none, so "" as nova's for
    a guest that posted none."""
    await cloud(request).compute.server_metadata(ctx, server_id)  # the server must be there and visible
    return JSONResponse({"password": ""})


@router.delete("/servers/{server_id}/os-server-password", status_code=204)
async def clear_password(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.server_metadata(ctx, server_id)
    return Response(status_code=204)


# -- metadata ----------------------------------------------------------------------------


def _body_of(body: Any, key: str) -> Any:
    if not isinstance(body, dict) or key not in body:
        raise fail(f"Invalid input for field/attribute body. '{key}' is a required property")
    for other in body:
        if other != key:
            raise unexpected("body", other)
    return body[key]


@router.get("/servers/{server_id}/metadata")
async def list_metadata(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    return JSONResponse({"metadata": await cloud(request).compute.server_metadata(ctx, server_id)})


@router.put("/servers/{server_id}/metadata")
async def replace_metadata(server_id: str, request: Request, raw: JsonBody,
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    metadata = metadata_field(_body_of(body, "metadata"))
    return JSONResponse({"metadata": await cloud(request).compute.set_server_metadata(ctx, server_id, metadata,
                                                                                      replace=True)})


@router.post("/servers/{server_id}/metadata")
async def update_metadata(server_id: str, request: Request, raw: JsonBody,
                          ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    metadata = metadata_field(_body_of(body, "metadata"))
    return JSONResponse({"metadata": await cloud(request).compute.set_server_metadata(ctx, server_id, metadata,
                                                                                      replace=False)})


@router.get("/servers/{server_id}/metadata/{key}")
async def show_metadata_item(server_id: str, key: str, request: Request,
                             ctx: RequestContext = Depends(caller)) -> JSONResponse:
    value = await cloud(request).compute.server_metadata_item(ctx, server_id, key)
    return JSONResponse({"meta": {key: value}})


@router.put("/servers/{server_id}/metadata/{key}")
async def set_metadata_item(server_id: str, key: str, request: Request, raw: JsonBody,
                            ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    meta = metadata_field(_body_of(body, "meta"))
    if len(meta) > 1:
        raise fail("Request body contains too many items")
    if key not in meta:
        raise fail("Request body and URI mismatch")
    await cloud(request).compute.set_server_metadata(ctx, server_id, meta, replace=False)
    return JSONResponse({"meta": meta})


@router.delete("/servers/{server_id}/metadata/{key}", status_code=204)
async def delete_metadata_item(server_id: str, key: str, request: Request,
                               ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_server_metadata_item(ctx, server_id, key)
    return Response(status_code=204)


# -- tags (2.26) -----------------------------------------------------------------------------


def _tags_served(request: Request) -> bool:
    version: Microversion = request.state.microversion
    return version.at_least("2.26")


@router.get("/servers/{server_id}/tags")
async def list_tags(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if not _tags_served(request):
        return _not_found()
    return JSONResponse({"tags": await cloud(request).compute.server_tags(ctx, server_id)})


@router.put("/servers/{server_id}/tags")
async def replace_tags(server_id: str, request: Request, raw: JsonBody,
                       ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    if not _tags_served(request):
        return _not_found()
    tags = _body_of(body, "tags")
    return JSONResponse({"tags": await cloud(request).compute.set_server_tags(ctx, server_id, tags)})


@router.delete("/servers/{server_id}/tags", status_code=204)
async def delete_tags(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    if not _tags_served(request):
        return _not_found()
    await cloud(request).compute.delete_server_tags(ctx, server_id)
    return Response(status_code=204)


@router.get("/servers/{server_id}/tags/{tag}", status_code=204)
async def check_tag(server_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    if not _tags_served(request):
        return _not_found()
    await cloud(request).compute.server_has_tag(ctx, server_id, tag)
    return Response(status_code=204)


@router.put("/servers/{server_id}/tags/{tag}", status_code=201)
async def add_tag(server_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    if not _tags_served(request):
        return _not_found()
    added = await cloud(request).compute.add_server_tag(ctx, server_id, tag)
    location = f"{request.app.state.base_url}/compute/v2.1/servers/{server_id}/tags/{tag}"
    return Response(status_code=201 if added else 204, headers={"Location": location})


@router.delete("/servers/{server_id}/tags/{tag}", status_code=204)
async def delete_tag(server_id: str, tag: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    if not _tags_served(request):
        return _not_found()
    await cloud(request).compute.delete_server_tag(ctx, server_id, tag)
    return Response(status_code=204)


# -- addresses (/ips) ---------------------------------------------------------------------


def _ips(record: ServerRecord) -> dict[str, list[dict[str, Any]]]:
    """nova's ips view: each network's addresses with their version only."""
    return {label: [{"version": ip["version"], "addr": ip["addr"]} for ip in ips]
            for label, ips in views.addresses(record).items()}


@router.get("/servers/{server_id}/ips")
async def server_ips(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    record = await cloud(request).compute.server_record(ctx, server_id)
    return JSONResponse({"addresses": _ips(record)})


@router.get("/servers/{server_id}/ips/{network_label}")
async def server_ips_on(server_id: str, network_label: str, request: Request,
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    networks = _ips(await cloud(request).compute.server_record(ctx, server_id))
    if network_label not in networks:
        raise ce.ComputeNotFound(reason="Instance is not a member of specified network")
    return JSONResponse({network_label: networks[network_label]})
