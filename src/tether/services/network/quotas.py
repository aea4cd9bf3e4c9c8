"""Neutron's quota API: each project's limits (defaults unless set), their usage, and admin changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.domain import network_quotas
from tether.domain.errors.network import InvalidAttribute, NotAuthorized, UnrecognizedAttribute
from tether.domain.network_quotas import NetworkQuota
from tether.services.context import RequestContext
from tether.services.network import policy, quota_usage
from tether.store import repos
from tether.store.database import Store

MAX_LIMIT = 2**31 - 1


def check_limits(values: Any) -> dict[str, int]:
    """neutron's quota attribute map: known resources, each an integer from -1 (unlimited)."""
    if not isinstance(values, dict):
        raise InvalidAttribute(attr="quota", reason=f"'{values}' is not a dictionary")
    unknown = [name for name in values if name not in network_quotas.DEFAULTS]
    if unknown:
        raise UnrecognizedAttribute(attrs=", ".join(unknown))
    limits: dict[str, int] = {}
    for name, value in values.items():
        try:
            number = int(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or (isinstance(value, float) and value != number):
            raise InvalidAttribute(attr=name, reason=f"'{value}' is not an integer")
        if not -1 <= number <= MAX_LIMIT:
            raise InvalidAttribute(attr=name, reason=f"'{number}' is not in range -1 through {MAX_LIMIT}")
        limits[name] = number
    return limits


@dataclass(eq=False)
class Quotas:
    store: Store

    def _may_read(self, ctx: RequestContext, project_id: str) -> None:
        if not ctx.is_admin and ctx.project_id != project_id:
            raise NotAuthorized()

    async def project_limits(self, ctx: RequestContext, project_id: str) -> dict[str, int]:
        self._may_read(ctx, project_id)
        async with self.store.begin() as conn:
            return await quota_usage.limits_of(conn, project_id)

    async def project_usage(self, ctx: RequestContext, project_id: str) -> dict[str, dict[str, int]]:
        self._may_read(ctx, project_id)
        async with self.store.begin() as conn:
            limits = await quota_usage.limits_of(conn, project_id)
            return {name: {"limit": limit, "used": await quota_usage.used(conn, project_id, name), "reserved": 0}
                    for name, limit in limits.items()}

    async def projects_with_limits(self, ctx: RequestContext) -> dict[str, dict[str, int]]:
        """neutron's GET /quotas: every project with a limit of its own (only yours unless admin)."""
        async with self.store.begin() as conn:
            rows = await repos.network_quota_limits.find(conn, order_by=("project_id", "resource"))
            projects = sorted({row.project_id for row in rows if ctx.owns(row.project_id)})
            return {project: await quota_usage.limits_of(conn, project) for project in projects}

    async def set_limits(self, ctx: RequestContext, project_id: str, limits: dict[str, int]) -> dict[str, int]:
        policy.require_admin(ctx)
        async with self.store.begin() as conn:
            for name, limit in limits.items():
                await repos.network_quota_limits.delete_where(conn, project_id=project_id, resource=name)
                await repos.network_quota_limits.add(conn, NetworkQuota(project_id, name, limit))
            return await quota_usage.limits_of(conn, project_id)

    async def reset_limits(self, ctx: RequestContext, project_id: str) -> None:
        policy.require_admin(ctx)
        async with self.store.begin() as conn:
            await repos.network_quota_limits.delete_where(conn, project_id=project_id)
