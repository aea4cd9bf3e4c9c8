"""/servers: create (202), list, list in detail, show, delete (204), as nova answers them.

A name where an id belongs is a 404, so the SDK and the CLI fall back to
``?name=`` (their name-or-id lookup); another project's server is a 404 too.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import openapi, paths
from tether.api.compute import bodies, views
from tether.api.compute.bodies import fail, unexpected
from tether.api.compute.query import next_links
from tether.api.compute.server_actions import access_ip
from tether.api.compute.server_filters import SORT_KEYS, STATUSES, ServerQuery, ordered_page, parse_server_query
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.services.context import RequestContext

router = paths.router("compute")

_PASSWORD_SYMBOLS = string.ascii_letters + string.digits


# The filters and paging nova's GET /servers reads (server_filters.py has the rules).
LIST_QUERY = openapi.extra(params=openapi.query({
    "limit": openapi.LIMIT, "marker": openapi.STRING, "sort_dir": openapi.SORT_DIR,
    "sort_key": {"type": "string", "enum": sorted(SORT_KEYS)},
    "name": openapi.STRING, "status": {"type": "string", "enum": sorted(STATUSES)}, "image": openapi.STRING,
    "flavor": openapi.STRING, "ip": openapi.STRING, "ip6": openapi.STRING, "host": openapi.STRING,
    "all_projects": openapi.BOOLEAN_TEXT, "all_tenants": openapi.BOOLEAN_TEXT, "project_id": openapi.STRING,
    "deleted": openapi.BOOLEAN_TEXT, "changes-since": openapi.DATE_TIME, "changes-before": openapi.DATE_TIME,
    "tags": openapi.STRING, "locked": openapi.BOOLEAN_TEXT, "user_id": openapi.STRING,
}))


def base_url(request: Request) -> str:
    return request.app.state.base_url


# -- listing ------------------------------------------------------------------------


async def _listed(request: Request, ctx: RequestContext, version: Microversion, *, detail: bool) -> dict[str, Any]:
    compute = cloud(request).compute
    query: ServerQuery = parse_server_query(request, ctx, version)
    if query.matches_nothing:
        return {"servers": []}
    marker = await compute.listed_instance(ctx, query.marker) if query.marker else None
    records = None
    stored = query.stored()
    if stored is not None:
        if query.marker is not None and marker is None:
            raise fail(f"marker [{query.marker}] not found")
        chosen = await compute.page_servers(ctx, stored, all_projects=query.all_projects, marker=marker,
                                            keep=query.keep if query.checks else None)
    else:
        found = [instance for instance in await compute.find_servers(ctx, all_projects=query.all_projects,
                                                                     **query.columns) if query.keep(instance)]
        if query.address_checks:
            records = {record.instance.uuid: record for record in
                       await compute.server_records(found, with_hosts=views.shows_host_status(ctx, version))
                       if query.keep_record(record)}
            found = [instance for instance in found if instance.uuid in records]
        chosen = ordered_page(query, found, marker)
    base = base_url(request)
    collection = "servers/detail" if detail else "servers"
    if detail:
        if records is None:
            page = await compute.server_records(chosen, with_hosts=views.shows_host_status(ctx, version))
        else:
            page = [records[instance.uuid] for instance in chosen]
        servers = [views.server_detail(base, record, version, ctx) for record in page]
    else:
        servers = [views.server_basic(base, instance) for instance in chosen]
    return {"servers": servers,
            **next_links(request, collection, chosen, chosen[-1].uuid if chosen else None, "servers_links")}


@router.get("/servers", openapi_extra=LIST_QUERY)
async def list_servers(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    return JSONResponse(await _listed(request, ctx, version, detail=False))


@router.get("/servers/detail", openapi_extra=LIST_QUERY)
async def list_servers_detail(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    return JSONResponse(await _listed(request, ctx, version, detail=True))


# -- one server ---------------------------------------------------------------------------


@router.get("/servers/{server_id}")
async def show_server(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    compute = cloud(request).compute
    record = await compute.server_record(ctx, server_id, **views.record_reads(ctx, version))
    body = views.server_detail(base_url(request), record, version, ctx)
    return JSONResponse({"server": body})


@router.delete("/servers/{server_id}", status_code=204)
async def delete_server(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_server(ctx, server_id)
    return Response(status_code=204)


# -- creating -------------------------------------------------------------------------------


@router.post("/servers", status_code=202)
async def create_server(request: Request, parsed: bodies.ServerCreateRequest,
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    server = parsed.server
    for name in server.given():
        since = bodies.SERVER_FIELDS_SINCE.get(name)
        if since is not None and not version.within(*since):
            raise unexpected("server", name)
    _refuse_what_tether_cannot_do(parsed)
    image_id = _image_of(server)
    networks = _networks_of(server, version)
    _check_bdms(server, version, image_id)
    min_count, max_count = _counts_of(server)
    security_groups = _security_groups_of(server)
    flavor_id = str(server.flavorRef).rstrip("/").rsplit("/", 1)[-1]
    try:
        instances, reservation_id = await cloud(request).compute.create_servers(
            ctx, name=server.name, flavor_id=flavor_id, image_id=image_id or None, networks=networks,
            metadata=dict(server.metadata) if server.metadata is not None else None, key_name=server.key_name,
            group_id=_group_of(parsed), min_count=min_count, max_count=max_count,
            details={**_details_of(server, version), "scheduler_hints": _host_hints_of(parsed)},
            security_groups=None if server.security_groups is None else [g["name"] for g in security_groups])
    except ce.FlavorNotFound:
        raise fail("Invalid flavorRef provided.") from None
    except ce.ImageNotFound:
        raise fail("Can not find requested image") from None
    except (ce.NetworkNotFound, ce.PortNotFound) as error:
        raise fail(error.message) from None
    if server.return_reservation_id:
        return JSONResponse({"reservation_id": reservation_id}, status_code=202)
    instance = instances[0]
    admin_pass = server.adminPass if server.adminPass is not None else \
        "".join(secrets.choice(_PASSWORD_SYMBOLS) for _ in range(12))
    body = views.server_created(base_url(request), instance, admin_pass, security_groups)
    return JSONResponse(body, status_code=202,
                        headers={"Location": views.href(base_url(request), "servers", instance.uuid)})


def _refuse_what_tether_cannot_do(parsed: bodies.ServerCreateRequest) -> None:
    """Fields nova honours that Tether could only drop silently: a clear 400 instead of a quiet lie."""
    server = parsed.server
    refused = [
        ("block_device_mapping", bool(server.block_device_mapping), "legacy block device mappings (no volumes)"),
        ("trusted_image_certificates", bool(server.trusted_image_certificates), "trusted image certificates"),
        ("host", server.host is not None, "requesting a host"),
        ("hypervisor_hostname", server.hypervisor_hostname is not None, "requesting a hypervisor"),
        ("os:scheduler_hints", bool(set(_hints(parsed)) - {"group", *_HOST_HINTS}),
         "scheduler hints other than group, same_host and different_host"),
    ]
    for field_name, asked, what in refused:
        if asked:
            raise fail(f"Invalid input for field/attribute {field_name}. Tether does not support {what}.")
    zone = server.availability_zone
    if zone is not None and ":" in zone:
        raise fail(f"Invalid input for field/attribute availability_zone. Tether does not support "
                   f"forcing a host ({zone}).")


def _hints(parsed: bodies.ServerCreateRequest) -> dict[str, Any]:
    return {**(parsed.legacy_scheduler_hints or {}), **(parsed.scheduler_hints or {})}


_HOST_HINTS = ("same_host", "different_host")


def _host_hints_of(parsed: bodies.ServerCreateRequest) -> dict[str, list[str]]:
    """nova's SameHostFilter and DifferentHostFilter hints: a server's UUID, or a list of them."""
    hints: dict[str, list[str]] = {}
    for name in _HOST_HINTS:
        value = _hints(parsed).get(name)
        if value is None:
            continue
        servers = [value] if isinstance(value, str) else value
        if not isinstance(servers, list) or not all(isinstance(s, str) and is_uuid_like(s) for s in servers):
            raise fail(f"Invalid input for field/attribute {name}. Value: {value}. "
                       f"{value!r} is not valid under any of the given schemas")
        hints[name] = servers
    return hints


def _group_of(parsed: bodies.ServerCreateRequest) -> str | None:
    """The server group a boot joins (the ``group`` scheduler hint), checked as nova's schema checks it."""
    group = _hints(parsed).get("group")
    if group is None:
        return None
    if not isinstance(group, str) or not is_uuid_like(group):
        raise fail(f"Invalid input for field/attribute group. Value: {group}. '{group}' is not a 'uuid'")
    return group


def _details_of(server: bodies.ServerCreate, version: Microversion) -> dict[str, Any]:
    """What a server says about itself (access IPs, description, tags), as PUT /servers/{id} changes it."""
    details: dict[str, Any] = {"access_ip_v4": access_ip("accessIPv4", server.accessIPv4, 4),
                               "access_ip_v6": access_ip("accessIPv6", server.accessIPv6, 6),
                               "description": server.description, "user_data": server.user_data,
                               "injected_files": personality_of(server.personality),
                               "config_drive": "True" if server.config_drive else None,
                               "disk_config": server.disk_config,
                               "pinned_availability_zone": server.availability_zone,
                               "hostname": bodies.hostname_field(server.hostname, version)
                               if server.hostname is not None else None}
    if server.tags:
        details["tags"] = list(dict.fromkeys(server.tags))
    return details


def personality_of(files: list[bodies.PersonalityFile] | None) -> list[dict[str, str]]:
    return [{"path": item.path, "contents": item.contents} for item in files or []]


def _image_of(server: bodies.ServerCreate) -> str:
    image = server.imageRef
    if image is not None and image != "" and not is_uuid_like(image):
        raise fail(f"Invalid input for field/attribute imageRef. Value: {image}. "
                   f"'{image}' is not valid under any of the given schemas")
    if not image and not server.block_device_mapping_v2:
        raise fail("Missing imageRef attribute")
    return image or ""


def _networks_of(server: bodies.ServerCreate, version: Microversion) -> Any:
    networks = server.networks
    auto_none = version.at_least("2.37")
    if "networks" not in server.model_fields_set:
        if auto_none:
            raise fail("Invalid input for field/attribute server. 'networks' is a required property")
        return "auto"
    if isinstance(networks, str):
        if auto_none and networks in ("auto", "none"):
            return networks
        raise fail(f"Invalid input for field/attribute networks. Value: {networks}. "
                   f"'{networks}' is not valid under any of the given schemas")
    if not isinstance(networks, list):  # null included, as nova's schema
        raise fail(f"Invalid input for field/attribute networks. Value: {networks!r}. "
                   f"{networks!r} is not of type 'array'")
    requested: list[dict[str, Any]] = []
    ports: set[str] = set()
    for item in networks:
        entry = bodies.parse(bodies.NetworkRequest, item)
        if entry.tag is not None and not bodies.network_tag_allowed(version):
            raise unexpected("networks", "tag")
        if entry.port:
            if entry.port in ports:
                raise fail(f"Port ID '{entry.port}' was specified twice: you cannot attach a port multiple times.")
            if entry.fixed_ip is not None:
                raise fail(f"Specified Fixed IP '{entry.fixed_ip}' cannot be used with port '{entry.port}': "
                           f"the two cannot be specified together.")
            ports.add(entry.port)
            requested.append({"port": entry.port, "tag": entry.tag})
            continue
        if entry.uuid is None:
            raise fail("Bad network format: missing 'uuid'")
        if not is_uuid_like(entry.uuid):
            if auto_none:
                raise fail(f"Invalid input for field/attribute uuid. Value: {entry.uuid}. "
                           f"'{entry.uuid}' is not a 'uuid'")
            raise fail(f"Bad networks format: network uuid is not in proper format ({entry.uuid})")
        requested.append({"uuid": entry.uuid, "fixed_ip": entry.fixed_ip, "tag": entry.tag})
    return requested


def _check_bdms(server: bodies.ServerCreate, version: Microversion, image_id: str) -> None:
    """Validate block_device_mapping_v2 as nova's from_api does; Tether keeps none of it (no block storage)."""
    if server.block_device_mapping and server.block_device_mapping_v2:
        raise fail("Using different block_device_mapping syntaxes is not allowed in the same request.")
    for mapping in server.block_device_mapping_v2 or ():
        if mapping.tag is not None and not bodies.bdm_tag_allowed(version):
            raise unexpected("block_device_mapping_v2", "tag")
        if mapping.volume_type is not None and not version.at_least("2.67"):
            raise unexpected("block_device_mapping_v2", "volume_type")
        if mapping.no_device:
            continue
        source, destination = mapping.source_type, mapping.destination_type
        if source == "blank" and mapping.uuid:
            raise fail("Block Device Mapping is Invalid: Invalid device UUID.")
        if source != "blank" and not mapping.uuid:
            raise fail("Block Device Mapping is Invalid: Missing device UUID.")
        if source == "image" and destination == "local":
            boot_index = -1 if mapping.boot_index is None else int(mapping.boot_index)
            if not (image_id and boot_index == 0):
                raise fail("Block Device Mapping is Invalid: Mapping image to local is not supported.")
        if destination == "volume" or source in ("volume", "snapshot"):
            raise fail("Block Device Mapping is Invalid: Tether has no block storage; only the image "
                       "(source_type image, destination_type local) and blank local disks can be mapped.")


def _counts_of(server: bodies.ServerCreate) -> tuple[int, int]:
    min_count = int(server.min_count if server.min_count is not None else 1)
    max_count = int(server.max_count if server.max_count is not None else min_count)
    if min_count > max_count:
        raise fail("min_count must be <= max_count")
    return min_count, max_count


def _security_groups_of(server: bodies.ServerCreate) -> list[dict[str, str]]:
    """The groups the new server's ports get (by name or id; compute resolves them in the network service):
    the project's default group unless others are asked for."""
    if server.security_groups is None:
        return [{"name": "default"}]
    return [{"name": group.name} for group in server.security_groups]
