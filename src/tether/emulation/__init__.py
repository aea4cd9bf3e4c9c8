"""Upstream OpenStack's behaviour, one module per emulated bug.

Each module supplies upstream's version of the steps its bug changes and
names the invariants whose reconcilers would hide the symptom (they stand
down, as upstream has none). ``emulate`` chooses the steps once, when a cloud
is built; product code never asks whether a bug is on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import ModuleType

from tether.emulation import (
    mac_kept_on_unbind,
    orphan_internal_ports,
    stale_vif_on_terminate,
    stuck_build_on_node_teardown,
    zombie_interface_on_attach_race,
)
from tether.runtime.bugs import Bug
from tether.services.baremetal import BaremetalSteps
from tether.services.compute import ComputeSteps
from tether.services.orchestration import OrchestrationSteps

# Applied in this order: where two bugs replace one step, the later one's version stands
# (the port-deleted event of Pike's nova, seed 000, drops the cache entry first).
MODULES: dict[Bug, ModuleType] = {
    Bug.ZOMBIE_INTERFACE_ON_ATTACH_RACE: zombie_interface_on_attach_race,
    Bug.STALE_VIF_ON_TERMINATE: stale_vif_on_terminate,
    Bug.MAC_KEPT_ON_UNBIND: mac_kept_on_unbind,
    Bug.STUCK_BUILD_ON_NODE_TEARDOWN: stuck_build_on_node_teardown,
    Bug.ORPHAN_INTERNAL_PORTS: orphan_internal_ports,
}


@dataclass(frozen=True)
class Emulation:
    compute: ComputeSteps = field(default_factory=ComputeSteps)
    baremetal: BaremetalSteps = field(default_factory=BaremetalSteps)
    orchestration: OrchestrationSteps = field(default_factory=OrchestrationSteps)
    # invariants whose reconcilers stand down
    silenced: frozenset[str] = frozenset()


def emulate(bugs: frozenset[Bug] | set[Bug] | tuple[Bug, ...] = ()) -> Emulation:
    """Tether's own steps, with upstream's in place of those that ``bugs`` change."""
    emulation = Emulation()
    for bug, module in MODULES.items():
        if bug in bugs:
            emulation = replace(
                emulation,
                compute=replace(emulation.compute, **module.COMPUTE),
                baremetal=replace(emulation.baremetal, **module.BAREMETAL),
                orchestration=replace(emulation.orchestration, **module.ORCHESTRATION),
                silenced=emulation.silenced | module.SILENCED,
            )
    return emulation
