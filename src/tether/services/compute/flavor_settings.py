"""What admins change on a flavor after creating it: extra specs, the projects a private one is shared
with, and its description (2.55).

A ``resources:CUSTOM_<CLASS>=1`` extra spec makes the flavor ask for one bare-metal node of that
resource class, as nova's ironic driver and placement read it: the resource class is derived from
the specs at every write.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Flavor
from tether.domain.errors import compute as ce
from tether.domain.flavor_access import FlavorAccess, resource_class_of
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


def _admin(ctx: RequestContext, action: str) -> None:
    if not ctx.is_admin:
        raise ce.ComputeForbidden(action=f"os_compute_api:{action}")


async def _flavor(conn: StoreConnection, flavor_id: str) -> Flavor:
    flavor = await repos.flavors.get(conn, flavor_id)
    if flavor is None:
        raise ce.FlavorNotFound(flavor_id=flavor_id)
    return flavor


@dataclass(eq=False)
class FlavorSettings:
    store: Store

    async def _write_specs(self, conn: StoreConnection, flavor: Flavor, specs: dict[str, str]) -> None:
        flavor.extra_specs, flavor.resource_class = specs, resource_class_of(specs)
        await repos.flavors.update(conn, flavor.id, extra_specs=specs, resource_class=flavor.resource_class)

    async def set_extra_specs(self, ctx: RequestContext, flavor_id: str, specs: dict[str, str]) -> dict[str, str]:
        _admin(ctx, "os-flavor-extra-specs:create")
        async with self.store.begin() as conn:
            flavor = await _flavor(conn, flavor_id)
            await self._write_specs(conn, flavor, {**flavor.extra_specs, **specs})
        return specs

    async def delete_extra_spec(self, ctx: RequestContext, flavor_id: str, key: str) -> None:
        _admin(ctx, "os-flavor-extra-specs:delete")
        async with self.store.begin() as conn:
            flavor = await _flavor(conn, flavor_id)
            if key not in flavor.extra_specs:
                raise ce.ComputeNotFound(reason=f"Flavor {flavor_id} has no extra specs with key {key}.")
            await self._write_specs(conn, flavor, {k: v for k, v in flavor.extra_specs.items() if k != key})

    async def describe_flavor(self, ctx: RequestContext, flavor_id: str, description: str | None) -> Flavor:
        _admin(ctx, "os-flavor-manage:update")
        async with self.store.begin() as conn:
            flavor = await _flavor(conn, flavor_id)
            flavor.description = description
            await repos.flavors.update(conn, flavor.id, description=description)
        return flavor

    async def flavor_access(self, ctx: RequestContext, flavor_id: str) -> list[FlavorAccess]:
        _admin(ctx, "os-flavor-access")
        async with self.store.begin() as conn:
            flavor = await _flavor(conn, flavor_id)
            if flavor.is_public:
                raise ce.ComputeNotFound(reason="Access list not available for public flavors.")
            return await repos.flavor_projects.find(conn, order_by=("project_id",), flavor_id=flavor_id)

    async def add_tenant_access(self, ctx: RequestContext, flavor_id: str, project_id: str) -> list[FlavorAccess]:
        _admin(ctx, "os-flavor-access:add_tenant_access")
        async with self.store.begin() as conn:
            flavor = await _flavor(conn, flavor_id)
            if flavor.is_public:
                raise ce.ComputeConflict(reason="Can not add access to a public flavor.")
            if await repos.flavor_projects.first(conn, flavor_id=flavor_id, project_id=project_id) is not None:
                raise ce.ComputeConflict(reason=f"Flavor access already exists for flavor {flavor_id} and project "
                                                f"{project_id} combination.")
            await repos.flavor_projects.add(conn, FlavorAccess(flavor_id=flavor_id, project_id=project_id))
            return await repos.flavor_projects.find(conn, order_by=("project_id",), flavor_id=flavor_id)

    async def remove_tenant_access(self, ctx: RequestContext, flavor_id: str,
                                   project_id: str) -> list[FlavorAccess]:
        _admin(ctx, "os-flavor-access:remove_tenant_access")
        async with self.store.begin() as conn:
            await _flavor(conn, flavor_id)
            if not await repos.flavor_projects.delete_where(conn, flavor_id=flavor_id, project_id=project_id):
                raise ce.ComputeNotFound(reason=f"Flavor access not found for {flavor_id} / {project_id} "
                                                f"combination.")
            return await repos.flavor_projects.find(conn, order_by=("project_id",), flavor_id=flavor_id)
