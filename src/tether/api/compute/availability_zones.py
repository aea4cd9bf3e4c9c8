"""/os-availability-zone: the zones the compute hosts are in (from aggregates); /detail for admins.

A zone is listed when a compute service is in it; it is available while one
of them is enabled, as nova's. Tether runs no other nova services, so there
is no "internal" zone to show.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.deps import caller, cloud
from tether.domain.aggregates import zone_of
from tether.domain.compute import Hypervisor
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext

router = paths.router("compute")


async def _zones(request: Request, ctx: RequestContext) -> dict[str, list[Hypervisor]]:
    compute = cloud(request).compute
    aggregates, _ = await compute.availability_zones()
    hypervisors = await compute.compute_services(ctx.internal(ctx.project_id))
    zones: dict[str, list[Hypervisor]] = {}
    for hypervisor in hypervisors:
        zones.setdefault(zone_of(hypervisor.hostname, aggregates), []).append(hypervisor)
    return dict(sorted(zones.items()))


def _available(hypervisors: list[Hypervisor]) -> bool:
    return any(hypervisor.status == "enabled" for hypervisor in hypervisors)


@router.get("/os-availability-zone")
async def list_zones(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    zones = await _zones(request, ctx)
    return JSONResponse({"availabilityZoneInfo": [
        {"zoneName": name, "zoneState": {"available": _available(hosts)}, "hosts": None}
        for name, hosts in zones.items()]})


@router.get("/os-availability-zone/detail")
async def list_zones_detail(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action="os_compute_api:os-availability-zone:detail")
    zones = await _zones(request, ctx)
    info: list[dict[str, Any]] = []
    for name, hypervisors in zones.items():
        hosts = {hypervisor.hostname: {"nova-compute": {
            "available": hypervisor.status == "enabled",
            "active": hypervisor.state == "up" and not hypervisor.forced_down, "updated_at": None}}
            for hypervisor in hypervisors}
        info.append({"zoneName": name, "zoneState": {"available": _available(hypervisors)}, "hosts": hosts})
    return JSONResponse({"availabilityZoneInfo": info})
