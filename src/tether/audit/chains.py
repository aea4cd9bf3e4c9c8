"""A finding's ownership chain: who owns what, from the owner down, and which link is broken.

instance -> port -> VIF -> NIC for a bare-metal attachment, instance -> guest interface -> port
for a VM's, stack -> port for orchestration's, instance -> node for an association. Read from the
same snapshot the invariant judged, so the picture shows exactly what the finding says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.audit.findings import Finding
from tether.domain.baremetal import Node, NodePort, Portgroup
from tether.domain.compute import Instance
from tether.domain.invariants import Snapshot
from tether.domain.network import Port


@dataclass(frozen=True)
class Box:
    kind: str  # instance, port, vif, nic, node, stack, interface, ip, ...
    ident: str
    detail: str = ""
    missing: bool = False  # named, but gone (or never there)
    broken: bool = False  # the resource is itself what is wrong (a stuck state)


@dataclass(frozen=True)
class Link:
    label: str
    broken: bool = False


@dataclass
class Chain:
    """Boxes in a row, and one link between each box and the next."""

    boxes: list[Box] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)

    def then(self, link: Link, box: Box) -> Chain:
        self.links.append(link)
        self.boxes.append(box)
        return self

    @property
    def broken(self) -> bool:
        return any(link.broken for link in self.links) or any(box.broken or box.missing for box in self.boxes)


class _Look:
    def __init__(self, snap: Snapshot) -> None:
        self.instances = {i.uuid: i for i in snap.instances}
        self.ports = {p.id: p for p in snap.ports}
        self.nodes = {n.uuid: n for n in snap.nodes}
        self.nics: dict[str, NodePort | Portgroup] = {n.uuid: n for n in snap.node_ports}
        self.nics.update((g.uuid, g) for g in snap.portgroups)
        self.nic_of_vif = {nic.vif: nic for nic in self.nics.values() if nic.vif}
        self.stacks = {s.id: s for s in snap.stacks}

    def instance(self, uuid: str | None, *, why_missing: str = "gone") -> Box:
        found: Instance | None = self.instances.get(uuid or "")
        if found is None or found.deleted:
            return Box("instance", uuid or "(none)", why_missing if uuid else "no live instance", missing=True)
        return Box("instance", found.uuid, f"{found.status}" + (f"/{found.task_state}" if found.task_state else ""))

    def port(self, port_id: str | None) -> Box:
        found: Port | None = self.ports.get(port_id or "")
        if found is None:
            return Box("port", port_id or "(none)", "gone", missing=True)
        return Box("port", found.id, found.mac_address)

    def node(self, uuid: str | None) -> Box:
        found: Node | None = self.nodes.get(uuid or "")
        if found is None:
            return Box("node", uuid or "(none)", "gone", missing=True)
        return Box("node", found.uuid, (found.name + " " if found.name else "") + found.provision_state)

    def nic(self, uuid: str | None) -> Box:
        found = self.nics.get(uuid or "")
        if found is None:
            return Box("nic", uuid or "(none)", "gone", missing=True)
        kind = "portgroup" if isinstance(found, Portgroup) else "nic"
        return Box(kind, found.uuid, found.address or "")


def chain_of(finding: Finding, snap: Snapshot) -> Chain:
    build = _BUILDERS.get(finding.invariant)
    chain = build(finding.resources, _Look(snap)) if build else None
    return chain if chain is not None else _generic(finding.resources)


def _stale_vif(r: dict[str, str], look: _Look) -> Chain:
    node = look.nodes.get(r["node"])
    owner = look.instance(node.instance_uuid if node else None)
    port = look.port(r["vif"])
    bound = look.ports[r["vif"]].device_id if not port.missing else ""
    if port.missing:
        owns = Link("binds", broken=False)
        names = Link("port gone", broken=True)
    elif owner.missing or bound != owner.ident:
        owns = Link(f"bound to {_short(bound) or 'nothing'}", broken=True)
        names = Link("is")
    else:
        owns, names = Link("binds"), Link("is")
    return (Chain([owner]).then(owns, port).then(names, Box("vif", r["vif"], "on the node"))
            .then(Link("attached to"), look.nic(r.get("nic"))))


def _orphan_port(r: dict[str, str], look: _Look) -> Chain:
    port = look.port(r["port"])
    if "stack" in r or "instance" not in r:
        stack = look.stacks.get(r.get("stack", ""))
        owner = Box("stack", r.get("stack") or "(unknown)", stack.state if stack else "gone",
                    missing=stack is None)
        why = "stack gone" if stack is None else "no longer lists it"
        chain = Chain([owner]).then(Link(why, broken=True), port)
    else:
        owner = look.instance(r["instance"])
        chain = Chain([owner]).then(Link("instance gone" if owner.missing else "does not list it", broken=True), port)
    nic = look.nic_of_vif.get(r["port"])
    if nic is not None:
        chain.then(Link("is"), Box("vif", r["port"])).then(Link("attached to"), look.nic(nic.uuid))
    return chain


def _mac_conflict(r: dict[str, str], look: _Look) -> Chain:
    if "ports" in r:
        ids = r["ports"].split(",")
        chain = Chain([look.port(ids[0])])
        for other in ids[1:]:
            chain.then(Link("same MAC", broken=True), look.port(other))
        return chain
    port = look.ports.get(r["port"])
    chain = Chain([])
    if port is not None and port.device_id:
        chain.boxes.append(look.instance(port.device_id))
        chain.links.append(Link("binds"))
    chain.boxes.append(look.port(r["port"]))
    return chain.then(Link("keeps its MAC", broken=True), look.nic(r["nic"]))


def _stuck_transient(r: dict[str, str], look: _Look) -> Chain:
    if "stack" in r:
        stack = look.stacks.get(r["stack"])
        return Chain([Box("stack", r["stack"], stack.state if stack else "gone", broken=True)])
    if "instance" in r and "node" in r:
        node = look.node(r["node"])
        return Chain([_broken(look.instance(r["instance"]))]).then(
            Link("node is " + ("gone" if node.missing else node.detail.split()[-1]), broken=True), node)
    if "instance" in r:
        return Chain([_broken(look.instance(r["instance"]))])
    return Chain([_broken(look.node(r.get("node")))])


def _zombie_interface(r: dict[str, str], look: _Look) -> Chain:
    owner = look.instance(r["instance"])
    if "device" in r:
        port = look.port(r.get("port"))
        why = "port gone" if port.missing else f"bound to {_short(look.ports[r['port']].device_id) or 'nothing'}"
        return Chain([owner]).then(Link("plugs"), Box("interface", r["device"], "on the hypervisor")).then(
            Link(why, broken=True), port)
    instance = look.instances.get(r["instance"])
    if instance is not None and instance.is_baremetal:
        return Chain([owner]).then(Link("lists"), look.port(r["port"])).then(
            Link("not plugged", broken=True), Box("vif", r["port"], "not on the node", missing=True))
    return Chain([owner]).then(Link("lists"), look.port(r["port"])).then(
        Link("not plugged", broken=True), Box("interface", "(none)", "not on the hypervisor", missing=True))


def _association(r: dict[str, str], look: _Look) -> Chain:
    instance = look.instances.get(r["instance"])
    node = look.nodes.get(r["node"])
    if instance is None or instance.deleted or instance.node != r["node"]:
        why = "names another node" if instance is not None and not instance.deleted else "instance gone"
        return Chain([look.instance(r["instance"])]).then(Link(why, broken=True), look.node(r["node"]))
    why = "node gone" if node is None else f"node names {_short(node.instance_uuid or '') or 'nothing'}"
    return Chain([look.instance(r["instance"])]).then(Link(why, broken=True), look.node(r["node"]))


def _ip_allocation(r: dict[str, str], look: _Look) -> Chain:
    return Chain([Box("ip", r["ip"])]).then(Link("port missing", broken=True), look.port(r["port"]))


def _broken(box: Box) -> Box:
    return Box(box.kind, box.ident, box.detail, box.missing, broken=True)


def _generic(r: dict[str, str]) -> Chain:
    boxes = [Box(kind, ident) for kind, ident in r.items()]
    chain = Chain(boxes[:1] or [Box("resource", "(none)")])
    for box in boxes[1:]:
        chain.then(Link("", broken=box is boxes[-1]), box)
    if len(chain.boxes) == 1:
        chain.boxes[0] = _broken(chain.boxes[0])
    return chain


def _short(ident: str) -> str:
    return ident[:8]


_BUILDERS = {
    "stale-vif": _stale_vif,
    "orphan-port": _orphan_port,
    "mac-conflict": _mac_conflict,
    "stuck-transient": _stuck_transient,
    "zombie-interface": _zombie_interface,
    "association": _association,
    "ip-allocation": _ip_allocation,
}
