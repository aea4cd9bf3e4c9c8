"""/os-hosts (admin, before 2.43): the compute hosts, their zones and their resources, as nova answers them.

Listing and showing are read from the hypervisors; what nova hands to the
virt driver (enable/disable, maintenance, reboot, shutdown, startup) is
nova's 501 for a driver that does not implement it, as the libvirt one.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request

from tether.api import openapi, paths
from tether.api.compute.query import last
from tether.api.deps import caller, cloud, json_object
from tether.api.versions import Microversion
from tether.domain.aggregates import zone_of
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext

router = paths.router("compute")

_STATES = ("enable", "disable")


def _admin_before_2_43(request: Request, ctx: RequestContext, action: str) -> None:
    version: Microversion = request.state.microversion
    if version.at_least("2.43"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action=f"os_compute_api:os-hosts:{action}")


@router.get("/os-hosts", openapi_extra=openapi.extra(params=openapi.query({"zone": openapi.STRING})))
async def list_hosts(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _admin_before_2_43(request, ctx, "list")
    zone = last(request, "zone")
    compute = cloud(request).compute
    aggregates, _ = await compute.availability_zones()
    hosts = [{"host_name": hv.hostname, "service": "compute", "zone": zone_of(hv.hostname, aggregates)}
             for hv in await compute.compute_services(ctx) if hv.status == "enabled"]
    return {"hosts": [host for host in hosts if not zone or host["zone"] == zone]}


@router.get("/os-hosts/{host}")
async def show_host(host: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _admin_before_2_43(request, ctx, "show")
    compute = cloud(request).compute
    record = next((r for r in await compute.hypervisor_records(ctx) if r.hypervisor.hostname == host), None)
    if record is None:
        raise ce.ComputeNotFound(reason=f"Compute host {host} could not be found.")
    flavors = {flavor.id: flavor for flavor in await compute.visible_flavors(ctx, is_public=None)}
    hypervisor = record.hypervisor

    def resource(project: str, cpu: int, memory_mb: int, disk_gb: int) -> dict[str, Any]:
        return {"resource": {"host": host, "project": project, "cpu": cpu, "memory_mb": memory_mb,
                             "disk_gb": disk_gb}}

    by_project: dict[str, list[int]] = {}
    for server in record.servers:
        flavor = flavors.get(server.flavor_id)
        used = by_project.setdefault(server.project_id, [0, 0, 0])
        if flavor is not None:
            used[0] += flavor.vcpus
            used[1] += flavor.ram
            used[2] += flavor.disk + flavor.ephemeral
    totals = [sum(used[i] for used in by_project.values()) for i in range(3)]
    return {"host": [resource("(total)", hypervisor.vcpus, hypervisor.memory_mb, hypervisor.local_gb),
                     resource("(used_now)", record.vcpus_used, record.memory_mb_used, record.local_gb_used),
                     resource("(used_max)", *totals),
                     *(resource(project, *used) for project, used in by_project.items())]}


async def _known(request: Request, ctx: RequestContext, host: str) -> None:
    if host not in {hv.hostname for hv in await cloud(request).compute.compute_services(ctx)}:
        raise ce.ComputeNotFound(reason=f"Compute host {host} could not be found.")


_NOT_SUPPORTED = "The requested functionality is not supported."


_STATE_SCHEMA = {"type": "string", "enum": ["enable", "disable", "Enable", "Disable", "ENABLE", "DISABLE"]}
_UPDATE = openapi.extra(openapi.json_body({
    "type": "object", "properties": {"status": _STATE_SCHEMA, "maintenance_mode": _STATE_SCHEMA},
    "anyOf": [{"required": ["status"]}, {"required": ["maintenance_mode"]}], "additionalProperties": False}))


@router.put("/os-hosts/{host}", openapi_extra=_UPDATE)
async def update_host(host: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _admin_before_2_43(request, ctx, "update")
    body = await json_object(request)
    if not body or set(body) - {"status", "maintenance_mode"}:
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute body. One of 'status' and "
                                          "'maintenance_mode' is required, and nothing else.")
    for name, value in body.items():
        if not isinstance(value, str) or value.lower() not in _STATES:
            raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {name}. Value: {value}. "
                                              f"{value!r} is not one of ['enable', 'disable', 'Enable', "
                                              f"'Disable', 'ENABLE', 'DISABLE']")
    await _known(request, ctx, host)
    raise ce.ComputeNotImplemented(reason=_NOT_SUPPORTED)


async def _power(request: Request, ctx: RequestContext, host: str, action: str) -> dict[str, Any]:
    _admin_before_2_43(request, ctx, action)
    await _known(request, ctx, host)
    raise ce.ComputeNotImplemented(reason=_NOT_SUPPORTED)


@router.get("/os-hosts/{host}/startup")
async def startup_host(host: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _power(request, ctx, host, "start")


@router.get("/os-hosts/{host}/shutdown")
async def shutdown_host(host: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _power(request, ctx, host, "shutdown")


@router.get("/os-hosts/{host}/reboot")
async def reboot_host(host: str, request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return await _power(request, ctx, host, "reboot")
