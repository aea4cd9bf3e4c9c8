"""Flavors: create, read, list, delete."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from tether.domain.compute import Flavor
from tether.domain.errors import compute as ce
from tether.domain.ids import new_uuid
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


@dataclass(eq=False)
class Flavors:
    store: Store
    rng: random.Random

    async def create_flavor(
        self,
        ctx: RequestContext,
        *,
        name: str,
        vcpus: int,
        ram: int,
        disk: int,
        id: str | None = None,
        ephemeral: int = 0,
        swap: int = 0,
        is_public: bool = True,
        resource_class: str | None = None,
        extra_specs: dict[str, str] | None = None,
        description: str | None = None,
        rxtx_factor: float | None = None,
    ) -> Flavor:
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-flavor-manage:create")
        if not isinstance(name, str) or not name.strip() or len(name) > 255:
            raise ce.ComputeBadRequest(reason="Invalid input for field/attribute name.")
        for field_name, value in (("vcpus", vcpus), ("ram", ram)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {field_name}.")
        for field_name, value in (("disk", disk), ("OS-FLV-EXT-DATA:ephemeral", ephemeral), ("swap", swap)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ce.ComputeBadRequest(reason=f"Invalid input for field/attribute {field_name}.")
        specs = dict(extra_specs or {})
        if resource_class:
            specs[f"resources:CUSTOM_{resource_class.upper().replace('-', '_')}"] = "1"
        flavor = Flavor(id=id or new_uuid(self.rng), name=name, vcpus=vcpus, ram=ram, disk=disk,
                        ephemeral=ephemeral, swap=swap, is_public=is_public, resource_class=resource_class,
                        extra_specs=specs, description=description, rxtx_factor=rxtx_factor)
        try:
            async with self.store.begin() as conn:
                if await repos.flavors.get(conn, flavor.id) is not None:
                    raise ce.ComputeConflict(reason=f"Flavor with ID {flavor.id} already exists.")
                await repos.flavors.add(conn, flavor)
        except IntegrityError:
            raise ce.ComputeConflict(reason=f"Flavor with name {name} already exists.") from None
        return flavor

    async def _get_flavor(self, conn: StoreConnection, flavor_id: str) -> Flavor:
        flavor = await repos.flavors.get(conn, flavor_id) if isinstance(flavor_id, str) else None
        if flavor is None:
            raise ce.FlavorNotFound(flavor_id=flavor_id)
        return flavor

    async def visible_flavors(self, ctx: RequestContext, *, is_public: bool | None = True) -> list[Flavor]:
        """Flavors the caller may list: the public ones and the private ones shared with the caller's project
        (nova's flavor access); an admin may ask for the private ones only (False) or all (None)."""
        if not ctx.is_admin:
            is_public = True
        async with self.store.begin() as conn:
            if is_public is None:
                return await repos.flavors.find(conn, order_by=("id",))
            if not is_public:
                return await repos.flavors.find(conn, order_by=("id",), is_public=False)
            shared = [access.flavor_id for access in await repos.flavor_projects.find(
                conn, project_id=ctx.project_id or "")]
            public = await repos.flavors.find(conn, order_by=("id",), is_public=True)
            private = await repos.flavors.find(conn, order_by=("id",), id=shared) if shared else []
            return sorted([*public, *private], key=lambda flavor: flavor.id)

    async def visible_flavor(self, ctx: RequestContext, flavor_id: str) -> Flavor:
        """GET /flavors/{id}, and the flavor a create asks for: a private flavor is for admins and the projects
        it is shared with, hidden from others as nova hides it."""
        async with self.store.begin() as conn:
            flavor = await self._get_flavor(conn, flavor_id)
            if not (flavor.is_public or ctx.is_admin or await repos.flavor_projects.first(
                    conn, flavor_id=flavor.id, project_id=ctx.project_id or "")):
                raise ce.FlavorNotFound(flavor_id=flavor_id)
        return flavor

    async def delete_flavor(self, ctx: RequestContext, flavor_id: str) -> None:
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-flavor-manage:delete")
        async with self.store.begin() as conn:
            await self._get_flavor(conn, flavor_id)
            await repos.flavor_projects.delete_where(conn, flavor_id=flavor_id)
            await repos.flavors.delete(conn, flavor_id)
