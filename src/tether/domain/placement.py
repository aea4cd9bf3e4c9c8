"""Choosing where an instance runs: pure functions over capacity and usage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tether.domain.compute import Flavor, Hypervisor
from tether.domain.server_groups import ServerGroup, host_allowed, host_weight


@dataclass(frozen=True)
class Usage:
    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0

    def plus(self, flavor: Flavor, times: int = 1) -> Usage:
        return Usage(self.vcpus + times * flavor.vcpus, self.memory_mb + times * flavor.ram,
                     self.local_gb + times * (flavor.disk + flavor.ephemeral))


def fits(hypervisor: Hypervisor, used: Usage, flavor: Flavor) -> bool:
    after = used.plus(flavor)
    return (
        hypervisor.state == "up"
        and hypervisor.status == "enabled"
        and after.vcpus <= hypervisor.vcpus
        and after.memory_mb <= hypervisor.memory_mb
        and after.local_gb <= hypervisor.local_gb
    )


def choose_hypervisor(
    hypervisors: list[Hypervisor], usage: dict[str, Usage], flavor: Flavor,
    group: ServerGroup | None = None, member_hosts: Sequence[str] = (),
) -> Hypervisor | None:
    """The hypervisor that fits the flavor and the server group's policy, or None: the group's soft
    policy first, then the most free memory (spread)."""
    candidates = [hv for hv in hypervisors if fits(hv, usage.get(hv.hostname, Usage()), flavor)
                  and (group is None or host_allowed(group, member_hosts, hv.hostname))]
    if not candidates:
        return None
    return max(
        candidates,
        key=lambda hv: (host_weight(group, member_hosts, hv.hostname) if group else 0,
                        hv.memory_mb - usage.get(hv.hostname, Usage()).memory_mb, hv.hostname),
    )
