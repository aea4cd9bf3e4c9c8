"""/os-services (admin): each hypervisor's nova-compute service; disable/enable and force down as nova does.

Before 2.53 a service is named by host and binary in the body of
PUT /os-services/{enable,disable,disable-log-reason,force-down}; from 2.53 by
its UUID in the path. Tether runs no other nova services to list.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, StrictBool, StrictStr

from tether.api import openapi, paths
from tether.api.compute.bodies import Body, fail, parse
from tether.api.compute.hypervisors import service_uuid
from tether.api.compute.query import Text
from tether.api.deps import caller, cloud, json_body
from tether.api.versions import Microversion
from tether.booleans import bool_from_string
from tether.domain.aggregates import Aggregate, zone_of
from tether.domain.compute import Hypervisor
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like
from tether.services.context import RequestContext

router = paths.router("compute")

BINARY = "nova-compute"


class ServiceQuery(BaseModel):
    host: Text = None
    binary: Text = None


class HostBinary(Body):
    host: StrictStr
    binary: StrictStr
    disabled_reason: StrictStr | None = None
    forced_down: StrictBool | StrictStr | None = None


class ServiceUpdate(Body):
    status: StrictStr | None = None
    disabled_reason: StrictStr | None = None
    forced_down: StrictBool | StrictStr | None = None


def service_body(hypervisor: Hypervisor, aggregates: list[Aggregate], version: Microversion) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": service_uuid(hypervisor.hostname) if version.at_least("2.53") else hypervisor.id,
        "binary": BINARY, "host": hypervisor.hostname, "zone": zone_of(hypervisor.hostname, aggregates),
        "status": hypervisor.status, "state": "down" if hypervisor.forced_down else hypervisor.state,
        "updated_at": None, "disabled_reason": hypervisor.disabled_reason,
    }
    if version.at_least("2.11"):
        body["forced_down"] = hypervisor.forced_down
    return body


@router.get("/os-services")
async def list_services(request: Request, query: Annotated[ServiceQuery, Query()],
                        ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    compute = cloud(request).compute
    hypervisors = await compute.compute_services(ctx)
    aggregates, _ = await compute.availability_zones()
    services = [service_body(hypervisor, aggregates, version) for hypervisor in hypervisors]
    if query.host:
        services = [service for service in services if service["host"] == query.host]
    if query.binary:
        services = [service for service in services if service["binary"] == query.binary]
    return JSONResponse({"services": services})


def _flag(name: str, raw: bool | str, *, strict: bool) -> bool:
    if isinstance(raw, bool):
        return raw
    try:
        return bool(bool_from_string(raw, strict=strict))
    except ValueError:
        raise fail(f"Invalid input for field/attribute {name}. Value: {raw}. '{raw}' is not valid under any of "
                   f"the given schemas") from None


@router.put("/os-services/{service_id}",
              openapi_extra=openapi.extra(openapi.json_body(
                  openapi.obj({"status": {"type": "string", "enum": ["enabled", "disabled"]},
                  "disabled_reason": openapi.STRING, "forced_down": {"type": "boolean"}}))))
async def update_service(service_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    body = await json_body(request)
    compute = cloud(request).compute
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action="os_compute_api:os-services:update")
    if version.at_least("2.53"):
        return JSONResponse(await _update_by_uuid(request, service_id, parse(ServiceUpdate, body), ctx, version))
    actions = {"enable", "disable", "disable-log-reason"} | ({"force-down"} if version.at_least("2.11") else set())
    if service_id not in actions:
        raise ce.ComputeNotFound(reason="Unknown action")
    asked = parse(HostBinary, body)
    if asked.binary != BINARY:
        raise fail(f"Updating a {asked.binary} service is not supported. Only nova-compute services can be "
                   f"updated.")
    answer: dict[str, Any] = {"host": asked.host, "binary": asked.binary}
    if service_id == "force-down":
        if asked.forced_down is None:
            raise fail("Missing forced_down field")
        forced = _flag("forced_down", asked.forced_down, strict=False)
        await compute.update_compute_service(ctx, asked.host, forced_down=forced)
        answer["forced_down"] = forced
        return JSONResponse({"service": answer})
    if service_id == "disable-log-reason" and asked.disabled_reason is None:
        raise fail("Missing disabled reason field")
    disabled = service_id != "enable"
    reason = asked.disabled_reason if service_id == "disable-log-reason" else None
    await compute.update_compute_service(ctx, asked.host, disabled=disabled, disabled_reason=reason)
    answer["status"] = "disabled" if disabled else "enabled"
    if reason:
        answer["disabled_reason"] = reason
    return JSONResponse({"service": answer})


async def _update_by_uuid(request: Request, service_id: str, asked: ServiceUpdate, ctx: RequestContext,
                          version: Microversion) -> dict[str, Any]:
    if not is_uuid_like(service_id):
        raise fail(f"Invalid uuid {service_id}")
    compute = cloud(request).compute
    found = [hypervisor for hypervisor in await compute.compute_services(ctx)
             if service_uuid(hypervisor.hostname) == service_id.lower()]
    if not found:
        raise ce.ComputeNotFound(reason=f"Service {service_id} could not be found.")
    if asked.status is not None and asked.status not in ("enabled", "disabled"):
        raise fail(f"Invalid input for field/attribute status. Value: {asked.status}. '{asked.status}' is not one "
                   f"of ['enabled', 'disabled']")
    if asked.status is None and asked.forced_down is None:
        raise fail("No updates were requested. Fields 'status' or 'forced_down' should be specified.")
    if asked.status == "enabled" and asked.disabled_reason:
        raise fail("Specifying 'disabled_reason' with status 'enabled' is invalid.")
    forced = _flag("forced_down", asked.forced_down, strict=True) if asked.forced_down is not None else None
    updated = await compute.update_compute_service(
        ctx, found[0].hostname, disabled=None if asked.status is None else asked.status == "disabled",
        disabled_reason=asked.disabled_reason, forced_down=forced)
    aggregates, _ = await compute.availability_zones()
    body = service_body(updated, aggregates, version)
    body["forced_down"] = updated.forced_down
    return {"service": body}
