"""Neutron's quota check of a create, inside the creating transaction: what the project uses now, counted
from the tables themselves (one source of truth), against its limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.domain import network_quotas
from tether.store import repos

if TYPE_CHECKING:
    from tether.store.database import StoreConnection

_COUNTED: dict[str, Any] = {
    "network": repos.networks, "subnet": repos.subnets, "port": repos.ports, "router": repos.routers,
    "floatingip": repos.floating_ips, "security_group": repos.security_groups,
    "security_group_rule": repos.security_group_rules,
}


async def limits_of(conn: StoreConnection, project_id: str) -> dict[str, int]:
    return network_quotas.limits(await repos.network_quota_limits.find(conn, project_id=project_id))


async def used(conn: StoreConnection, project_id: str, resource: str) -> int:
    return await _COUNTED[resource].count(conn, project_id=project_id)  # type: ignore[no-any-return]


async def check(conn: StoreConnection, project_id: str, resource: str, wanted: int) -> None:
    """OverQuota (409) when ``wanted`` more of ``resource`` would take the project past its limit."""
    limit = (await limits_of(conn, project_id))[resource]
    if limit == network_quotas.UNLIMITED:
        return
    network_quotas.check(limit, await used(conn, project_id, resource), wanted, resource)
