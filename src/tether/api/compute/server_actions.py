"""POST /servers/{id}/action (nova's server actions), remote consoles, and the console page Tether serves.

Each action's body is checked as nova's schema checks it, then handed to
compute's operation; what the state forbids is nova's 409 from the state
table (``InstanceInvalidState``), a locked server's is its 409 "is locked".
Actions Tether does not have are nova's answer for an unknown action (400
"There is no such action"), as for a deployment without that extension.
"""

from __future__ import annotations

import html
import ipaddress
import secrets
import string
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import TypeAdapter, ValidationError

from tether.api import paths
from tether.api.compute import bodies, floating_ip_proxies, security_group_proxies, views
from tether.api.compute.bodies import JsonBody, fail, unexpected
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.services.compute.server_updates import check_metadata
from tether.services.context import RequestContext

router = paths.router("compute")
console_pages = paths.roots("compute")

_PASSWORD_SYMBOLS = string.ascii_letters + string.digits
_POWER_ACTIONS = {"os-start": "start", "os-stop": "stop", "pause": "pause", "unpause": "unpause",
                  "suspend": "suspend", "resume": "resume"}
_REBOOT_TYPES = {"HARD": "HARD", "Hard": "HARD", "SOFT": "SOFT", "Soft": "SOFT"}
_REBUILD_FIELDS_SINCE = {"description": "2.19", "key_name": "2.54", "user_data": "2.57",
                         "trusted_image_certificates": "2.63", "hostname": "2.90"}
_REBUILD_FIELDS = {"imageRef", "name", "metadata", "preserve_ephemeral", "adminPass", "accessIPv4", "accessIPv6",
                   "OS-DCF:diskConfig", "personality", *_REBUILD_FIELDS_SINCE}
CONSOLE_PATH = "/compute/console/vnc_auto.html"

Handler = Callable[[Request, RequestContext, str, Any], Awaitable[Response]]


def _no_such_action(name: str) -> ce.ComputeBadRequest:
    return fail(f"There is no such action: {name}")


def _object(name: str, value: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(f"Invalid input for field/attribute {name}. Value: {value!r}. {value!r} is not of type 'object'")
    for key in value:
        if key not in allowed:
            raise unexpected(name, key)
    return value


def _null_or_empty(name: str, value: Any) -> None:
    if value is not None and value != {}:
        if isinstance(value, dict):
            raise unexpected(name, next(iter(value)))
        raise fail(f"Invalid input for field/attribute {name}. Value: {value!r}. {value!r} is not of type 'null'")


def access_ip(field_name: str, value: Any, version: int) -> str | None:
    """nova's accessIPv4/accessIPv6: an address of that version, or "" to clear it."""
    if value is None or value == "":
        return None
    try:
        if not isinstance(value, str) or (address := ipaddress.ip_address(value)).version != version:
            raise ValueError(value)
    except ValueError:
        raise fail(f"Invalid input for field/attribute {field_name}. Value: {value}. "
                   f"'{value}' is not a 'ipv{version}'") from None
    return str(address)  # kept in its canonical form, as nova's IPAddress field keeps it


def name_field(value: Any, field_name: str = "name") -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip() or len(value) > 255:
        raise fail(f"Invalid input for field/attribute {field_name}. Value: {value!r}.")
    return value


def description_field(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > 255):
        raise fail(f"Invalid input for field/attribute description. Value: {value!r}.")
    return value


# -- the actions ------------------------------------------------------------------


async def _power(request: Request, ctx: RequestContext, server_id: str, body: Any, event: str) -> Response:
    _null_or_empty(_action_name_of(event), body)
    await cloud(request).compute.power_action(ctx, server_id, event)
    return Response(status_code=202)


def _action_name_of(event: str) -> str:
    return {v: k for k, v in _POWER_ACTIONS.items()}[event]


async def _reboot(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    body = _object("reboot", body, {"type"})
    if "type" not in body:
        raise fail("Invalid input for field/attribute reboot. 'type' is a required property")
    reboot_type = _REBOOT_TYPES.get(body["type"]) if isinstance(body["type"], str) else None
    if reboot_type is None:
        raise fail(f"Invalid input for field/attribute type. Value: {body['type']}. "
                   f"{body['type']!r} is not one of ['HARD', 'Hard', 'SOFT', 'Soft']")
    await cloud(request).compute.reboot_server(ctx, server_id, reboot_type)
    return Response(status_code=202)


async def _lock(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    version: Microversion = request.state.microversion
    reason = None
    if version.at_least("2.73") and isinstance(body, dict):
        body = _object("lock", body, {"locked_reason"})
        reason = body.get("locked_reason")
        if reason is not None and (not isinstance(reason, str) or len(reason) > 255):
            raise fail(f"Invalid input for field/attribute locked_reason. Value: {reason!r}.")
    else:
        _null_or_empty("lock", body)
    await cloud(request).compute.lock_server(ctx, server_id, reason)
    return Response(status_code=202)


async def _unlock(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    _null_or_empty("unlock", body)
    await cloud(request).compute.unlock_server(ctx, server_id)
    return Response(status_code=202)


async def _rebuild(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    version: Microversion = request.state.microversion
    allowed = {name for name in _REBUILD_FIELDS
               if name not in _REBUILD_FIELDS_SINCE or version.at_least(_REBUILD_FIELDS_SINCE[name])}
    if version.at_least("2.57"):
        allowed.discard("personality")
    body = _object("rebuild", body, allowed)
    if "imageRef" not in body:
        raise fail("Invalid input for field/attribute rebuild. 'imageRef' is a required property")
    for refused, what in (("trusted_image_certificates", "trusted image certificates"),):
        if body.get(refused):
            raise fail(f"Invalid input for field/attribute {refused}. Tether does not support {what}.")
    image_ref = body["imageRef"]
    if not isinstance(image_ref, str) or not image_ref:
        raise fail(f"Invalid input for field/attribute imageRef. Value: {image_ref!r}.")
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = name_field(body["name"])
    if "metadata" in body:
        changes["metadata"] = metadata_field(body["metadata"])
    for field_name, column, ip_version in (("accessIPv4", "access_ip_v4", 4), ("accessIPv6", "access_ip_v6", 6)):
        if field_name in body:
            changes[column] = access_ip(field_name, body[field_name], ip_version)
    if "description" in body:
        changes["description"] = description_field(body["description"])
    changes.update(_guest_changes(body))
    if "hostname" in body:
        changes["hostname"] = bodies.hostname_field(body["hostname"], version)
    preserve = body.get("preserve_ephemeral", False)
    if not isinstance(preserve, bool):
        raise fail(f"Invalid input for field/attribute preserve_ephemeral. Value: {preserve!r}.")
    compute = cloud(request).compute
    image_id = image_ref.rstrip("/").rsplit("/", 1)[-1]
    await compute.rebuild_server(ctx, server_id, image_id, preserve_ephemeral=preserve, **changes)
    record = await compute.server_record(ctx, server_id, **views.record_reads(ctx, version))
    server = rebuilt_view(views.server_detail(request.app.state.base_url, record, version, ctx), version,
                          record.instance.user_data)
    server["adminPass"] = _password(body.get("adminPass"))
    return JSONResponse({"server": server}, status_code=202)


# What nova's rebuild answers before 2.75: the server without its extended attributes (``show_*=False``).
_REBUILT_BASIC = frozenset({
    "accessIPv4", "accessIPv6", "addresses", "created", "flavor", "hostId", "id", "image", "links", "metadata",
    "name", "status", "tenant_id", "user_id", "updated", "OS-DCF:diskConfig", "progress", "fault", "locked",
    "locked_reason", "description", "tags", "trusted_image_certificates"})


def basic_view(server: dict[str, Any], version: Microversion) -> dict[str, Any]:
    """The server as nova's update and rebuild answer it: before 2.75 without its extended attributes."""
    if version.at_least("2.75"):
        return server
    basic = {key: value for key, value in server.items() if key in _REBUILT_BASIC}
    # nova's extend_address=False: no address type, no MAC
    basic["addresses"] = {network: [{"version": ip["version"], "addr": ip["addr"]} for ip in ips]
                          for network, ips in server["addresses"].items()}
    return basic


def _guest_changes(body: dict[str, Any]) -> dict[str, Any]:
    """What a rebuild gives the new guest: its key (2.54, null: none), user data (2.57, null: none),
    injected files (up to 2.56) and disk config, checked as nova's rebuild schema checks them."""
    changes: dict[str, Any] = {}
    if "key_name" in body:
        key_name = body["key_name"]
        if key_name is not None and (not isinstance(key_name, str) or not 1 <= len(key_name) <= 255):
            raise fail(f"Invalid input for field/attribute key_name. Value: {key_name!r}.")
        changes["key_name"] = key_name
    if "user_data" in body:
        user_data = body["user_data"]
        if user_data is not None:
            if not isinstance(user_data, str) or not bodies.is_base64(user_data):
                raise fail(f"Invalid input for field/attribute user_data. Value: {user_data!r}. "
                           f"{user_data!r} is not a 'base64'")
            if len(user_data) > 65535:
                raise fail("Invalid input for field/attribute user_data. Value: ... is too long")
        changes["user_data"] = user_data
    if "personality" in body:
        try:
            files = TypeAdapter(list[bodies.PersonalityFile]).validate_python(body["personality"])
        except ValidationError:
            raise fail("Invalid input for field/attribute personality. Value: "
                       f"{body['personality']!r}.") from None
        changes["injected_files"] = [{"path": item.path, "contents": item.contents} for item in files]
    if "OS-DCF:diskConfig" in body:
        if body["OS-DCF:diskConfig"] not in ("AUTO", "MANUAL"):
            raise fail("Invalid input for field/attribute OS-DCF:diskConfig. Value: "
                       f"{body['OS-DCF:diskConfig']}. {body['OS-DCF:diskConfig']!r} is not one of ['AUTO', 'MANUAL']")
        changes["disk_config"] = body["OS-DCF:diskConfig"]
    return changes


def rebuilt_view(server: dict[str, Any], version: Microversion, user_data: str | None) -> dict[str, Any]:
    """The server as nova's rebuild answers: from 2.75 as GET shows it; key_name from 2.54, user_data from 2.57."""
    server.pop("OS-EXT-SRV-ATTR:user_data", None)  # nova's rebuild shows user_data at the top instead
    key_name = server.get("key_name")
    server = basic_view(server, version)
    if version.at_least("2.54"):
        server["key_name"] = key_name
    if version.at_least("2.57"):
        server["user_data"] = user_data
    return server


def metadata_field(value: Any) -> dict[str, str]:
    try:
        return check_metadata(value)
    except ce.ComputeBadRequest as error:
        raise fail(error.message) from None


def _password(given: Any) -> str:
    if given is not None:
        if not isinstance(given, str):
            raise fail(f"Invalid input for field/attribute adminPass. Value: {given!r}.")
        return given
    return "".join(secrets.choice(_PASSWORD_SYMBOLS) for _ in range(12))


async def _resize(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    body = _object("resize", body, {"flavorRef", "OS-DCF:diskConfig"})
    flavor_ref = body.get("flavorRef")
    if flavor_ref is None:
        raise fail("Invalid input for field/attribute resize. 'flavorRef' is a required property")
    if not isinstance(flavor_ref, str | int) or isinstance(flavor_ref, bool) or str(flavor_ref) == "":
        raise fail(f"Invalid input for field/attribute flavorRef. Value: {flavor_ref!r}.")
    disk_config = _guest_changes({key: body[key] for key in ("OS-DCF:diskConfig",) if key in body})
    await cloud(request).compute.resize_server(ctx, server_id, str(flavor_ref).rstrip("/").rsplit("/", 1)[-1],
                                               disk_config=disk_config.get("disk_config"))
    return Response(status_code=202)


async def _confirm_resize(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    _null_or_empty("confirmResize", body)
    await cloud(request).compute.confirm_resize(ctx, server_id)
    return Response(status_code=204)


async def _revert_resize(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    _null_or_empty("revertResize", body)
    await cloud(request).compute.revert_resize(ctx, server_id)
    return Response(status_code=202)


async def _rescue(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    if body is None:
        body = {}
    body = _object("rescue", body, {"adminPass", "rescue_image_ref"})
    image = body.get("rescue_image_ref")
    await cloud(request).compute.rescue_server(ctx, server_id, image)
    return JSONResponse({"adminPass": _password(body.get("adminPass"))})


async def _unrescue(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    _null_or_empty("unrescue", body)
    await cloud(request).compute.unrescue_server(ctx, server_id)
    return Response(status_code=202)


async def _create_image(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    version: Microversion = request.state.microversion
    body = _object("createImage", body, {"name", "metadata"})
    if "name" not in body:
        raise fail("Invalid input for field/attribute createImage. 'name' is a required property")
    name = name_field(body["name"])
    metadata = metadata_field(body.get("metadata") or {})
    image_id = await cloud(request).compute.create_server_image(ctx, server_id, name, metadata)
    if version.at_least("2.45"):
        return JSONResponse({"image_id": image_id}, status_code=202)
    return Response(status_code=202, headers={"Location": f"{request.app.state.base_url}/image/v2/images/{image_id}"})


async def _create_backup(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    version: Microversion = request.state.microversion
    body = _object("createBackup", body, {"name", "backup_type", "rotation", "metadata"})
    for required in ("name", "backup_type", "rotation"):
        if required not in body:
            raise fail(f"Invalid input for field/attribute createBackup. '{required}' is a required property")
    name = name_field(body["name"])
    backup_type = body["backup_type"]
    if not isinstance(backup_type, str):
        raise fail(f"Invalid input for field/attribute backup_type. Value: {backup_type!r}. "
                   f"{backup_type!r} is not of type 'string'")
    rotation = body["rotation"]
    if isinstance(rotation, bool) or not (isinstance(rotation, int) or
                                          (isinstance(rotation, str) and rotation.isdigit())) or int(rotation) < 0:
        raise fail(f"Invalid input for field/attribute rotation. Value: {rotation!r}. "
                   f"{rotation!r} is not valid under any of the given schemas")
    metadata = metadata_field(body.get("metadata") or {})
    image_id = await cloud(request).compute.create_server_backup(ctx, server_id, name, backup_type, int(rotation),
                                                                 metadata)
    if version.at_least("2.45"):
        return JSONResponse({"image_id": image_id}, status_code=202)
    headers = {"Location": f"{request.app.state.base_url}/image/v2/images/{image_id}"} if int(rotation) > 0 else {}
    return Response(status_code=202, headers=headers)


async def _console_output(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    body = _object("os-getConsoleOutput", body if body is not None else {}, {"length"})
    length = body.get("length")
    if length is not None:
        try:
            if isinstance(length, bool) or not isinstance(length, int | str):
                raise ValueError(length)
            length = int(length)
        except ValueError:
            raise fail(f"Invalid input for field/attribute length. Value: {length}. "
                       f"'{length}' is not valid under any of the given schemas") from None
        if length < -1:
            raise fail(f"Invalid input for field/attribute length. Value: {length}. "
                       f"{length} is less than the minimum of -1")
    output = await cloud(request).compute.console_output(ctx, server_id, length)
    return JSONResponse({"output": output})


async def _vnc_console(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    version: Microversion = request.state.microversion
    if version.at_least("2.6"):
        raise _no_such_action("os-getVNCConsole")
    body = _object("os-getVNCConsole", body, {"type"})
    console_type = body.get("type")
    if console_type not in ("novnc", "xvpvnc"):
        raise fail(f"Invalid input for field/attribute type. Value: {console_type}. "
                   f"{console_type!r} is not one of ['novnc', 'xvpvnc']")
    token = await cloud(request).compute.remote_console(ctx, server_id, "vnc", console_type)
    return JSONResponse({"console": {"type": console_type, "url": console_url(request, token)}})


async def _change_password(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    body = _object("changePassword", body, {"adminPass"})
    if not isinstance(body.get("adminPass"), str):
        raise fail("Invalid input for field/attribute changePassword. 'adminPass' is a required property")
    await cloud(request).compute.change_password(ctx, server_id)
    return Response(status_code=202)  # never reached: no driver of Tether's sets a password


async def _reset_state(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    body = _object("os-resetState", body, {"state"})
    state = body.get("state")
    if state not in ("active", "error"):
        raise fail(f"Invalid input for field/attribute state. Value: {state}. "
                   f"{state!r} is not one of ['active', 'error']")
    await cloud(request).compute.reset_state(ctx, server_id, state)
    return Response(status_code=202)


async def _inject_network_info(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
    _null_or_empty("injectNetworkInfo", body)
    await cloud(request).compute.inject_network_info(ctx, server_id)
    return Response(status_code=202)


def _never_soft_deleted(action: str) -> Handler:
    """restore and forceDelete act on a soft-deleted server; Tether deletes at once (nova without
    reclaim_instance_interval), so no server is ever soft-deleted: nova's 409 for the state it is in."""
    async def handle(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
        _null_or_empty(action, body)
        instance = await cloud(request).compute.listed_instance(ctx, server_id)
        if instance is None or instance.deleted:
            raise ce.InstanceNotFound(instance_id=server_id)
        raise ce.InstanceInvalidState(action=action, instance_uuid=instance.uuid, attr="vm_state",
                                      state=instance.vm_state)
    return handle


def _power_handler(event: str) -> Handler:
    async def handle(request: Request, ctx: RequestContext, server_id: str, body: Any) -> Response:
        return await _power(request, ctx, server_id, body, event)
    return handle


ACTIONS: dict[str, Handler] = {
    **{name: _power_handler(event) for name, event in _POWER_ACTIONS.items()},
    "reboot": _reboot,
    "addSecurityGroup": security_group_proxies.add_security_group,
    "removeSecurityGroup": security_group_proxies.remove_security_group,
    "addFloatingIp": floating_ip_proxies.add_floating_ip,
    "removeFloatingIp": floating_ip_proxies.remove_floating_ip,
    "lock": _lock,
    "unlock": _unlock,
    "rebuild": _rebuild,
    "resize": _resize,
    "confirmResize": _confirm_resize,
    "revertResize": _revert_resize,
    "rescue": _rescue,
    "unrescue": _unrescue,
    "createImage": _create_image,
    "createBackup": _create_backup,
    "os-getConsoleOutput": _console_output,
    "os-getVNCConsole": _vnc_console,
    "changePassword": _change_password,
    "os-resetState": _reset_state,
    "injectNetworkInfo": _inject_network_info,
    "restore": _never_soft_deleted("restore"),
    "forceDelete": _never_soft_deleted("forceDelete"),
}


@router.post("/servers/{server_id}/action")
async def server_action(server_id: str, request: Request, raw: JsonBody,
                        ctx: RequestContext = Depends(caller)) -> Response:
    body = raw.root
    if not isinstance(body, dict) or len(body) != 1:
        raise fail("Invalid input for field/attribute body: one action, as {\"<action>\": {...}}, is required.")
    (name, value), = body.items()
    handler = ACTIONS.get(name)
    if handler is None:
        if name in DECLINED_ACTIONS:
            # nova finds the server before it acts: a server that is not there is a 404 whatever the action
            instance = await cloud(request).compute.listed_instance(ctx, server_id)
            if instance is None or instance.deleted:
                raise ce.InstanceNotFound(instance_id=server_id)
        raise _no_such_action(name)
    return await handler(request, ctx, server_id, value)


# nova's actions that Tether declines (README, "Not implemented"): the server is looked up first, as nova does
DECLINED_ACTIONS = frozenset({
    "shelve", "unshelve", "shelveOffload", "migrate", "os-migrateLive", "evacuate",
    "trigger_crash_dump",
    "os-getSPICEConsole", "os-getSerialConsole", "os-getRDPConsole",
})


# -- remote consoles --------------------------------------------------------------------


def console_url(request: Request, token: str) -> str:
    return f"{request.app.state.base_url}{CONSOLE_PATH}?token={token}"


_PROTOCOLS = {"vnc": ("novnc", "xvpvnc"), "spice": ("spice-html5", "spice-direct"), "rdp": ("rdp-html5",),
              "serial": ("serial",), "mks": ("webmks",)}


@router.post("/servers/{server_id}/remote-consoles")
async def create_remote_console(server_id: str, request: Request, raw: JsonBody,
                                ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = raw.root
    version: Microversion = request.state.microversion
    if not version.at_least("2.6"):
        return JSONResponse({"itemNotFound": {"code": 404, "message": "The resource could not be found."}},
                            status_code=404)
    if not isinstance(body, dict) or "remote_console" not in body:
        raise fail("Invalid input for field/attribute body. 'remote_console' is a required property")
    console = _object("remote_console", body["remote_console"], {"protocol", "type"})
    protocol, console_type = console.get("protocol"), console.get("type")
    if protocol not in _PROTOCOLS:
        raise fail(f"Invalid input for field/attribute protocol. Value: {protocol}. "
                   f"{protocol!r} is not one of {sorted(_PROTOCOLS)}")
    if console_type not in _PROTOCOLS[protocol]:
        raise fail(f"Invalid input for field/attribute type. Value: {console_type}. "
                   f"{console_type!r} is not one of {list(_PROTOCOLS[protocol])}")
    token = await cloud(request).compute.remote_console(ctx, server_id, protocol, console_type)
    return JSONResponse({"remote_console": {"protocol": protocol, "type": console_type,
                                            "url": console_url(request, token)}})


@console_pages.get(CONSOLE_PATH, include_in_schema=False)
async def console_page(request: Request) -> HTMLResponse:
    """The page a console URL opens: Tether has no VNC server, so it says whose console this is."""
    token = request.query_params.get("token", "")
    instance = await cloud(request).compute.console_of(token) if token else None
    if instance is None:
        return HTMLResponse("<html><body><p>The console token is invalid or has expired.</p></body></html>",
                            status_code=404)
    name = html.escape(instance.name)
    return HTMLResponse(f"<html><head><title>{name} console</title></head><body><h1>{name}</h1>"
                        f"<p>Console of server {instance.uuid} ({instance.status}). Tether's guests are fake: "
                        f"there is no screen to show.</p></body></html>")
