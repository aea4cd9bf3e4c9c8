"""/v1/drivers (the hardware types, fake-hardware alone) and /v1/conductors (this process, from 1.49)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tether.api import paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import conductor
from tether.api.versions import Microversion
from tether.domain.baremetal_drivers import HARDWARE_TYPE, INTERFACES, PROPERTIES, RAID_LOGICAL_DISK_PROPERTIES
from tether.domain.errors import baremetal as be

router = paths.router("baremetal")

# The microversion that added each interface's default_*/enabled_* driver fields (others: 1.30).
_INTERFACE_MINORS = {"storage": 33, "rescue": 38, "bios": 40, "firmware": 86}
CONDUCTOR_GROUP = ""


def driver_body(request: Request, version: Microversion, *, detail: bool,
                fields: list[str] | None = None) -> dict[str, Any]:
    """ironic's driver.convert_with_links for fake-hardware on this conductor."""
    url, name = views.public_url(request), HARDWARE_TYPE
    body: dict[str, Any] = {"name": name, "hosts": [conductor(request)], "links": views.links(url, "drivers", name)}
    if params.minor(version) >= 14:
        body["properties"] = views.links(url, "drivers", f"{name}/properties")
    if params.minor(version) >= 30:
        body["type"] = "dynamic"
        if detail:
            for kind, names in INTERFACES.items():
                if kind == "vendor" or params.minor(version) >= _INTERFACE_MINORS.get(kind, 30):
                    body[f"default_{kind}_interface"] = names[0]
                    body[f"enabled_{kind}_interfaces"] = list(names)
    if fields is not None:
        for key in set(body) - set(fields):
            del body[key]
        invalid = [key for key in fields if key not in body]
        if invalid:
            raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')
    return body


def _fields(args: dict[str, str], version: Microversion) -> list[str] | None:
    fields = params.string_list(args.get("fields"))
    if fields is not None and params.minor(version) < 77:
        raise errors.NotAcceptable()
    return fields


@router.get("/drivers", openapi_extra=params.query_doc("type", "detail", "fields"))
@router.get("/drivers/", include_in_schema=False)
async def list_drivers(request: Request, ctx: params.admin("baremetal:driver:get"),
                       version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("type", "detail", "fields"))
    detail = params.boolean("detail", args.get("detail"))
    fields = _fields(args, version)
    if fields and detail:
        raise be.InvalidParameterValue(err="Can not specify ?detail=True and fields in the same request.")
    if (detail is not None or args.get("type") is not None) and params.minor(version) < 30:
        raise errors.NotAcceptable()
    kind = args.get("type")
    if kind not in (None, "classic", "dynamic"):
        raise be.Invalid(reason='"type" filter must be one of "classic" or "dynamic", if specified.')
    drivers = [] if kind == "classic" else [driver_body(request, version, detail=bool(detail), fields=fields)]
    return {"drivers": drivers}


def _driver(name: str) -> str:
    if name != HARDWARE_TYPE:
        raise be.HardwareTypeNotFound(driver_name=name)
    return name


@router.get("/drivers/{name}", openapi_extra=params.query_doc("fields"))
async def show_driver(name: str, request: Request, ctx: params.admin("baremetal:driver:get"),
                      version: params.Version) -> dict[str, Any]:
    args = params.query(request, ("fields",))
    fields = _fields(args, version)
    _driver(name)
    return driver_body(request, version, detail=True, fields=fields)


@router.get("/drivers/{name}/properties")
async def driver_properties(name: str, request: Request, ctx: params.admin("baremetal:driver:get_properties"),
                            version: params.Version) -> dict[str, str]:
    params.query(request, ())
    _driver(name)
    return dict(PROPERTIES)


@router.get("/drivers/{name}/raid/logical_disk_properties")
async def driver_raid_properties(name: str, request: Request,
                                 ctx: params.admin("baremetal:driver:get_raid_logical_disk_properties"),
                                 version: params.Version) -> dict[str, str]:
    params.query(request, ())
    params.require(version, 12)
    _driver(name)
    return dict(RAID_LOGICAL_DISK_PROPERTIES)


# -- conductors ------------------------------------------------------------------------------


def conductor_body(request: Request, version: Microversion, *, detail: bool,
                   fields: list[str] | None = None) -> dict[str, Any]:
    host, url = conductor(request), views.public_url(request)
    body: dict[str, Any] = {"hostname": host, "conductor_group": CONDUCTOR_GROUP, "alive": True,
                            "links": views.links(url, "conductors", host)}
    if detail:
        now = views.iso(request.app.state.cloud.baremetal.now())
        body.update(drivers=[HARDWARE_TYPE], created_at=now, updated_at=now)
    if fields is not None:
        invalid = [key for key in fields if key not in
                   ("hostname", "conductor_group", "alive", "drivers", "created_at", "updated_at", "links")]
        if invalid:
            raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')
        for key in set(body) - set(fields) - {"links"}:
            del body[key]
    return body


def _conductors_allowed(version: Microversion) -> None:
    if params.minor(version) < 49:
        raise be.NotFound("The resource could not be found.")  # ironic has no /conductors before 1.49


@router.get("/conductors", openapi_extra=params.query_doc(*params.PAGING, "fields", "detail"))
@router.get("/conductors/", include_in_schema=False)
async def list_conductors(request: Request, ctx: params.admin("baremetal:conductor:get"),
                          version: params.Version) -> dict[str, Any]:
    _conductors_allowed(version)
    args = params.query(request, (*params.PAGING, "fields", "detail"))
    fields = params.fields_and_detail(args, version, ["hostname", "conductor_group", "alive"])
    params.Page.from_query({key: value for key, value in args.items() if key != "marker"})
    return {"conductors": [conductor_body(request, version, detail=fields is None, fields=fields)]}


@router.get("/conductors/{hostname}", openapi_extra=params.query_doc("fields"))
async def show_conductor(hostname: str, request: Request, ctx: params.admin("baremetal:conductor:get"),
                         version: params.Version) -> dict[str, Any]:
    _conductors_allowed(version)
    args = params.query(request, ("fields",))
    if hostname != conductor(request):
        raise be.ConductorNotFound(conductor=hostname)
    return conductor_body(request, version, detail=True, fields=params.string_list(args.get("fields")))
