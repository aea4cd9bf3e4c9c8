"""Choosing where an instance runs: pure functions over capacity and usage."""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.compute import Flavor, Hypervisor


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
    hypervisors: list[Hypervisor], usage: dict[str, Usage], flavor: Flavor
) -> Hypervisor | None:
    """The hypervisor with the most free memory that fits the flavor (spread), or None."""
    candidates = [hv for hv in hypervisors if fits(hv, usage.get(hv.hostname, Usage()), flavor)]
    if not candidates:
        return None
    return max(
        candidates,
        key=lambda hv: (hv.memory_mb - usage.get(hv.hostname, Usage()).memory_mb, hv.hostname),
    )
