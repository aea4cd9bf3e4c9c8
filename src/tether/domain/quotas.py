"""Quotas: nova's resources, their defaults, and the pure check of a boot against them.

Nova's ``TooManyInstances`` message is what operators search for, so the
arithmetic that fills it (headroom, "used", the resources over) follows
nova's ``check_num_instances_quota`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.errors import compute as ce

UNLIMITED = -1

# nova's QUOTAS.resources, in nova's order, with [quota] defaults.
DEFAULTS: dict[str, int] = {
    "instances": 10,
    "cores": 20,
    "ram": 51200,
    "floating_ips": 10,
    "fixed_ips": -1,
    "metadata_items": 128,
    "injected_files": 5,
    "injected_file_content_bytes": 10240,
    "injected_file_path_bytes": 255,
    "security_groups": 10,
    "security_group_rules": 20,
    "key_pairs": 100,
    "server_groups": 10,
    "server_group_members": 10,
}

# What nova stopped showing: network quotas from 2.36 (neutron owns them), file injection from 2.57.
HIDDEN_FROM_2_36 = ("fixed_ips", "floating_ips", "security_group_rules", "security_groups")
HIDDEN_FROM_2_57 = (*HIDDEN_FROM_2_36, "injected_files", "injected_file_content_bytes", "injected_file_path_bytes")

# The resources Tether counts; nova's other resources are always 0 in use.
COUNTED = ("instances", "cores", "ram", "key_pairs", "server_groups")
BOOT_RESOURCES = ("instances", "cores", "ram")


@dataclass
class QuotaLimit:
    """One limit an admin set: for a project (``user_id`` "") or for one user in it."""

    project_id: str
    user_id: str
    resource: str
    hard_limit: int


def effective_limits(project: dict[str, int], user: dict[str, int] | None = None) -> dict[str, int]:
    """Defaults, then the project's own limits, then the user's (a user limit narrows the project's)."""
    limits = {**DEFAULTS, **project}
    if user:
        limits.update(user)
    return limits


def over(limit: int, used: int, delta: int) -> bool:
    return limit != UNLIMITED and used + delta > limit


def _headroom(limits: dict[str, int], used: dict[str, int], deltas: dict[str, int]) -> dict[str, float]:
    headroom: dict[str, float] = {name: limits[name] - used.get(name, 0) for name in BOOT_RESOURCES}
    # nova's get_headroom: an unlimited resource is as roomy as the instances allow
    for name in ("cores", "ram"):
        if limits[name] == UNLIMITED:
            headroom[name] = headroom["instances"] * deltas[name] / deltas["instances"] if deltas[name] \
                else headroom["instances"]
    return headroom


def instances_allowed(limits: dict[str, int], used: dict[str, int], vcpus: int, ram: int,
                      min_count: int, max_count: int) -> int:
    """How many of ``max_count`` servers of this size may boot (never fewer than ``min_count``),
    or nova's TooManyInstances: the whole request first, then as many as fit, as nova checks it."""
    deltas = {"instances": max_count, "cores": max_count * vcpus, "ram": max_count * ram}
    overs = [name for name in BOOT_RESOURCES if over(limits[name], used.get(name, 0), deltas[name])]
    if not overs:
        return max_count
    headroom = _headroom(limits, used, deltas)
    allowed = float("inf") if limits["instances"] == UNLIMITED else headroom["instances"]
    if vcpus:
        allowed = min(allowed, headroom["cores"] // vcpus)
    if ram:
        allowed = min(allowed, headroom["ram"] // ram)
    if min_count <= allowed <= max_count:
        return instances_allowed(limits, used, vcpus, ram, min_count, int(allowed))
    requested = {"instances": str(min_count) if min_count == max_count else f"{min_count}-{max_count}",
                 "cores": str(deltas["cores"]), "ram": str(deltas["ram"])}
    raise ce.TooManyInstances(
        overs=", ".join(overs), req=", ".join(requested[name] for name in overs),
        used=", ".join(str(int(limits[name] - headroom[name])) for name in overs),
        allowed=", ".join(str(limits[name]) for name in overs))
