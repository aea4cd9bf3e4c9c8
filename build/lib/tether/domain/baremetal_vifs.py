"""Which NIC of a node a VIF goes on, chosen the way ironic chooses it (pure: no I/O).

After ironic's ``drivers/modules/network/common.py``: a NIC holding another
VIF is taken, a portgroup with one taken member is unusable as a whole (its
free members stay candidates on their own), empty portgroups are ignored, and
the candidates are ranked on (physical network matches, is a portgroup,
PXE enabled), first in the node's order winning a tie.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from tether.domain.baremetal import NodePort, Portgroup
from tether.domain.errors.baremetal import (
    NoFreePhysicalPorts,
    PortgroupPhysnetInconsistent,
    VifAlreadyAttached,
)

Nic = NodePort | Portgroup


def attached_vifs(ports: Sequence[NodePort], portgroups: Sequence[Portgroup]) -> list[str]:
    """The VIFs a node lists: what its NICs and portgroups record, the one source of truth."""
    vifs: list[str] = []
    for holder in (*ports, *portgroups):
        if holder.vif is not None and holder.vif not in vifs:
            vifs.append(holder.vif)
    return vifs


def holder_of(vif_id: str, ports: Sequence[NodePort], portgroups: Sequence[Portgroup]) -> Nic | None:
    """The portgroup or NIC that ``vif_id`` is attached to, if any (portgroups first, as ironic)."""
    for holder in (*portgroups, *ports):
        if holder.vif == vif_id:
            return holder
    return None


def portgroup_physnet(portgroup: Portgroup, ports: Sequence[NodePort]) -> str | None:
    """The one physical network of a portgroup's members; mixed members are an error."""
    physnets = {port.physical_network for port in ports if port.portgroup_uuid == portgroup.uuid}
    if len(physnets) > 1:
        raise PortgroupPhysnetInconsistent(
            portgroup=portgroup.uuid,
            physical_networks=", ".join(sorted(str(physnet) for physnet in physnets)),
        )
    return physnets.pop() if physnets else None


def _physnet_allowed(port: NodePort, physnets: frozenset[str]) -> bool:
    return not physnets or port.physical_network is None or port.physical_network in physnets


def _refuse_if_attached(holder: Nic, vif_id: str) -> bool:
    """Whether another VIF holds ``holder``; this very VIF on it is an error."""
    if holder.vif == vif_id:
        kind = "Portgroup" if isinstance(holder, Portgroup) else "Port"
        raise VifAlreadyAttached(vif=vif_id, object_type=kind, object_uuid=holder.uuid)
    return holder.vif is not None


def free_candidates(
    vif_id: str,
    ports: Sequence[NodePort],
    portgroups: Sequence[Portgroup],
    physnets: frozenset[str],
) -> list[Nic]:
    candidates: list[Nic] = []
    free_members: dict[str, list[NodePort]] = defaultdict(list)
    unusable_portgroups: set[str | None] = set()
    for port in ports:
        if _refuse_if_attached(port, vif_id):
            unusable_portgroups.add(port.portgroup_uuid)
            continue
        if not _physnet_allowed(port, physnets):
            continue
        if port.portgroup_uuid is None:
            candidates.append(port)
        else:
            free_members[port.portgroup_uuid].append(port)
    for portgroup in portgroups:
        if _refuse_if_attached(portgroup, vif_id):
            continue
        if portgroup.uuid in unusable_portgroups:
            candidates.extend(free_members[portgroup.uuid])
        elif free_members[portgroup.uuid]:
            candidates.append(portgroup)
    return candidates


def choose_nic(
    vif_id: str,
    ports: Sequence[NodePort],
    portgroups: Sequence[Portgroup],
    physnets: frozenset[str] | set[str],
    *,
    port_uuid: str | None = None,
    portgroup_uuid: str | None = None,
) -> Nic:
    """The NIC or portgroup ``vif_id`` should be attached to.

    ``physnets`` are the physical networks of the VIF's network (empty: any);
    ``port_uuid`` or ``portgroup_uuid`` pin the choice to one of them.
    Raises VifAlreadyAttached, NoFreePhysicalPorts, PortgroupPhysnetInconsistent.
    """
    allowed = frozenset(physnets)
    candidates = free_candidates(vif_id, ports, portgroups, allowed)
    if port_uuid is not None:
        candidates = [c for c in candidates if isinstance(c, NodePort) and c.uuid == port_uuid]
    if portgroup_uuid is not None:
        candidates = [c for c in candidates if isinstance(c, Portgroup) and c.uuid == portgroup_uuid]
    if not candidates:
        raise NoFreePhysicalPorts(vif=vif_id)

    def rank(candidate: Nic) -> tuple[bool, bool, bool]:
        if isinstance(candidate, Portgroup):
            return (portgroup_physnet(candidate, ports) in allowed, True, True)
        return (candidate.physical_network in allowed, False, candidate.pxe_enabled)

    return max(candidates, key=rank)


def local_link_information(nic: Nic, ports: Sequence[NodePort]) -> list[dict]:
    """What the switch needs to know to wire ``nic``: every member's link for a portgroup."""
    if isinstance(nic, Portgroup):
        return [dict(port.local_link_connection) for port in ports if port.portgroup_uuid == nic.uuid]
    return [dict(nic.local_link_connection)]
