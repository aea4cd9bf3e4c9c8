"""Hypervisors: the hosts VMs run on, and what their servers use of them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from tether.domain.compute import Hypervisor, Instance
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store


@dataclass
class HypervisorRecord:
    hypervisor: Hypervisor
    servers: list[Instance]
    vcpus_used: int
    memory_mb_used: int
    local_gb_used: int


@dataclass(eq=False)
class Hypervisors:
    store: Store

    async def create_hypervisor(
        self, *, hostname: str, vcpus: int, memory_mb: int, local_gb: int
    ) -> Hypervisor:
        async with self.store.begin() as conn:
            existing = await repos.hypervisors.first(conn, hostname=hostname)
            if existing is not None:
                return existing
            return await repos.hypervisors.add(conn, Hypervisor(
                id=None, hostname=hostname, vcpus=vcpus, memory_mb=memory_mb, local_gb=local_gb))  # type: ignore[arg-type]

    async def hypervisor_records(self, ctx: RequestContext) -> list[HypervisorRecord]:
        """Every hypervisor with the servers it runs and what they use of it."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-hypervisors:list")
        async with self.store.begin() as conn:
            hypervisors = await repos.hypervisors.find(conn, order_by=("id",))
            hostnames = [hypervisor.hostname for hypervisor in hypervisors]
            running = await repos.instances.find(conn, order_by=("created_at", "uuid"), deleted=False,
                                                 is_baremetal=False, host=hostnames) if hostnames else []
            flavor_ids = sorted({instance.flavor_id for instance in running})
            flavors = {flavor.id: flavor for flavor in await repos.flavors.find(conn, id=flavor_ids)} \
                if flavor_ids else {}
        by_host: dict[str, list[Instance]] = defaultdict(list)
        for instance in running:
            by_host[instance.host or ""].append(instance)
        records = []
        for hypervisor in hypervisors:
            servers = by_host.get(hypervisor.hostname, [])
            used = [flavors[instance.flavor_id] for instance in servers if instance.flavor_id in flavors]
            records.append(HypervisorRecord(
                hypervisor, servers, vcpus_used=sum(f.vcpus for f in used),
                memory_mb_used=sum(f.ram for f in used),
                local_gb_used=sum(f.disk + f.ephemeral for f in used)))
        return records
