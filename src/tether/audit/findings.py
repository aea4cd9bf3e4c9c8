"""A finding: an invariant's violation with its age and the repair that would mend it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.invariants import Snapshot, Violation
from tether.domain.network import CREATED_BY_COMPUTE, CREATED_BY_ORCHESTRATION


@dataclass(frozen=True)
class Repair:
    """One action through the public API, as a person would take it."""

    action: str  # one of ACTIONS, or "manual"
    target: dict[str, str] = field(default_factory=dict)
    command: str = ""  # what a person would type for the same action

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "target": dict(self.target), "command": self.command}


ACTIONS = ("detach-vif", "delete-port", "release-port", "reset-mac", "reset-state-error", "hard-reboot")
MANUAL = "manual"


@dataclass(frozen=True)
class Finding:
    invariant: str
    resources: dict[str, str]
    evidence: str
    # Seconds since any resource involved last changed (None: none of them says when).
    age: float | None
    repair: Repair

    @property
    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What makes two readings the same finding: the invariant and the resources."""
        return self.invariant, tuple(sorted(self.resources.items()))

    def as_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "resources": dict(self.resources), "evidence": self.evidence,
                "age_seconds": None if self.age is None else round(self.age, 1), "repair": self.repair.as_dict()}


def finding_of(violation: Violation, snap: Snapshot) -> Finding:
    return Finding(violation.invariant, dict(violation.resources), violation.evidence,
                   age_of(violation, snap), repair_of(violation, snap))


def age_of(violation: Violation, snap: Snapshot) -> float | None:
    """How long nothing involved has changed: a finding cannot be older, and one younger may be an
    operation still under way."""
    r = violation.resources
    moments: list[float] = []
    moments += [i.updated_at for i in snap.instances if i.uuid == r.get("instance")]
    moments += [p.updated_at for p in snap.ports if p.id in (r.get("port"), r.get("vif"))]
    moments += [max(n.updated_at, n.provision_updated_at) for n in snap.nodes if n.uuid == r.get("node")]
    moments += [n.updated_at for n in snap.node_ports if n.uuid == r.get("nic")]
    moments += [g.updated_at for g in snap.portgroups if g.uuid == r.get("nic")]
    moments = [moment for moment in moments if moment]
    return max(0.0, snap.now - max(moments)) if moments else None


def age_text(age: float | None) -> str:
    if age is None:
        return "?"
    seconds = int(age)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def repair_of(violation: Violation, snap: Snapshot) -> Repair:
    r, kind = violation.resources, violation.invariant
    if kind == "stale-vif":
        return Repair("detach-vif", {"node": r["node"], "vif": r["vif"]},
                      f"openstack baremetal node vif detach {r['node']} {r['vif']}")
    if kind == "orphan-port":
        port = next((p for p in snap.ports if p.id == r["port"]), None)
        # rule 2 (seed 001): what compute or a stack made is deleted; what the user brought is released.
        if port is not None and port.created_by in (CREATED_BY_COMPUTE, CREATED_BY_ORCHESTRATION):
            return Repair("delete-port", {"port": r["port"]}, f"openstack port delete {r['port']}")
        return Repair("release-port", {"port": r["port"]},
                      f"openstack port set --device '' --device-owner '' --host '' {r['port']}")
    if kind == "mac-conflict" and "port" in r:
        return Repair("reset-mac", {"port": r["port"]}, f"openstack port set --mac-address FRESH_MAC {r['port']}")
    if kind == "stuck-transient" and set(r) >= {"instance"} and "stack" not in r:
        instance = next((i for i in snap.instances if i.uuid == r["instance"]), None)
        if instance is not None and instance.vm_state == "building":
            return Repair("reset-state-error", {"instance": r["instance"]},
                          f"openstack server set --state error {r['instance']}")
    if kind == "zombie-interface" and "device" in r:
        # nova's libvirt driver rebuilds the guest from the info cache on a hard reboot.
        return Repair("hard-reboot", {"instance": r["instance"]}, f"openstack server reboot --hard {r['instance']}")
    return Repair(MANUAL)
