"""A snapshot of any OpenStack cloud, read through its public APIs with openstacksdk.

A handful of paginated list calls (servers of all projects, ports, bare-metal nodes, NICs with their
VIF records, portgroups), and the servers' diagnostics only when asked for, a bounded number at a
time. A source that fails is reported and leaves its part of the snapshot empty; analysis then
evaluates nothing that needs it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openstack.connection
from keystoneauth1.exceptions import http as http_errors

from tether.audit import cloud_api as api
from tether.audit import public_model as model
from tether.audit import sources as src
from tether.audit.public_model import Raw
from tether.audit.sources import Collection, SourceReport
from tether.domain import compute_states as vm
from tether.domain.invariants import Snapshot

Progress = Callable[[str], None]
GUEST_READERS = 8  # diagnostics calls in flight at once, so the audit never floods nova


def connect(cloud: str | None) -> openstack.connection.Connection:
    """A connection the usual way: ``--os-cloud`` and clouds.yaml, or the ``OS_*`` environment."""
    return openstack.connect(cloud=cloud) if cloud else openstack.connect()


def _read(report: SourceReport, reader: Callable[[api.CallCounter], list[Raw]]) -> list[Raw]:
    counter = api.CallCounter()
    try:
        items = reader(counter)
    except Exception as error:  # any failure of a source is reported, never taken for "none"
        report.error = f"{type(error).__name__}: {error}".strip()
        items = []
    report.calls, report.items = counter.calls, len(items)
    return items


def collect(conn: openstack.connection.Connection, *, guest_interfaces: bool = False,
            progress: Progress | None = None) -> Collection:
    say = progress or (lambda _step: None)
    reports = {name: SourceReport(name) for name in (src.SERVERS, src.PORTS, src.NODES, src.NICS, src.PORTGROUPS)}
    say(src.SERVERS)
    raw_servers = _read(reports[src.SERVERS], lambda n: api.servers(conn.compute, n))
    say(src.PORTS)
    raw_ports = _read(reports[src.PORTS], lambda n: api.ports(conn.network, n))
    say(src.NODES)
    raw_nodes = _read(reports[src.NODES], lambda n: api.nodes(conn.baremetal, n))
    say(src.NICS)
    raw_nics = _read(reports[src.NICS], lambda n: api.nics(conn.baremetal, n))
    say(src.PORTGROUPS)
    raw_groups = _read(reports[src.PORTGROUPS], lambda n: api.portgroups(conn.baremetal, n))
    snapshot = snapshot_of(raw_servers, raw_ports, raw_nodes, raw_nics, raw_groups)
    read: set[str] = set()
    collection = Collection(snapshot, list(reports.values()), guests_read=read, cloud=conn.config.name or "")
    if guest_interfaces:
        say(src.GUESTS)
        collection.sources.append(_read_guests(conn, snapshot, read))
    return collection


def snapshot_of(raw_servers: list[Raw], raw_ports: list[Raw], raw_nodes: list[Raw], raw_nics: list[Raw],
                raw_groups: list[Raw], now: float | None = None) -> Snapshot:
    ports = [model.port_of(port) for port in raw_ports]
    by_device: dict[str, list[Any]] = defaultdict(list)
    for port in ports:
        by_device[port.device_id].append(port)
    instances, vifs = [], []
    for server in raw_servers:
        instance = model.instance_of(server)
        instances.append(instance)
        vifs += model.cache_of(server, instance, by_device.get(instance.uuid, []))
    return Snapshot(now=time.time() if now is None else now, instances=instances, vifs=vifs, ports=ports,
                    ip_allocations=model.allocations_of(ports), nodes=[model.node_of(n) for n in raw_nodes],
                    node_ports=[model.nic_of(n) for n in raw_nics],
                    portgroups=[model.portgroup_of(g) for g in raw_groups])


def _read_guests(conn: openstack.connection.Connection, snapshot: Snapshot, read: set[str]) -> SourceReport:
    """Diagnostics of every running virtual machine (ironic has none), a bounded number at a time."""
    report = SourceReport(src.GUESTS)
    running = [i for i in snapshot.instances
               if not i.is_baremetal and i.vm_state == vm.ACTIVE and i.task_state is None and i.host]
    counter = api.CallCounter()
    failures: list[str] = []

    def one(instance: Any) -> Raw | None:
        try:
            return api.diagnostics(conn.compute, counter, instance.uuid)
        except (http_errors.NotFound, http_errors.Conflict):
            # Deleted, or gone into an operation, since the list: a normal operation under way, whose
            # guest is not judged, and no failure of the source.
            return None
        except Exception as error:  # reported per instance; its guest is then not judged
            failures.append(f"{instance.uuid}: {type(error).__name__}: {error}")
            return None

    with ThreadPoolExecutor(max_workers=GUEST_READERS, thread_name_prefix="diagnostics") as pool:
        bodies = list(pool.map(one, running))
    for instance, body in zip(running, bodies, strict=True):
        if body is not None:
            snapshot.guest_devices += model.guest_interfaces_of(instance, body, snapshot.ports)
            read.add(instance.uuid)
    report.calls, report.items = counter.calls, len(read)
    if failures:
        report.error = f"{len(failures)} of {len(running)} servers unread: {failures[0]}"
    return report
