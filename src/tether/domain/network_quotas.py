"""Neutron's quotas: the resources it counts per project, their defaults, and the check of a create."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.errors import network as ne

UNLIMITED = -1

# neutron's [quotas] defaults, for the resources Tether has
DEFAULTS: dict[str, int] = {
    "network": 100,
    "subnet": 100,
    "port": 500,
    "router": 10,
    "floatingip": 50,
    "security_group": 10,
    "security_group_rule": 100,
}


@dataclass
class NetworkQuota:
    project_id: str
    resource: str
    hard_limit: int


def limits(overrides: list[NetworkQuota]) -> dict[str, int]:
    found = dict(DEFAULTS)
    found.update({quota.resource: quota.hard_limit for quota in overrides if quota.resource in DEFAULTS})
    return found


def check(limit: int, used: int, wanted: int, resource: str) -> None:
    """OverQuota, in neutron's words, when ``wanted`` more would take ``used`` past ``limit``."""
    if limit != UNLIMITED and used + wanted > limit:
        raise ne.OverQuota(overs=[resource])
