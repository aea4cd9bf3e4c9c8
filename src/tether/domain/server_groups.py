"""Server groups: a policy over where their members run, and the pure choice of hosts that honours it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

AFFINITY = "affinity"
ANTI_AFFINITY = "anti-affinity"
SOFT_AFFINITY = "soft-affinity"
SOFT_ANTI_AFFINITY = "soft-anti-affinity"
POLICIES = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)
# From 2.15 on; before that only the hard two exist.
SOFT_POLICIES_SINCE = "2.15"


@dataclass
class ServerGroup:
    id: str
    name: str
    project_id: str
    user_id: str
    policy: str
    # anti-affinity's {"max_server_per_host": N} (2.64)
    rules: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


@dataclass
class ServerGroupMember:
    group_id: str
    instance_uuid: str


def allowed_hosts(group: ServerGroup, member_hosts: list[str], candidates: list[str]) -> list[str]:
    """The candidate hosts a new member may land on, best first (nova's ServerGroup filters and weighers).

    ``member_hosts``: the host of each other member already placed (one entry per member)."""
    if group.policy == AFFINITY:
        return [host for host in candidates if host in member_hosts] if member_hosts else list(candidates)
    if group.policy == ANTI_AFFINITY:
        limit = int(group.rules.get("max_server_per_host", 1))
        return [host for host in candidates if member_hosts.count(host) < limit]
    if group.policy == SOFT_AFFINITY:
        return sorted(candidates, key=lambda host: -member_hosts.count(host))
    if group.policy == SOFT_ANTI_AFFINITY:
        return sorted(candidates, key=lambda host: member_hosts.count(host))
    return list(candidates)
