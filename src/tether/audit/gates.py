"""The safety gates a repair passes before it acts; each says why it holds a finding back."""

from __future__ import annotations

from dataclasses import dataclass

from tether.audit.findings import MANUAL, Finding
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.invariants import Snapshot


@dataclass(frozen=True)
class Gates:
    older_than: float = 600.0
    skip_in_flight: bool = True
    max_actions: int = 50
    force: bool = False


def held_back(finding: Finding, snap: Snapshot, gates: Gates) -> str | None:
    """Why this finding is not to be acted on now, or None."""
    if finding.repair.action == MANUAL:
        return "no automatic repair"
    if gates.older_than > 0 and (finding.age is None or finding.age < gates.older_than):
        age = "unknown" if finding.age is None else f"{finding.age:.0f} s"
        return f"younger than --older-than {gates.older_than:.0f} s (age {age})"
    if gates.skip_in_flight:
        return in_flight(finding, snap)
    return None


def in_flight(finding: Finding, snap: Snapshot) -> str | None:
    """A task under way on anything involved: the operation may yet settle it.

    A stuck transient is itself the finding: its instance's build is not counted as a task here.
    """
    r = finding.resources
    stuck = finding.invariant == "stuck-transient"
    for instance in snap.instances:
        if instance.uuid in r.values() and instance.task_state is not None and not stuck:
            return f"instance {instance.uuid} has task {instance.task_state} in flight"
        if instance.uuid in r.values() and instance.vm_state == vm.BUILDING and not stuck:
            return f"instance {instance.uuid} is building"
    for node in snap.nodes:
        if node.uuid not in r.values():
            continue
        if node.reservation:
            return f"node {node.uuid} is locked by {node.reservation}"
        if node.provision_state in bms.PROVISION_STATES.states and \
                bms.PROVISION_STATES.is_transient(node.provision_state) and not stuck:
            return f"node {node.uuid} is {node.provision_state}"
    return None
