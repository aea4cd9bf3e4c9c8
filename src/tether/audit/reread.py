"""A live re-read of one finding's resources and their owners, right before acting on it.

The same mapping and the same invariant as the audit, over a small snapshot of just what the
finding involves: the finding still holds only if the invariant still names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openstack.connection

from tether.audit import cloud_api as api
from tether.audit import public_model as model
from tether.audit.analysis import violations
from tether.audit.cloud_collector import snapshot_of
from tether.audit.findings import Finding, finding_of
from tether.audit.public_model import Raw
from tether.audit.sources import Collection
from tether.domain.ids import is_uuid_like
from tether.domain.invariants import Snapshot


@dataclass
class Reread:
    finding: Finding | None  # None: it no longer holds
    before: dict[str, Any]  # the resources as they are now, for the journal
    snapshot: Snapshot


def reread(conn: openstack.connection.Connection, finding: Finding) -> Reread:
    """The finding as it reads now, over just the resources it involves."""
    r, n = finding.resources, api.CallCounter()
    ports: dict[str, Raw] = {}
    nodes: dict[str, Raw] = {}
    nics: dict[str, Raw] = {}
    groups: dict[str, Raw] = {}
    servers: dict[str, Raw] = {}
    before: dict[str, Any] = {}

    def add_ports(found: list[Raw]) -> None:
        ports.update((p["id"], p) for p in found)

    for key in ("port", "vif"):
        if r.get(key):
            port = api.port(conn.network, n, r[key])
            before[key] = port
            if port is not None:
                add_ports([port])
    for port_id in filter(None, r.get("ports", "").split(",")):
        port = api.port(conn.network, n, port_id)
        if port is not None:
            add_ports([port])
    if r.get("node"):
        node = api.node(conn.baremetal, n, r["node"])
        before["node"] = node
        if node is not None:
            nodes[node["uuid"]] = node
            nics.update((c["uuid"], c) for c in api.nics(conn.baremetal, n, node=node["uuid"]))
            groups.update((g["uuid"], g) for g in api.portgroups(conn.baremetal, n, node=node["uuid"]))
    if r.get("mac"):
        add_ports(api.ports(conn.network, n, mac_address=r["mac"]))
        nics.update((c["uuid"], c) for c in api.nics(conn.baremetal, n, address=r["mac"]))
    owners = {r.get("instance")} | {node.get("instance_uuid") for node in nodes.values()}
    owners |= {port.get("device_id") for port in ports.values()}
    for uuid in sorted(o for o in owners if o and is_uuid_like(o)):
        server = api.server(conn.compute, n, uuid)
        if server is not None:
            servers[uuid] = server
            add_ports(api.ports(conn.network, n, device_id=uuid))
            node_of = server.get("OS-EXT-SRV-ATTR:hypervisor_hostname")
            if node_of and is_uuid_like(node_of) and node_of not in nodes:
                node = api.node(conn.baremetal, n, node_of)
                if node is not None:
                    nodes[node_of] = node
                    nics.update((c["uuid"], c) for c in api.nics(conn.baremetal, n, node=node_of))
    if r.get("instance"):
        before["instance"] = servers.get(r["instance"])
    snapshot = snapshot_of(list(servers.values()), list(ports.values()), list(nodes.values()), list(nics.values()),
                           list(groups.values()))
    collection = Collection(snapshot, guests_read=set())
    if finding.invariant == "zombie-interface" and r.get("instance") in servers:
        instance = next(i for i in snapshot.instances if i.uuid == r["instance"])
        body = api.diagnostics(conn.compute, n, instance.uuid)
        for nic in body.get("nic_details") or []:
            add_ports(api.ports(conn.network, n, mac_address=nic.get("mac_address")))
        snapshot.ports = [model.port_of(p) for p in ports.values()]
        snapshot.guest_devices = model.guest_interfaces_of(instance, body, snapshot.ports)
        collection.guests_read = {instance.uuid}
    now = [finding_of(v, snapshot) for v in violations(collection, finding.invariant)]
    return Reread(next((f for f in now if f.key == finding.key), None), before, snapshot)
