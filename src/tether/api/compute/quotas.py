"""/os-quota-sets (show, defaults, detail; admins update and delete) and /limits, as nova answers them.

Nova stopped showing its network quotas at 2.36 (neutron owns them) and file
injection's at 2.57; each microversion shows, and accepts, only its own.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tether.api import paths
from tether.api.compute.bodies import Body, fail, unexpected
from tether.api.compute.query import Text
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.booleans import bool_from_string
from tether.domain import quotas as q
from tether.services.compute.quotas import MAX_LIMIT
from tether.services.context import RequestContext

router = paths.router("compute")

_INTEGER = re.compile(r"^-?[0-9]+$")

# nova's limits view: which absolute limit shows which quota, and which count shows its use
_ABSOLUTE = {
    "ram": ("maxTotalRAMSize",), "instances": ("maxTotalInstances",), "cores": ("maxTotalCores",),
    "key_pairs": ("maxTotalKeypairs",), "floating_ips": ("maxTotalFloatingIps",),
    "metadata_items": ("maxServerMeta", "maxImageMeta"), "injected_files": ("maxPersonality",),
    "injected_file_content_bytes": ("maxPersonalitySize",), "security_groups": ("maxSecurityGroups",),
    "security_group_rules": ("maxSecurityGroupRules",), "server_groups": ("maxServerGroups",),
    "server_group_members": ("maxServerGroupMembers",),
}
_USED = {"totalRAMUsed": "ram", "totalCoresUsed": "cores", "totalInstancesUsed": "instances",
         "totalFloatingIpsUsed": "floating_ips", "totalSecurityGroupsUsed": "security_groups",
         "totalServerGroupsUsed": "server_groups"}
_LIMITS_HIDDEN_FROM_2_36 = ("floating_ips", "security_groups", "security_group_rules")
_LIMITS_HIDDEN_FROM_2_57 = (*_LIMITS_HIDDEN_FROM_2_36, "injected_files", "injected_file_content_bytes")


class UserQuery(BaseModel):
    user_id: Text = None


class LimitsQuery(BaseModel):
    tenant_id: Text = None


class QuotaSetUpdateRequest(Body):
    quota_set: dict[str, Any]


def _hidden(version: Microversion) -> tuple[str, ...]:
    if version.at_least("2.57"):
        return q.HIDDEN_FROM_2_57
    if version.at_least("2.36"):
        return q.HIDDEN_FROM_2_36
    return ()


def _quota_set(project_id: str | None, values: dict[str, Any], version: Microversion) -> dict[str, Any]:
    hidden = _hidden(version)
    body: dict[str, Any] = {"id": project_id} if project_id else {}
    body.update({name: values[name] for name in q.DEFAULTS if name not in hidden and name in values})
    return {"quota_set": body}


@router.get("/os-quota-sets/{project_id}")
async def show_quota_set(project_id: str, request: Request, query: Annotated[UserQuery, Query()],
                         ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    limits = await cloud(request).compute.quota_set(ctx, project_id, query.user_id)
    return JSONResponse(_quota_set(project_id, limits, version))


@router.get("/os-quota-sets/{project_id}/detail")
async def show_quota_detail(project_id: str, request: Request, query: Annotated[UserQuery, Query()],
                            ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    detail = await cloud(request).compute.quota_detail(ctx, project_id, query.user_id)
    return JSONResponse(_quota_set(project_id, detail, version))


@router.get("/os-quota-sets/{project_id}/defaults")
async def show_default_quota_set(project_id: str, request: Request,
                                 ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    defaults = await cloud(request).compute.default_quota_set(ctx, project_id)
    return JSONResponse(_quota_set(project_id, defaults, version))


def _limit_value(name: str, raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | str) or (isinstance(raw, str) and not _INTEGER.match(raw)):
        raise fail(f"Invalid input for field/attribute {name}. Value: {raw}. {raw!r} is not valid under any of "
                   f"the given schemas")
    value = int(raw)
    if value < q.UNLIMITED:
        raise fail(f"Invalid input for field/attribute {name}. Value: {raw}. {value} is less than the minimum "
                   f"of -1")
    if value > MAX_LIMIT:
        raise fail(f"Invalid input for field/attribute {name}. Value: {raw}. {value} is greater than the "
                   f"maximum of {MAX_LIMIT}")
    return value


@router.put("/os-quota-sets/{project_id}")
async def update_quota_set(project_id: str, request: Request, parsed: QuotaSetUpdateRequest,
                           query: Annotated[UserQuery, Query()],
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    hidden = _hidden(version)
    values: dict[str, int] = {}
    force = False
    for name, raw in parsed.quota_set.items():
        if name == "force":
            try:
                force = bool(bool_from_string(raw, strict=True)) if isinstance(raw, str) else raw
            except ValueError:
                force = None  # type: ignore[assignment]
            if not isinstance(force, bool):
                raise fail(f"Invalid input for field/attribute force. Value: {raw}. {raw!r} is not one of "
                           f"the boolean values nova accepts")
            continue
        if name not in q.DEFAULTS or name in hidden:
            raise unexpected("quota_set", name)
        values[name] = _limit_value(name, raw)
    limits = await cloud(request).compute.update_quota_set(ctx, project_id, values, user_id=query.user_id,
                                                          force=force)
    return JSONResponse(_quota_set(None, limits, version))


@router.delete("/os-quota-sets/{project_id}")
async def delete_quota_set(project_id: str, request: Request, query: Annotated[UserQuery, Query()],
                           ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.delete_quota_set(ctx, project_id, query.user_id)
    return Response(status_code=202)


@router.get("/limits")
async def show_limits(request: Request, query: Annotated[LimitsQuery, Query()],
                      ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    limits, used = await cloud(request).compute.absolute_limits(ctx, query.tenant_id)
    hidden = _LIMITS_HIDDEN_FROM_2_57 if version.at_least("2.57") else \
        _LIMITS_HIDDEN_FROM_2_36 if version.at_least("2.36") else ()
    absolute: dict[str, int] = {}
    for name, shown_as in _ABSOLUTE.items():
        if name in hidden:
            continue
        for label in shown_as:
            if label == "maxImageMeta" and version.at_least("2.39"):
                continue
            absolute[label] = limits[name]
    absolute.update({label: used.get(name, 0) for label, name in _USED.items() if name not in hidden})
    return JSONResponse({"limits": {"rate": [], "absolute": absolute}})
