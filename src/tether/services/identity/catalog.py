"""The service catalog: regions, services and endpoints in the store, and the catalog a token carries.

The tables are the one source of truth: a token's catalog is built from them, and an endpoint an
operator adds, changes or disables shows there at once. Tether's own services are registered (or
moved to the current base URL) each time the cloud is served; their ids are derived from the
service type and interface alone, so they stay the same across restarts and base URLs.
"""

from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass
from typing import Any

from tether.domain.errors import identity as errors
from tether.domain.identity import ENDPOINT_INTERFACES, CatalogService, Endpoint, Region, new_keystone_id
from tether.store import repos
from tether.store.database import Store

REGION = "RegionOne"
INTERFACES = ENDPOINT_INTERFACES

_ID_NAMESPACE = uuid.UUID("5f0c9a8e-3b1d-4c55-9a63-7d1e2f4b6a10")

# (type, name, path under the base URL); keystone fills $(project_id)s per token.
SERVICES: tuple[tuple[str, str, str], ...] = (
    ("identity", "keystone", "/identity"),
    ("compute", "nova", "/compute/v2.1"),
    ("network", "neutron", "/network"),
    ("image", "glance", "/image"),
    ("baremetal", "ironic", "/baremetal"),
    ("orchestration", "heat", "/orchestration/v1/$(project_id)s"),
)

# keystone's URL substitutions: $(name)s and %(name)s
_SUBSTITUTION = re.compile(r"[$%]\((\w+)\)s")


def stable_id(*parts: str) -> str:
    return uuid.uuid5(_ID_NAMESPACE, ":".join(parts)).hex


def own_services() -> list[CatalogService]:
    return [CatalogService(id=stable_id(kind), type=kind, name=name) for kind, name, _ in SERVICES]


def own_endpoints(base_url: str) -> list[Endpoint]:
    base = base_url.rstrip("/")
    return [Endpoint(id=stable_id(kind, interface), service_id=stable_id(kind), interface=interface,
                     url=base + path, region_id=REGION)
            for kind, _, path in SERVICES for interface in INTERFACES]


def filled_url(url: str, values: dict[str, str | None]) -> str | None:
    """``url`` with its substitutions filled, or None when one cannot be (keystone leaves the endpoint out)."""
    missing = False

    def fill(match: re.Match[str]) -> str:
        nonlocal missing
        value = values.get(match.group(1))
        if value is None:
            missing = True
            return ""
        return value

    filled = _SUBSTITUTION.sub(fill, url)
    return None if missing else filled


def build_catalog(services: list[CatalogService], endpoints: list[Endpoint],
                  project_id: str | None) -> list[dict[str, Any]]:
    """Keystone v3 catalog entries: each enabled service with its enabled endpoints.

    Each endpoint carries both ``region`` (Tempest reads it) and ``region_id``
    (keystoneauth prefers it). An endpoint whose URL needs a project is left out
    of a token without one, as keystone leaves out endpoints it cannot fill.
    """
    values = {"project_id": project_id, "tenant_id": project_id}
    entries = []
    for service in services:
        if not service.enabled:
            continue
        listed = []
        for endpoint in endpoints:
            if endpoint.service_id != service.id or not endpoint.enabled:
                continue
            url = filled_url(endpoint.url, values)
            if url is None:
                continue
            listed.append({"id": endpoint.id, "interface": endpoint.interface, "region": endpoint.region_id,
                           "region_id": endpoint.region_id, "url": url})
        if listed:
            entries.append({"id": service.id, "type": service.type, "name": service.name, "endpoints": listed})
    return entries


@dataclass(eq=False)
class Catalog:
    store: Store
    rng: random.Random

    async def register_own(self, base_url: str) -> None:
        """Tether's region, services and endpoints, at ``base_url``: what is missing is made, and an own
        endpoint left at an older base URL is moved; what an operator added is kept as it is."""
        async with self.store.begin() as conn:
            if await repos.regions.get(conn, REGION) is None:
                await repos.regions.add(conn, Region(id=REGION))
            for service in own_services():
                if await repos.catalog_services.get(conn, service.id) is None:
                    await repos.catalog_services.add(conn, service)
            for endpoint in own_endpoints(base_url):
                stored = await repos.endpoints.get(conn, endpoint.id)
                if stored is None:
                    await repos.endpoints.add(conn, endpoint)
                elif stored.url != endpoint.url:
                    await repos.endpoints.update(conn, endpoint.id, url=endpoint.url)

    async def catalog(self, project_id: str | None) -> list[dict[str, Any]]:
        async with self.store.begin() as conn:
            services = await repos.catalog_services.find(conn, order_by=("type", "id"))
            endpoints = await repos.endpoints.find(conn, order_by=("service_id", "interface", "id"))
        return build_catalog(services, endpoints, project_id)

    # -- regions --------------------------------------------------------------

    async def create_region(self, *, id: str | None = None, description: str = "",
                            parent_region_id: str | None = None) -> Region:
        region = Region(id=id or new_keystone_id(self.rng), description=description,
                        parent_region_id=parent_region_id)
        async with self.store.begin() as conn:
            if await repos.regions.get(conn, region.id) is not None:
                raise errors.Conflict(type="region", details=f"Duplicate ID, {region.id}.")
            if parent_region_id is not None and await repos.regions.get(conn, parent_region_id) is None:
                raise errors.ValidationError(
                    reason=f"The request you have made requires a parent region that exists: {parent_region_id}.")
            await repos.regions.add(conn, region)
        return region

    async def get_region(self, region_id: str) -> Region:
        async with self.store.begin() as conn:
            region = await repos.regions.get(conn, region_id)
        if region is None:
            raise errors.RegionNotFound(region_id=region_id)
        return region

    async def list_regions(self, *, parent_region_id: str | None = None) -> list[Region]:
        filters = {} if parent_region_id is None else {"parent_region_id": parent_region_id}
        async with self.store.begin() as conn:
            return await repos.regions.find(conn, order_by=("id",), **filters)

    async def update_region(self, region_id: str, **changes: Any) -> Region:
        async with self.store.begin() as conn:
            if await repos.regions.get(conn, region_id) is None:
                raise errors.RegionNotFound(region_id=region_id)
            parent = changes.get("parent_region_id")
            if parent is not None and await repos.regions.get(conn, parent) is None:
                raise errors.RegionNotFound(region_id=parent)
            if changes:
                await repos.regions.update(conn, region_id, **changes)
        return await self.get_region(region_id)

    async def delete_region(self, region_id: str) -> None:
        async with self.store.begin() as conn:
            if await repos.regions.get(conn, region_id) is None:
                raise errors.RegionNotFound(region_id=region_id)
            if await repos.regions.count(conn, parent_region_id=region_id) or \
                    await repos.endpoints.count(conn, region_id=region_id):
                raise errors.ForbiddenNotSecurity(
                    reason=f"Unable to delete region {region_id} because it or its child regions have associated "
                           f"endpoints.")
            await repos.regions.delete(conn, region_id)

    # -- services -------------------------------------------------------------

    async def create_service(self, *, type: str, name: str = "", description: str = "",
                             enabled: bool = True) -> CatalogService:
        service = CatalogService(id=new_keystone_id(self.rng), type=type, name=name, description=description,
                                 enabled=enabled)
        async with self.store.begin() as conn:
            await repos.catalog_services.add(conn, service)
        return service

    async def get_service(self, service_id: str) -> CatalogService:
        async with self.store.begin() as conn:
            service = await repos.catalog_services.get(conn, service_id)
        if service is None:
            raise errors.ServiceNotFound(service_id=service_id)
        return service

    async def list_services(self, *, type: str | None = None, name: str | None = None) -> list[CatalogService]:
        filters = {key: value for key, value in (("type", type), ("name", name)) if value is not None}
        async with self.store.begin() as conn:
            return await repos.catalog_services.find(conn, order_by=("type", "id"), **filters)

    async def update_service(self, service_id: str, **changes: Any) -> CatalogService:
        async with self.store.begin() as conn:
            if await repos.catalog_services.get(conn, service_id) is None:
                raise errors.ServiceNotFound(service_id=service_id)
            if changes:
                await repos.catalog_services.update(conn, service_id, **changes)
        return await self.get_service(service_id)

    async def delete_service(self, service_id: str) -> None:
        """Delete a service and its endpoints, as keystone does."""
        async with self.store.begin() as conn:
            if await repos.catalog_services.get(conn, service_id) is None:
                raise errors.ServiceNotFound(service_id=service_id)
            await repos.endpoints.delete_where(conn, service_id=service_id)
            await repos.catalog_services.delete(conn, service_id)

    # -- endpoints ------------------------------------------------------------

    async def create_endpoint(self, *, service_id: str, interface: str, url: str, region_id: str | None = None,
                              enabled: bool = True) -> Endpoint:
        endpoint = Endpoint(id=new_keystone_id(self.rng), service_id=service_id, interface=interface, url=url,
                            region_id=region_id, enabled=enabled)
        async with self.store.begin() as conn:
            await self._check_endpoint(conn, endpoint)
            if region_id is not None and await repos.regions.get(conn, region_id) is None:
                # keystone makes a region it has not heard of
                await repos.regions.add(conn, Region(id=region_id))
            await repos.endpoints.add(conn, endpoint)
        return endpoint

    async def get_endpoint(self, endpoint_id: str) -> Endpoint:
        async with self.store.begin() as conn:
            endpoint = await repos.endpoints.get(conn, endpoint_id)
        if endpoint is None:
            raise errors.EndpointNotFound(endpoint_id=endpoint_id)
        return endpoint

    async def list_endpoints(self, *, service_id: str | None = None, interface: str | None = None,
                             region_id: str | None = None) -> list[Endpoint]:
        filters = {key: value for key, value in
                   (("service_id", service_id), ("interface", interface), ("region_id", region_id))
                   if value is not None}
        async with self.store.begin() as conn:
            return await repos.endpoints.find(conn, order_by=("service_id", "interface", "id"), **filters)

    async def update_endpoint(self, endpoint_id: str, **changes: Any) -> Endpoint:
        async with self.store.begin() as conn:
            stored = await repos.endpoints.get(conn, endpoint_id)
            if stored is None:
                raise errors.EndpointNotFound(endpoint_id=endpoint_id)
            await self._check_endpoint(conn, Endpoint(**{**stored.__dict__, **changes}))
            region_id = changes.get("region_id")
            if region_id is not None and await repos.regions.get(conn, region_id) is None:
                await repos.regions.add(conn, Region(id=region_id))
            if changes:
                await repos.endpoints.update(conn, endpoint_id, **changes)
        return await self.get_endpoint(endpoint_id)

    async def delete_endpoint(self, endpoint_id: str) -> None:
        async with self.store.begin() as conn:
            if not await repos.endpoints.delete(conn, endpoint_id):
                raise errors.EndpointNotFound(endpoint_id=endpoint_id)

    @staticmethod
    async def _check_endpoint(conn: Any, endpoint: Endpoint) -> None:
        if endpoint.interface not in INTERFACES:
            raise errors.ValidationError(
                reason=f"Invalid input for field 'interface': '{endpoint.interface}' does not match "
                       f"'^(?:admin|internal|public)$'")
        if await repos.catalog_services.get(conn, endpoint.service_id) is None:
            raise errors.ServiceNotFound(service_id=endpoint.service_id)
