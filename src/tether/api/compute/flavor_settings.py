"""Admins' changes to a flavor: extra specs (create, update one, delete one), flavor access
(os-flavor-access; addTenantAccess/removeTenantAccess by POST /flavors/{id}/action) and, from 2.55,
its description (PUT /flavors/{id})."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field, StrictStr

from tether.api import openapi, paths
from tether.api.compute import views
from tether.api.compute.bodies import Body, fail, parse
from tether.api.deps import caller, cloud, json_body
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.domain.flavor_access import FlavorAccess
from tether.services.context import RequestContext

router = paths.router("compute")

_SPEC_KEY = re.compile(r"^[a-zA-Z0-9-_:. ]{1,255}$")


class TenantRef(Body):
    tenant: Annotated[StrictStr, Field(min_length=1, max_length=255)]


class FlavorUpdate(Body):
    description: Annotated[StrictStr, Field(max_length=65535)] | None


class FlavorUpdateRequest(Body):
    flavor: FlavorUpdate


def _specs(raw: Any) -> dict[str, str]:
    """nova's extra specs schema: keys of letters, digits and '-_:. ', values text up to 255 (numbers and
    booleans are taken as their text)."""
    if not isinstance(raw, dict):
        raise fail(f"Invalid input for field/attribute extra_specs. Value: {raw}. {raw!r} is not of type 'object'")
    specs = {}
    for key, value in raw.items():
        if not _SPEC_KEY.match(key):
            raise fail(f"Invalid input for field/attribute extra_specs. Additional properties are not allowed "
                       f"('{key}' was unexpected)")
        if isinstance(value, bool | int | float):
            value = str(value)
        if not isinstance(value, str) or len(value) > 255:
            raise fail(f"Invalid input for field/attribute {key}. Value: {value}. {value!r} is not valid under "
                       f"any of the given schemas")
        specs[key] = value
    return specs


def _access_body(entries: list[FlavorAccess]) -> dict[str, Any]:
    return {"flavor_access": [{"flavor_id": entry.flavor_id, "tenant_id": entry.project_id} for entry in entries]}


@router.post("/flavors/{flavor_id}/os-extra_specs",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"extra_specs": {"type": "object", "additionalProperties": openapi.STRING}},
                    ["extra_specs"]))))
async def create_extra_specs(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = await json_body(request)
    if not isinstance(body, dict) or set(body) != {"extra_specs"}:
        raise fail("Invalid input for field/attribute body. 'extra_specs' is a required property")
    specs = await cloud(request).compute.set_flavor_extra_specs(ctx, flavor_id, _specs(body["extra_specs"]))
    return JSONResponse({"extra_specs": specs})


@router.put("/flavors/{flavor_id}/os-extra_specs/{key}",
              openapi_extra=openapi.extra(openapi.json_body(
                  {"type": "object", "additionalProperties": openapi.STRING})))
async def update_extra_spec(flavor_id: str, key: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = await json_body(request)
    specs = _specs(body)
    if key not in specs:
        raise fail("Request body and URI mismatch")
    if len(specs) > 1:
        raise fail("Request body contains too many items")
    return JSONResponse(await cloud(request).compute.set_flavor_extra_specs(ctx, flavor_id, specs))


@router.delete("/flavors/{flavor_id}/os-extra_specs/{key}")
async def delete_extra_spec(flavor_id: str, key: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_flavor_extra_spec(ctx, flavor_id, key)
    return Response(status_code=200)


@router.get("/flavors/{flavor_id}/os-flavor-access")
async def list_flavor_access(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    return JSONResponse(_access_body(await cloud(request).compute.flavor_access(ctx, flavor_id)))


@router.post("/flavors/{flavor_id}/action",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"addTenantAccess": openapi.obj({"tenant": openapi.STRING}, ["tenant"]),
                  "removeTenantAccess": openapi.obj({"tenant": openapi.STRING}, ["tenant"])}))))
async def flavor_action(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    body = await json_body(request)
    compute = cloud(request).compute
    if not isinstance(body, dict) or len(body) != 1:
        raise fail("Invalid input for field/attribute body. The request body must name exactly one action.")
    (action, argument), = body.items()
    if action == "addTenantAccess":
        entries = await compute.add_flavor_access(ctx, flavor_id, parse(TenantRef, argument).tenant)
    elif action == "removeTenantAccess":
        entries = await compute.remove_flavor_access(ctx, flavor_id, parse(TenantRef, argument).tenant)
    else:
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    return JSONResponse(_access_body(entries))


@router.put("/flavors/{flavor_id}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"flavor": openapi.obj({"description": {"type": ["string", "null"]}},
                    ["description"])}, ["flavor"]))))
async def update_flavor(flavor_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    if not version.at_least("2.55"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    asked = parse(FlavorUpdateRequest, await json_body(request)).flavor
    flavor = await cloud(request).compute.describe_flavor(ctx, flavor_id, asked.description)
    return JSONResponse({"flavor": views.flavor_detail(request.app.state.base_url, flavor, version)})
