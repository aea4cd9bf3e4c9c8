"""/os-simple-tenant-usage: each project's server hours in a period (admin), or one project's (its members).

As nova's: ``start`` and ``end`` are naive UTC times in one of three
formats (missing: now), the end is cut at now, and from 2.40 the servers
counted are paged by ``limit`` and ``marker`` (a server's UUID).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute.bodies import fail
from tether.api.compute.query import MAX_LIMIT, last, next_links
from tether.api.compute.views import naive_time
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.domain.tenant_usage import ServerUsage
from tether.services.context import RequestContext

router = paths.router("compute")

_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%d %H:%M:%S.%f")
_COLLECTION = "os-simple-tenant-usage"


def _moment(text: str | None) -> float:
    if not text:
        return time.time()
    for layout in _FORMATS:
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise fail("Invalid datetime string: Datetime is in invalid format")


def _period(request: Request) -> tuple[float, float]:
    start, stop = _moment(last(request, "start")), _moment(last(request, "end"))
    if not start < stop:
        raise fail("Invalid start time. The start time cannot occur after the end time.")
    return start, min(stop, time.time())


def _page(request: Request, version: Microversion, usages: list[ServerUsage]) -> list[ServerUsage]:
    if not version.at_least("2.40"):
        return usages
    marker, raw = last(request, "marker"), last(request, "limit")
    if raw is not None and (not raw.isdigit()):
        raise fail(f"Invalid input for query parameters limit. Value: {raw}. '{raw}' does not match '^[0-9]*$'")
    if marker is not None:
        at = next((index for index, usage in enumerate(usages) if usage.instance.uuid == marker), None)
        if at is None:
            raise fail(f"marker [{marker}] not found")
        usages = usages[at + 1:]
    return usages[:min(int(raw), MAX_LIMIT) if raw is not None else MAX_LIMIT]


def _server_usage(usage: ServerUsage, now: float) -> dict[str, Any]:
    instance, flavor = usage.instance, usage.flavor
    ended = instance.deleted_at if instance.deleted else None
    started = instance.launched_at or 0.0
    return {
        "hours": usage.hours, "flavor": flavor.name if flavor else "", "instance_id": instance.uuid,
        "name": instance.name, "tenant_id": instance.project_id,
        "memory_mb": flavor.ram if flavor else 0, "local_gb": (flavor.disk + flavor.ephemeral) if flavor else 0,
        "vcpus": flavor.vcpus if flavor else 0,
        "started_at": naive_time(instance.launched_at), "ended_at": naive_time(ended),
        "state": "terminated" if ended is not None else instance.vm_state,
        "uptime": int((ended if ended is not None else now) - started),
    }


def _summaries(usages: list[ServerUsage], start: float, stop: float, *, detailed: bool) -> list[dict[str, Any]]:
    now = time.time()
    summaries: dict[str, dict[str, Any]] = {}
    for usage in usages:
        info = _server_usage(usage, now)
        summary = summaries.setdefault(info["tenant_id"], {
            "tenant_id": info["tenant_id"], **({"server_usages": []} if detailed else {}),
            "total_local_gb_usage": 0, "total_vcpus_usage": 0, "total_memory_mb_usage": 0, "total_hours": 0,
            "start": naive_time(start), "stop": naive_time(stop)})
        summary["total_local_gb_usage"] += info["local_gb"] * info["hours"]
        summary["total_vcpus_usage"] += info["vcpus"] * info["hours"]
        summary["total_memory_mb_usage"] += info["memory_mb"] * info["hours"]
        summary["total_hours"] += info["hours"]
        if detailed:
            summary["server_usages"].append(info)
    return list(summaries.values())


def _links(request: Request, version: Microversion, collection: str, usages: list[ServerUsage],
           key: str) -> dict[str, Any]:
    if not version.at_least("2.40"):
        return {}
    return next_links(request, collection, usages, usages[-1].instance.uuid if usages else None, key)


@router.get("/os-simple-tenant-usage")
async def list_tenant_usage(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    start, stop = _period(request)
    usages = _page(request, version, await cloud(request).compute.tenant_usage(ctx, start, stop))
    body: dict[str, Any] = {"tenant_usages": _summaries(usages, start, stop,
                                                        detailed=last(request, "detailed") == "1")}
    body.update(_links(request, version, _COLLECTION, usages, "tenant_usages_links"))
    return JSONResponse(body)


@router.get("/os-simple-tenant-usage/", include_in_schema=False)
async def no_tenant_id(ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """An empty project id names no project: nova's router answers 404, not the list."""
    raise ce.ComputeNotFound(reason="The resource could not be found.")


@router.get("/os-simple-tenant-usage/{tenant_id}")
async def show_tenant_usage(tenant_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    start, stop = _period(request)
    usages = _page(request, version, await cloud(request).compute.tenant_usage(ctx, start, stop, tenant_id))
    summaries = _summaries(usages, start, stop, detailed=True)
    body: dict[str, Any] = {"tenant_usage": summaries[0] if summaries else {}}
    body.update(_links(request, version, f"{_COLLECTION}/{tenant_id}", usages, "tenant_usage_links"))
    return JSONResponse(body)
