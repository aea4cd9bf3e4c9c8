"""Quota sets and limits: what a project (or one user in it) may use, what it uses, and the boot check.

A boot is counted in the transaction that records it, under a row lock on
the project, so two boots racing for the last instance cannot both win
(SQLite has one writer; PostgreSQL serialises on the lock).
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain import quotas as q
from tether.domain.compute import Flavor
from tether.domain.errors import compute as ce
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection

# nova's quota limits are 32-bit database integers
MAX_LIMIT = 2**31 - 1


async def set_limits(conn: StoreConnection, project_id: str, user_id: str = "") -> dict[str, int]:
    """The limits an admin set for the project (``user_id`` "") or for one user in it."""
    return {limit.resource: limit.hard_limit
            for limit in await repos.quota_limits.find(conn, project_id=project_id, user_id=user_id)}


async def limits_of(conn: StoreConnection, project_id: str, user_id: str | None = None) -> dict[str, int]:
    project = await set_limits(conn, project_id)
    user = await set_limits(conn, project_id, user_id) if user_id else None
    return q.effective_limits(project, user)


async def _servers_usage(conn: StoreConnection, project_id: str, user_id: str | None) -> dict[str, int]:
    """The instances, cores and RAM the project's (or the user's) servers use; nova counts ERROR servers too."""
    owner = {"user_id": user_id} if user_id else {}
    placed = await repos.instances.tally(conn, ("flavor_id",), project_id=project_id, deleted=False, **owner)
    flavor_ids = sorted({flavor_id for flavor_id, _ in placed})
    flavors = {flavor.id: flavor for flavor in await repos.flavors.find(conn, id=flavor_ids)} if flavor_ids else {}
    used = dict.fromkeys(q.BOOT_RESOURCES, 0)
    for flavor_id, count in placed:
        used["instances"] += count
        flavor = flavors.get(flavor_id)
        if flavor is not None:
            used["cores"] += count * flavor.vcpus
            used["ram"] += count * flavor.ram
    return used


async def usage_of(conn: StoreConnection, project_id: str, user_id: str | None = None) -> dict[str, int]:
    """What the project (or the user in it) uses of each counted resource."""
    owner = {"user_id": user_id} if user_id else {}
    used = {**dict.fromkeys(q.DEFAULTS, 0), **await _servers_usage(conn, project_id, user_id)}
    used["server_groups"] = await repos.server_groups.count(conn, project_id=project_id, **owner)
    if user_id:
        used["key_pairs"] = await repos.keypairs.count(conn, user_id=user_id)
    return used


async def check_boot(conn: StoreConnection, project_id: str, user_id: str, flavor: Flavor, min_count: int,
                     max_count: int) -> int:
    """How many servers of ``flavor`` may boot now, or nova's TooManyInstances. Call it in the transaction
    that adds the instances: it locks the project row, so the count stays true until they are added."""
    # the project's limits and its users' in one read: a boot is the hot path
    rows = await repos.quota_limits.find(conn, project_id=project_id)
    project_limits = {row.resource: row.hard_limit for row in rows if row.user_id == ""}
    user_limits = {row.resource: row.hard_limit for row in rows if user_id and row.user_id == user_id}
    # nova checks the user's limits only when the user has some on instances, cores or ram
    by_user = user_id if any(name in user_limits for name in q.BOOT_RESOURCES) else None
    limits = q.effective_limits(project_limits, user_limits if by_user else None)
    if all(limits[name] == q.UNLIMITED for name in q.BOOT_RESOURCES):
        return max_count  # nothing to count against, so nothing to hold still
    await repos.projects.get(conn, project_id, lock="update")
    used = await _servers_usage(conn, project_id, by_user)
    return q.instances_allowed(limits, used, flavor.vcpus, flavor.ram, min_count, max_count)


async def check_upsize(conn: StoreConnection, project_id: str, user_id: str, old: Flavor, new: Flavor) -> None:
    """nova's _check_quota_for_upsize: what a resize adds to the cores and RAM in use must fit the quota."""
    deltas = {name: max(0, delta) for name, delta in (("cores", new.vcpus - old.vcpus), ("ram", new.ram - old.ram))}
    if not any(deltas.values()):
        return
    limits = await limits_of(conn, project_id, user_id)
    used = await usage_of(conn, project_id)
    overs = [name for name in ("cores", "ram") if deltas[name] and q.over(limits[name], used[name], deltas[name])]
    if overs:
        raise ce.TooManyInstances(overs=", ".join(overs), req=", ".join(str(deltas[name]) for name in overs),
                                  used=", ".join(str(used[name]) for name in overs),
                                  allowed=", ".join(str(limits[name]) for name in overs))


async def check_metadata(conn: StoreConnection, project_id: str, user_id: str, items: int) -> None:
    """nova's metadata_items limit on a server's metadata (a 403, as every over-quota answer)."""
    if not items:
        return  # no limit is below zero
    limit = (await limits_of(conn, project_id, user_id))["metadata_items"]
    if q.over(limit, 0, items):
        raise ce.OverQuota(f"Maximum number of metadata items exceeds {limit}")


async def check_injected_files(conn: StoreConnection, project_id: str, user_id: str,
                               files: list[dict[str, str]]) -> None:
    """nova's injected_files limits on a boot's or a rebuild's personality: how many files, then the
    longest path and the longest (base64) contents; the path is reported first."""
    if not files:
        return
    limits = await limits_of(conn, project_id, user_id)
    if q.over(limits["injected_files"], 0, len(files)):
        raise ce.OverQuota("Personality file limit exceeded")
    longest_path = max(len(item["path"]) for item in files)
    longest_contents = max(len(item["contents"]) for item in files)
    if q.over(limits["injected_file_path_bytes"], 0, longest_path):
        raise ce.OverQuota(f"Personality file path exceeds maximum {limits['injected_file_path_bytes']}")
    if q.over(limits["injected_file_content_bytes"], 0, longest_contents):
        raise ce.OverQuota(f"Personality file content exceeds maximum {limits['injected_file_content_bytes']}")


async def check_one_more(conn: StoreConnection, resource: str, project_id: str, user_id: str,
                         error: type[ce.OverQuota]) -> None:
    """A keypair or server group about to be added, checked in the transaction that adds it."""
    await repos.projects.get(conn, project_id, lock="update")
    limit = (await limits_of(conn, project_id, user_id))[resource]
    used = (await usage_of(conn, project_id, user_id))[resource]
    if q.over(limit, used, 1):
        raise error()


@dataclass(eq=False)
class Quotas:
    store: Store

    def _may_read(self, ctx: RequestContext, project_id: str, action: str) -> None:
        if not (ctx.is_admin or ctx.project_id == project_id):
            raise ce.ComputeForbidden(action=f"os_compute_api:os-quota-sets:{action}")

    async def _known_project(self, conn: StoreConnection, project_id: str) -> None:
        # nova asks keystone, and answers a project it does not know with a 400
        if await repos.projects.get(conn, project_id) is None:
            raise ce.ComputeBadRequest(reason=f"Project ID {project_id} is not a valid project.")

    async def quota_set(self, ctx: RequestContext, project_id: str, user_id: str | None = None) -> dict[str, int]:
        self._may_read(ctx, project_id, "show")
        async with self.store.begin() as conn:
            await self._known_project(conn, project_id)
            return await limits_of(conn, project_id, user_id)

    async def quota_detail(self, ctx: RequestContext, project_id: str,
                           user_id: str | None = None) -> dict[str, dict[str, int]]:
        self._may_read(ctx, project_id, "detail")
        async with self.store.begin() as conn:
            await self._known_project(conn, project_id)
            limits = await limits_of(conn, project_id, user_id)
            used = await usage_of(conn, project_id, user_id)
        return {name: {"limit": limit, "in_use": used.get(name, 0), "reserved": 0} for name, limit in limits.items()}

    async def default_quota_set(self, ctx: RequestContext, project_id: str) -> dict[str, int]:
        async with self.store.begin() as conn:
            await self._known_project(conn, project_id)
        return dict(q.DEFAULTS)

    async def update_quota_set(self, ctx: RequestContext, project_id: str, values: dict[str, int], *,
                               user_id: str | None = None, force: bool = False) -> dict[str, int]:
        """Set limits; unless forced, each between what is used and (for a user) the project's limit."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-quota-sets:update")
        async with self.store.begin() as conn:
            await self._known_project(conn, project_id)
            await repos.projects.get(conn, project_id, lock="update")
            if not force:
                used = await usage_of(conn, project_id, user_id)
                ceiling = await limits_of(conn, project_id) if user_id else {}
                for name, value in values.items():
                    _check_limit(name, value, used.get(name, 0), ceiling.get(name, q.UNLIMITED))
            for name, value in values.items():
                filters = {"project_id": project_id, "user_id": user_id or "", "resource": name}
                if not await repos.quota_limits.update_where(conn, filters, hard_limit=value):
                    await repos.quota_limits.add(conn, q.QuotaLimit(hard_limit=value, **filters))
            return await limits_of(conn, project_id, user_id)

    async def delete_quota_set(self, ctx: RequestContext, project_id: str, user_id: str | None = None) -> None:
        """Back to the defaults: the user's limits only, or the project's and all its users'."""
        if not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:os-quota-sets:delete")
        async with self.store.begin() as conn:
            if user_id:
                await repos.quota_limits.delete_where(conn, project_id=project_id, user_id=user_id)
            else:
                await repos.quota_limits.delete_where(conn, project_id=project_id)

    async def absolute_limits(self, ctx: RequestContext,
                              project_id: str | None = None) -> tuple[dict[str, int], dict[str, int]]:
        """GET /limits: the project's limits and use (another project's for admins only)."""
        target = project_id or ctx.project_id or ""
        if target != ctx.project_id and not ctx.is_admin:
            raise ce.ComputeForbidden(action="os_compute_api:limits:other_project")
        async with self.store.begin() as conn:
            return await limits_of(conn, target), await usage_of(conn, target)


def _check_limit(name: str, value: int, used: int, maximum: int) -> None:
    def infinite(number: int) -> float:
        return float("inf") if number == q.UNLIMITED else number

    if infinite(value) < used:
        raise ce.ComputeBadRequest(reason=f"Quota limit {value} for {name} must be greater than or equal to "
                                          f"already used and reserved {used}.")
    if infinite(value) > infinite(maximum):
        raise ce.ComputeBadRequest(reason=f"Quota limit {value} for {name} must be less than or equal to "
                                          f"{maximum}.")
