"""/os-hypervisors (admin): list, detail, show, statistics and uptime; search and servers before 2.53.

From 2.53 nova names hypervisors (and their services) by UUID. Tether's
hypervisors have integer ids, so their UUIDs are derived from the hostname:
stable, and accepted back wherever nova takes one. From 2.88 the resource
counters are gone and ``uptime`` is shown (what ``uptime`` prints on the host, as libvirt's driver
reports it).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tether.api import paging, paths
from tether.api.compute.bodies import fail
from tether.api.compute.query import Boolean, PageQuery, Text, next_links, strict_bool
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.services.compute.hypervisors import HypervisorRecord
from tether.services.context import RequestContext

router = paths.router("compute")

_NAMESPACE = uuid.UUID("6b6f1d0e-2f0a-4d8e-9c55-746574686572")


class ShowQuery(BaseModel):
    """What nova reads from 2.53 on (as text, checked in nova's words)."""

    with_servers: Boolean = None


class ListQuery(PageQuery, ShowQuery):
    hypervisor_hostname_pattern: Text = None


def hypervisor_uuid(hostname: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"compute-node:{hostname}"))


def service_uuid(hostname: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"nova-compute:{hostname}"))


def hypervisor_body(record: HypervisorRecord, version: Microversion, *, detail: bool,
                    with_servers: bool, uptime: str | None = None) -> dict[str, Any]:
    hypervisor = record.hypervisor
    by_uuid = version.at_least("2.53")
    body: dict[str, Any] = {
        "id": hypervisor_uuid(hypervisor.hostname) if by_uuid else hypervisor.id,
        "hypervisor_hostname": hypervisor.hostname,
        "state": hypervisor.state,
        "status": hypervisor.status,
    }
    if detail:
        body.update({
            "hypervisor_type": "fake",
            "hypervisor_version": 1,
            "host_ip": None,
            "service": {"id": service_uuid(hypervisor.hostname) if by_uuid else hypervisor.id,
                        "host": hypervisor.hostname, "disabled_reason": hypervisor.disabled_reason},
        })
        if not version.at_least("2.88"):
            body.update({
                "vcpus": hypervisor.vcpus, "memory_mb": hypervisor.memory_mb, "local_gb": hypervisor.local_gb,
                "vcpus_used": record.vcpus_used, "memory_mb_used": record.memory_mb_used,
                "local_gb_used": record.local_gb_used,
                "free_ram_mb": hypervisor.memory_mb - record.memory_mb_used,
                "free_disk_gb": hypervisor.local_gb - record.local_gb_used,
                "current_workload": 0, "running_vms": len(record.servers),
                "disk_available_least": hypervisor.local_gb - record.local_gb_used,
                "cpu_info": {} if version.at_least("2.28") else "",
            })
        else:
            body["uptime"] = uptime
    if with_servers and (record.servers or version.at_least("2.75")):
        body["servers"] = [{"name": server.name, "uuid": server.uuid} for server in record.servers]
    return body


async def _hypervisors(request: Request, query: ListQuery, ctx: RequestContext, version: Microversion, *,
                       detail: bool) -> dict[str, Any]:
    records = await cloud(request).compute.hypervisor_records(ctx)
    with_servers = False
    pattern = None
    if version.at_least("2.53"):
        raw = query.with_servers
        with_servers = strict_bool("with_servers", raw) if raw is not None else False
        pattern = query.hypervisor_hostname_pattern
    if pattern is not None:
        if query.limit is not None or query.marker is not None:
            raise fail("Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not "
                       "supported.")
        records = [record for record in records if pattern in record.hypervisor.hostname]
        if not records:
            raise ce.ComputeNotFound(reason=f"No hypervisor matching '{pattern}' could be found.")
    links: dict[str, Any] = {}
    if version.at_least("2.33") and pattern is None:
        limit, marker = query.page()
        ident = (lambda r: hypervisor_uuid(r.hypervisor.hostname)) if version.at_least("2.53") \
            else (lambda r: str(r.hypervisor.id))
        start = None
        if marker is not None:
            start = paging.find(records, marker, ident)
            if start is None:
                raise fail(f"marker [{marker}] not found")
        records = paging.page(records, paging.ListQuery(marker=marker, limit=limit), marker=start)
        collection = "os-hypervisors/detail" if detail else "os-hypervisors"
        links = next_links(request, collection, records, ident(records[-1]) if records else None,
                           "hypervisors_links")
    uptime = cloud(request).compute.hypervisor_uptime
    return {"hypervisors": [hypervisor_body(record, version, detail=detail, with_servers=with_servers,
                                            uptime=uptime(record.hypervisor.hostname))
                            for record in records], **links}


@router.get("/os-hypervisors")
async def list_hypervisors(request: Request, query: Annotated[ListQuery, Query()],
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    return JSONResponse(await _hypervisors(request, query, ctx, version, detail=False))


@router.get("/os-hypervisors/detail")
async def list_hypervisors_detail(request: Request, query: Annotated[ListQuery, Query()],
                                  ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    return JSONResponse(await _hypervisors(request, query, ctx, version, detail=True))


@router.get("/os-hypervisors/statistics")
async def hypervisor_statistics(request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """The sums over every hypervisor; nova removed them at 2.88."""
    version: Microversion = request.state.microversion
    if version.at_least("2.88"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    records = await cloud(request).compute.hypervisor_records(ctx)
    totals = {key: 0 for key in ("count", "vcpus", "vcpus_used", "memory_mb", "memory_mb_used", "local_gb",
                                 "local_gb_used", "free_ram_mb", "free_disk_gb", "current_workload", "running_vms",
                                 "disk_available_least")}
    for record in records:
        hypervisor = record.hypervisor
        totals["count"] += 1
        totals["vcpus"] += hypervisor.vcpus
        totals["vcpus_used"] += record.vcpus_used
        totals["memory_mb"] += hypervisor.memory_mb
        totals["memory_mb_used"] += record.memory_mb_used
        totals["local_gb"] += hypervisor.local_gb
        totals["local_gb_used"] += record.local_gb_used
        totals["free_ram_mb"] += hypervisor.memory_mb - record.memory_mb_used
        totals["free_disk_gb"] += hypervisor.local_gb - record.local_gb_used
        totals["disk_available_least"] += hypervisor.local_gb - record.local_gb_used
        totals["running_vms"] += len(record.servers)
    return JSONResponse({"hypervisor_statistics": totals})


@router.get("/os-hypervisors/{hypervisor_id}/uptime")
async def hypervisor_uptime(hypervisor_id: str, request: Request,
                            ctx: RequestContext = Depends(caller)) -> JSONResponse:
    """Before 2.88 (then ``uptime`` is in the hypervisor itself): the fake driver keeps no uptime."""
    version: Microversion = request.state.microversion
    if version.at_least("2.88"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    compute = cloud(request).compute
    found = _find(await compute.hypervisor_records(ctx), hypervisor_id, version)
    body = hypervisor_body(found, version, detail=False, with_servers=False)
    body["uptime"] = compute.hypervisor_uptime(found.hypervisor.hostname)
    return JSONResponse({"hypervisor": body})


def _matching(records: list[HypervisorRecord], hostname: str, version: Microversion) -> list[HypervisorRecord]:
    """nova's search by hypervisor hostname before 2.53 (a substring match); gone from 2.53, where the
    list's hypervisor_hostname_pattern replaces it."""
    if version.at_least("2.53"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")
    found = [record for record in records if hostname in record.hypervisor.hostname]
    if not found:
        raise ce.ComputeNotFound(reason=f"No hypervisor matching '{hostname}' could be found.")
    return found


@router.get("/os-hypervisors/{hostname}/search")
async def search_hypervisors(hostname: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    found = _matching(await cloud(request).compute.hypervisor_records(ctx), hostname, version)
    return JSONResponse({"hypervisors": [hypervisor_body(record, version, detail=False, with_servers=False)
                                         for record in found]})


@router.get("/os-hypervisors/{hostname}/servers")
async def hypervisor_servers(hostname: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    found = _matching(await cloud(request).compute.hypervisor_records(ctx), hostname, version)
    return JSONResponse({"hypervisors": [hypervisor_body(record, version, detail=False, with_servers=True)
                                         for record in found]})


def _find(records: list[HypervisorRecord], hypervisor_id: str, version: Microversion) -> HypervisorRecord:
    if version.at_least("2.53"):
        try:
            uuid.UUID(hypervisor_id)
        except ValueError:
            raise fail(f"Invalid uuid {hypervisor_id}") from None
        found = [r for r in records if hypervisor_uuid(r.hypervisor.hostname) == hypervisor_id.lower()]
    else:
        found = [r for r in records if str(r.hypervisor.id) == hypervisor_id]
    if not found:
        raise ce.ComputeNotFound(reason=f"Hypervisor with ID '{hypervisor_id}' could not be found.")
    return found[0]


@router.get("/os-hypervisors/{hypervisor_id}")
async def show_hypervisor(hypervisor_id: str, request: Request, query: Annotated[ShowQuery, Query()],
                          ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    records = await cloud(request).compute.hypervisor_records(ctx)
    with_servers = False
    if version.at_least("2.53") and query.with_servers is not None:
        with_servers = strict_bool("with_servers", query.with_servers)
    found = _find(records, hypervisor_id, version)
    uptime = cloud(request).compute.hypervisor_uptime(found.hypervisor.hostname)
    return JSONResponse({"hypervisor": hypervisor_body(found, version, detail=True, with_servers=with_servers,
                                                       uptime=uptime)})
