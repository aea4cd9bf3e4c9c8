"""A node's BIOS settings (1.40), firmware components (1.86) and virtual media (1.89).

fake-hardware caches no BIOS settings and finds no firmware components, so their lists are empty
and every name is ironic's 404; its management interface has no virtual media, which ironic's
conductor refuses with UnsupportedDriverExtension (400).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import errors, params
from tether.api.baremetal.nodes import find_node
from tether.api.deps import json_object
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be

router = paths.router("baremetal")

BIOS_MINOR, BIOS_DETAIL_MINOR, FIRMWARE_MINOR, VMEDIA_MINOR, GET_VMEDIA_MINOR = 40, 74, 86, 89, 93
# ironic's boot_devices.VMEDIA_DEVICES and image_publisher.VMEDIA_SUPPORTED_URL_SCHEMES.
VMEDIA_DEVICES = ("disk", "cdrom", "floppy")
VMEDIA_SCHEMES = ("http", "https", "nfs", "cifs", "smb")
# ironic's VMEDIA_ATTACH_VALIDATOR.
VMEDIA_SCHEMA = params.body_schema({
    "device_type": {"type": "string", "enum": list(VMEDIA_DEVICES)}, "image_url": {"type": "string"},
    "image_download_source": {"type": "string", "enum": ["http", "local", "swift"]}},
    ("device_type", "image_url"))


def _available(version: Microversion, needed: int) -> None:
    if params.minor(version) < needed:
        raise be.NotFound("The resource could not be found.")


@router.get("/nodes/{ident}/bios", openapi_extra=params.query_doc("fields", "detail"))
async def list_bios(ident: str, request: Request, ctx: params.admin("baremetal:node:bios:get"),
                    version: params.Version) -> dict[str, Any]:
    _available(version, BIOS_MINOR)
    args = params.query(request, ("fields", "detail") if params.minor(version) >= BIOS_DETAIL_MINOR else ())
    params.boolean("detail", args.get("detail"))
    await find_node(request, ctx, ident, version)
    return {"bios": []}


@router.get("/nodes/{ident}/bios/{name}")
async def show_bios(ident: str, name: str, request: Request, ctx: params.admin("baremetal:node:bios:get"),
                    version: params.Version) -> dict[str, Any]:
    _available(version, BIOS_MINOR)
    params.query(request, ())
    node = await find_node(request, ctx, ident, version)
    raise be.BIOSSettingNotFound(node=node.uuid, name=name)


@router.get("/nodes/{ident}/firmware", openapi_extra=params.query_doc("fields", "detail"))
async def list_firmware(ident: str, request: Request, ctx: params.admin("baremetal:node:firmware:get"),
                        version: params.Version) -> dict[str, Any]:
    if params.minor(version) < FIRMWARE_MINOR:
        raise be.NotFound("The API version does not allow node firmware")
    args = params.query(request, ("fields", "detail"))
    params.boolean("detail", args.get("detail"))
    await find_node(request, ctx, ident, version)
    return {"firmware": []}


def _no_vmedia(driver: str, extension: str) -> be.UnsupportedDriverExtension:
    return be.UnsupportedDriverExtension(driver=driver, extension=extension)


@router.get("/nodes/{ident}/vmedia")
async def show_vmedia(ident: str, request: Request, ctx: params.admin("baremetal:node:vmedia:get"),
                      version: params.Version) -> dict[str, Any]:
    _available(version, GET_VMEDIA_MINOR)
    params.query(request, ())
    node = await find_node(request, ctx, ident, version)
    raise _no_vmedia(node.driver, "get_virtual_media")


@router.post("/nodes/{ident}/vmedia", status_code=204, openapi_extra=params.body_doc(VMEDIA_SCHEMA))
async def attach_vmedia(ident: str, request: Request, ctx: params.admin("baremetal:node:vmedia:attach"),
                        version: params.Version) -> Response:
    _available(version, VMEDIA_MINOR)
    body = params.check_schema("vmedia", await json_object(request), VMEDIA_SCHEMA)
    scheme = urlparse(body["image_url"]).scheme
    if scheme not in VMEDIA_SCHEMES:
        raise be.Invalid(reason=f"Unsupported or missing URL scheme: {scheme}")
    node = await find_node(request, ctx, ident, version)
    raise _no_vmedia(node.driver, "attach_virtual_media")


@router.put("/nodes/{ident}/vmedia", openapi_extra=openapi.extra(openapi.json_body({"type": "object"})),
            include_in_schema=False)
async def put_vmedia(ident: str, version: params.Version) -> Response:
    _available(version, VMEDIA_MINOR)
    raise errors.MethodNotAllowed("The method specified is not allowed for this resource.")


@router.delete("/nodes/{ident}/vmedia", status_code=204, openapi_extra=params.query_doc("device_types"))
@router.delete("/nodes/{ident}/vmedia/", status_code=204, include_in_schema=False)
async def detach_vmedia(ident: str, request: Request, ctx: params.admin("baremetal:node:vmedia:detach"),
                        version: params.Version) -> Response:
    _available(version, VMEDIA_MINOR)
    args = params.query(request, ("device_types",))
    invalid = [kind for kind in params.string_list(args.get("device_types")) or () if kind not in VMEDIA_DEVICES]
    if invalid:
        raise be.Invalid(reason=f"Invalid device type(s) {', '.join(invalid)} (valid are "
                                f"{', '.join(VMEDIA_DEVICES)})")
    node = await find_node(request, ctx, ident, version)
    raise _no_vmedia(node.driver, "detach_virtual_media")
