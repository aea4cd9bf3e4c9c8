"""Server groups: a policy over where their members run, and the pure choice of hosts that honours it."""

from __future__ import annotations

from collections.abc import Sequence
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


def host_allowed(group: ServerGroup, member_hosts: Sequence[str], host: str) -> bool:
    """nova's ServerGroupAffinityFilter and ServerGroupAntiAffinityFilter: may a new member land on ``host``?

    ``member_hosts``: the host of each other member already placed (one entry per member)."""
    if group.policy == AFFINITY:
        return not member_hosts or host in member_hosts
    if group.policy == ANTI_AFFINITY:
        return member_hosts.count(host) < int(group.rules.get("max_server_per_host", 1))
    return True


def host_weight(group: ServerGroup, member_hosts: Sequence[str], host: str) -> int:
    """nova's soft (anti-)affinity weighers: the higher, the better the host for a new member."""
    if group.policy == SOFT_AFFINITY:
        return member_hosts.count(host)
    if group.policy == SOFT_ANTI_AFFINITY:
        return -member_hosts.count(host)
    return 0
