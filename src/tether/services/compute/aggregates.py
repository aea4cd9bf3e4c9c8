"""Host aggregates (admin): hypervisors grouped, with metadata; ``availability_zone`` names a zone."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from tether.domain.aggregates import DEFAULT_ZONE, Aggregate, zone_of
from tether.domain.errors import compute as ce
from tether.domain.ids import new_uuid
from tether.runtime.runtime import Runtime
from tether.services.compute.zones import ZoneMap
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


def _admin(ctx: RequestContext, action: str) -> None:
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action=f"os_compute_api:os-aggregates:{action}")


async def _require(conn: StoreConnection, aggregate_id: int | str) -> Aggregate:
    aggregate = await repos.aggregates.get(conn, int(aggregate_id)) if str(aggregate_id).isdigit() else None
    if aggregate is None:
        raise ce.ComputeNotFound(reason=f"Aggregate {aggregate_id} could not be found.")
    return aggregate


def _zone_name_problem(zone: str | None) -> None:
    if zone is not None and ":" in zone:
        raise ce.ComputeBadRequest(reason="Invalid input for field/attribute availability_zone. "
                                          "The availability zone name may not contain ':'.")


@dataclass(eq=False)
class Aggregates:
    store: Store
    rt: Runtime
    rng: random.Random
    zone_map: ZoneMap  # the scheduler's: told of each change

    @asynccontextmanager
    async def _changing(self) -> AsyncIterator[StoreConnection]:
        try:
            async with self.store.begin() as conn:
                yield conn
        finally:
            self.zone_map.changed()  # after the commit: the scheduler's next read sees it

    async def aggregates(self, ctx: RequestContext) -> list[Aggregate]:
        _admin(ctx, "index")
        async with self.store.begin() as conn:
            return await repos.aggregates.find(conn, order_by=("id",))

    async def zones(self) -> tuple[list[Aggregate], list[str]]:
        """Every aggregate and every hypervisor's hostname: what availability zones are made of."""
        async with self.store.begin() as conn:
            aggregates = await repos.aggregates.find(conn, order_by=("id",))
            hosts = [hypervisor.hostname for hypervisor in await repos.hypervisors.find(conn, order_by=("id",))]
        return aggregates, hosts

    async def aggregate(self, ctx: RequestContext, aggregate_id: str) -> Aggregate:
        _admin(ctx, "show")
        async with self.store.begin() as conn:
            return await _require(conn, aggregate_id)

    async def create_aggregate(self, ctx: RequestContext, name: str, zone: str | None) -> Aggregate:
        _admin(ctx, "create")
        _zone_name_problem(zone)
        now = self.rt.now()
        aggregate = Aggregate(id=None, uuid=new_uuid(self.rng), name=name,  # type: ignore[arg-type]
                              metadata={"availability_zone": zone} if zone else {}, created_at=now)
        async with self._changing() as conn:
            if await repos.aggregates.first(conn, name=name) is not None:
                raise ce.ComputeConflict(reason=f"Aggregate {name} already exists.")
            return await repos.aggregates.add(conn, aggregate)

    async def update_aggregate(self, ctx: RequestContext, aggregate_id: str, *, name: str | None = None,
                               zone: str | None = None, zone_given: bool = False) -> Aggregate:
        _admin(ctx, "update")
        _zone_name_problem(zone)
        async with self._changing() as conn:
            aggregate = await _require(conn, aggregate_id)
            if name is not None and name != aggregate.name:
                if await repos.aggregates.first(conn, name=name) is not None:
                    raise ce.ComputeConflict(reason=f"Aggregate {name} already exists.")
                aggregate.name = name
            if zone_given:
                metadata = dict(aggregate.metadata)
                if zone is None:
                    metadata.pop("availability_zone", None)
                else:
                    await self._check_zone_change(conn, aggregate, zone)
                    metadata["availability_zone"] = zone
                aggregate.metadata = metadata
            aggregate.updated_at = self.rt.now()
            await repos.aggregates.update(conn, aggregate.id, name=aggregate.name, metadata=aggregate.metadata,
                                          updated_at=aggregate.updated_at)
            return aggregate

    async def delete_aggregate(self, ctx: RequestContext, aggregate_id: str) -> None:
        _admin(ctx, "delete")
        async with self._changing() as conn:
            aggregate = await _require(conn, aggregate_id)
            if aggregate.hosts:
                raise ce.ComputeBadRequest(reason=f"Cannot perform action 'delete' on aggregate {aggregate.id}. "
                                                  f"Reason: Host aggregate is not empty.")
            await repos.aggregates.delete(conn, aggregate.id)

    async def add_host(self, ctx: RequestContext, aggregate_id: str, host: str) -> Aggregate:
        _admin(ctx, "add_host")
        async with self._changing() as conn:
            aggregate = await _require(conn, aggregate_id)
            if await repos.hypervisors.first(conn, hostname=host) is None:
                raise ce.ComputeNotFound(reason=f"Compute host {host} could not be found.")
            if host in aggregate.hosts:
                raise ce.ComputeConflict(reason=f"Aggregate {aggregate.id} already has host {host}.")
            if aggregate.availability_zone:
                others = [other for other in await repos.aggregates.find(conn) if other.id != aggregate.id]
                current = zone_of(host, others)
                if current != DEFAULT_ZONE and current != aggregate.availability_zone:
                    raise ce.ComputeConflict(
                        reason=f"Cannot add host to aggregate {aggregate.id}. Reason: One or more hosts already "
                               f"in availability zone(s) ['{current}'].")
            aggregate.hosts, aggregate.updated_at = [*aggregate.hosts, host], self.rt.now()
            await repos.aggregates.update(conn, aggregate.id, hosts=aggregate.hosts, updated_at=aggregate.updated_at)
            return aggregate

    async def remove_host(self, ctx: RequestContext, aggregate_id: str, host: str) -> Aggregate:
        _admin(ctx, "remove_host")
        async with self._changing() as conn:
            aggregate = await _require(conn, aggregate_id)
            if host not in aggregate.hosts:
                raise ce.ComputeNotFound(reason=f"Cannot remove host {host} in aggregate {aggregate.id}")
            aggregate.hosts = [known for known in aggregate.hosts if known != host]
            aggregate.updated_at = self.rt.now()
            await repos.aggregates.update(conn, aggregate.id, hosts=aggregate.hosts, updated_at=aggregate.updated_at)
            return aggregate

    async def set_metadata(self, ctx: RequestContext, aggregate_id: str,
                           metadata: dict[str, str | None]) -> Aggregate:
        """Merge ``metadata`` in; a key set to None is removed (nova's set_metadata)."""
        _admin(ctx, "set_metadata")
        async with self._changing() as conn:
            aggregate = await _require(conn, aggregate_id)
            merged = dict(aggregate.metadata)
            for key, value in metadata.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            zone = merged.get("availability_zone")
            _zone_name_problem(zone)
            if zone and zone != aggregate.availability_zone:
                await self._check_zone_change(conn, aggregate, zone)
            aggregate.metadata, aggregate.updated_at = merged, self.rt.now()
            await repos.aggregates.update(conn, aggregate.id, metadata=merged, updated_at=aggregate.updated_at)
            return aggregate

    async def _check_zone_change(self, conn: StoreConnection, aggregate: Aggregate, zone: str) -> None:
        others = [other for other in await repos.aggregates.find(conn) if other.id != aggregate.id]
        for host in aggregate.hosts:
            current = zone_of(host, others)
            if current != DEFAULT_ZONE and current != zone:
                raise ce.ComputeBadRequest(
                    reason=f"Cannot update aggregate {aggregate.id}. Reason: One or more hosts already "
                           f"in availability zone(s) ['{current}'].")
