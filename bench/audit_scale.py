"""Does `tether audit` find every leak of a large cloud, and only those, in few calls? (issue 15)

The script makes a data directory with a real `tether serve` (its demo cloud and clouds.yaml), stops it,
seeds the store through the repositories (list_scale's healthy bulk: 10,000 bare-metal nodes with a NIC
each, 100,000 ports, 50,000 servers, a tenth of the nodes deployed) and plants a known number of leaks
of each kind the auditor judges:

- a stale VIF: a free node whose NIC still names a port that is gone (seed 000);
- an orphan port: a port compute made for a server that is gone (its device_id names no server); the
  public APIs do not say who made a port, so the audit reads it as the user's and also reports it
  bound to a gone server (user-resources-kept): two findings each;
- a held MAC: an unbound port keeping the MAC of a free node's NIC (seed 001);
- a stuck BUILD: a server in BUILD on a node that is available (seed 002).

It then serves the store (`tether serve --reconcile-interval 3600`, so no reconciler mends the leaks
while we look; the leaks' ids sort after the first resync slice) and, once the server has finished its
start-up resync, runs in the same run:

- the audit as an operator runs it: `tether audit --os-cloud tether --format json` against the clouds.yaml
  the server wrote, a process of its own, its wall time, peak RSS (wait4) and the API calls it reports;
- the per-node way an operator uses today: every node's `baremetal node vif list`
  (openstacksdk's ``baremetal.list_node_vifs``) after the paged node list, timed and counted, stopped
  after ``--per-node-budget`` seconds and then extrapolated.

It checks every planted leak is found and none invented, and prints the targets: at most 5 API calls per
1,000 resources, under 2 minutes, under 1 GB.

    python bench/audit_scale.py [--scale 1] [--leaks 25] [--per-node-budget 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from list_scale import Size, launch, mac, rss_mb, seed_store, settle
from tests.live import LiveCloud, start

from tether.audit import cloud_api as api
from tether.config import DataDir
from tether.domain.baremetal import TENANT_VIF_KEY, Node, NodePort
from tether.domain.compute import Instance
from tether.domain.network import CREATED_BY_COMPUTE, Network, Port
from tether.store import repos
from tether.store.database import Database

FULL = Size("audit", ports=100_000, nodes=10_000, servers=50_000)
TARGET_CALLS_PER_1000 = 5.0
TARGET_SECONDS = 120.0
TARGET_MB = 1024.0
# Leaks' ids start with 0xfe, so they sort after every seeded id: the server's first resync slice (the
# first hundred ids of each kind) never reaches them.
LEAK_BASE = 0xFE << 120

Finding = tuple[str, frozenset[tuple[str, str]]]


def leak_id(kind: int, index: int) -> str:
    return str(uuid.UUID(int=LEAK_BASE + (kind << 96) + index))


@dataclass
class Planted:
    findings: set[Finding] = field(default_factory=set)
    kinds: dict[str, int] = field(default_factory=dict)
    stale_vifs: set[str] = field(default_factory=set)

    def expect(self, invariant: str, **resources: str) -> None:
        self.findings.add((invariant, frozenset(resources.items())))


async def plant(url: str, per_kind: int) -> Planted:
    """``per_kind`` leaks of each kind, written through the repositories as the bugs leave them."""
    planted = Planted(kinds={"stale VIF": per_kind, "orphan port": per_kind, "held MAC": per_kind,
                             "stuck BUILD": per_kind})
    database = Database(url)
    try:
        async with database.begin() as conn:
            admin = await repos.projects.first(conn, name="admin")
            user = await repos.users.first(conn, name="admin")
            flavor = (await repos.flavors.find(conn, limit=1))[0]
            image = (await repos.images.find(conn, limit=1))[0]
        assert admin is not None and user is not None
        now = time.time() - 86_400
        network = Network(id=leak_id(1, 0), name="audit-leaks", project_id=admin.id, created_at=now, updated_at=now)
        nodes, nics, ports, instances = [], [], [], []

        def free_node(index: int, kind: int, vif: str | None = None, instance: str | None = None) -> tuple[str, str]:
            node, nic, address = leak_id(kind, index), leak_id(kind + 1, index), mac(f"52:54:{kind:02x}", index)
            nodes.append(Node(uuid=node, name=f"leak-{kind:02x}-{index:05d}", provision_state="available",
                              instance_uuid=instance, resource_class="baremetal", provision_updated_at=now,
                              created_at=now, updated_at=now))
            nics.append(NodePort(uuid=nic, address=address, node_uuid=node,
                                 internal_info={TENANT_VIF_KEY: vif} if vif else {}, created_at=now, updated_at=now))
            return node, nic

        for i in range(per_kind):
            # stale VIF: the port the NIC names was deleted with its server
            vif = leak_id(3, i)
            node, nic = free_node(i, 0x10, vif=vif)
            planted.stale_vifs.add(vif)
            planted.expect("stale-vif", node=node, vif=vif, nic=nic)
            # orphan port: compute's port of a server that is gone
            port, gone = leak_id(4, i), leak_id(5, i)
            ports.append(Port(id=port, name="", network_id=network.id, project_id=admin.id,
                              mac_address=mac("fa:16:3f", i), status="ACTIVE", device_id=gone,
                              device_owner="compute:nova", created_by=CREATED_BY_COMPUTE, created_at=now,
                              updated_at=now))
            planted.expect("orphan-port", port=port, instance=gone)
            planted.expect("user-resources-kept", port=port, instance=gone)
            # held MAC: an unbound port keeps the MAC of a free node's NIC
            node, nic = free_node(i, 0x20)
            held, address = leak_id(6, i), mac("52:54:20", i)
            ports.append(Port(id=held, name=f"held-{i:05d}", network_id=network.id, project_id=admin.id,
                              mac_address=address, created_at=now, updated_at=now))
            planted.expect("mac-conflict", port=held, mac=address, nic=nic)
            # stuck BUILD: the server still builds on a node that is available again
            server = leak_id(7, i)
            node, _ = free_node(i, 0x30, instance=server)
            instances.append(Instance(uuid=server, name=f"stuck-{i:05d}", project_id=admin.id, user_id=user.id,
                                      flavor_id=flavor.id, image_id=image.id, vm_state="building",
                                      task_state="spawning", host="ironic", node=node, is_baremetal=True,
                                      created_at=now, updated_at=now))
            planted.expect("stuck-transient", instance=server, node=node)
        async with database.begin() as conn:
            await repos.networks.add_all(conn, [network])
            await repos.nodes.add_all(conn, nodes)
            await repos.node_ports.add_all(conn, nics)
            await repos.ports.add_all(conn, ports)
            await repos.instances.add_all(conn, instances)
    finally:
        await database.dispose()
    return planted


@dataclass
class AuditRun:
    seconds: float
    peak_mb: float
    exit_code: int
    report: dict[str, Any]


def run_audit(cloud: LiveCloud, directory: Path) -> AuditRun:
    """`tether audit` as its own process, as an operator runs it; wait4 gives its peak RSS."""
    out, err = directory / "audit.json", directory / "audit.err"
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml)}
    began = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "tether.cli", "audit", "--os-cloud", "tether",
                                    "--format", "json"], stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - began
    process.returncode = code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):
        raise RuntimeError(f"tether audit exited {code}: {err.read_text()[-2000:]}")
    return AuditRun(seconds, usage.ru_maxrss / 1024, code, json.loads(out.read_text()))


@dataclass
class PerNode:
    nodes: int = 0
    read: int = 0
    calls: int = 0
    seconds: float = 0.0
    vifs: set[str] = field(default_factory=set)
    errors: int = 0

    @property
    def finished(self) -> bool:
        return self.read == self.nodes

    def projected_calls(self) -> int:
        return self.calls + self.nodes - self.read

    def projected_seconds(self) -> float:
        return self.seconds * self.nodes / max(self.read, 1)


def per_node(cloud: LiveCloud, budget: float) -> PerNode:
    """The node list, then `baremetal node vif list` for each node in turn, as an operator's loop does."""
    conn = cloud.connect("tether")
    result = PerNode()
    counter = api.CallCounter()
    began = time.monotonic()
    try:
        nodes = [node["uuid"] for node in api.nodes(conn.baremetal, counter)]
        result.nodes = len(nodes)
        for node in nodes:
            if time.monotonic() - began > budget:
                break
            counter.calls += 1
            try:
                result.vifs.update(conn.baremetal.list_node_vifs(node))  # the VIF ids
            except Exception:
                result.errors += 1
            result.read += 1
    finally:
        result.seconds = time.monotonic() - began
        result.calls = counter.calls
        conn.close()
    return result


def found_of(report: dict[str, Any]) -> set[Finding]:
    return {(f["invariant"], frozenset(f["resources"].items())) for f in report["findings"]}


def resources_of(report: dict[str, Any]) -> int:
    return sum(source["items"] for source in report["sources"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sizes by this (0.1: a quick look)")
    parser.add_argument("--leaks", type=int, default=25, help="leaks of each kind at scale 1 (at least 2)")
    parser.add_argument("--per-node-budget", type=float, default=600.0,
                        help="seconds at most for the per-node loop (then extrapolated)")
    args = parser.parse_args()
    size = Size("audit", int(FULL.ports * args.scale), int(FULL.nodes * args.scale), int(FULL.servers * args.scale))
    per_kind = max(2, round(args.leaks * args.scale))
    with tempfile.TemporaryDirectory(prefix="tether-audit-scale-") as name:
        directory = Path(name)
        data = directory / "cloud"
        start(data, deploy_seconds=0.0, clean_seconds=0.0).stop()
        began = time.monotonic()
        url = DataDir(data).database_url
        asyncio.run(seed_store(url, size))
        planted = asyncio.run(plant(url, per_kind))
        seeded = time.monotonic() - began
        began = time.monotonic()
        cloud = launch(data, 900, "--reconcile-interval", "3600")
        ready = time.monotonic() - began
        try:
            busy = settle(cloud.process.pid, limit=900)
            print(f"scale {args.scale:g}: {size.nodes:,} nodes, {size.ports:,} ports, {size.servers:,} servers "
                  f"(seeded with {sum(planted.kinds.values())} leaks in {seeded:.1f} s); serving after {ready:.1f} s, "
                  f"start-up resync {busy:.0f} s more", flush=True)
            audit = run_audit(cloud, directory)
            serve_mb = rss_mb(cloud.process.pid)
            walk = per_node(cloud, args.per_node_budget)
        finally:
            cloud.stop()
    report(args.scale, planted, audit, walk, serve_mb)


def report(scale: float, planted: Planted, audit: AuditRun, walk: PerNode, serve_mb: float) -> None:
    found = found_of(audit.report)
    missed, invented = planted.findings - found, found - planted.findings
    resources = resources_of(audit.report)
    calls = audit.report["api_calls"]
    per_1000 = calls * 1000 / max(resources, 1)
    print(f"planted: {', '.join(f'{count} {kind}' for kind, count in planted.kinds.items())} "
          f"-> {len(planted.findings)} findings expected")
    print(f"audit (tether audit --os-cloud tether, exit {audit.exit_code}): {len(found)} findings, "
          f"{len(planted.findings) - len(missed)} of {len(planted.findings)} planted found, {len(invented)} invented")
    for label, items in (("MISSED", missed), ("INVENTED", invented)):
        for invariant, resources in sorted(items, key=str)[:10]:
            print(f"  {label} {invariant} {dict(resources)}")
    print(f"{'':28} {'wall s':>9} {'API calls':>10} {'calls/1000 res.':>16} {'peak MB':>9}")
    print(f"{'tether audit':28} {audit.seconds:9.1f} {calls:10,} {per_1000:16.2f} {audit.peak_mb:9.0f}")
    walked = f"{walk.read:,} of {walk.nodes:,} nodes"
    projected = "" if walk.finished else f" (stopped by the budget; all nodes: ~{walk.projected_seconds():.0f} s, " \
        f"{walk.projected_calls():,} calls)"
    print(f"{'per-node vif list':28} {walk.seconds:9.1f} {walk.calls:10,} "
          f"{walk.calls * 1000 / max(resources, 1):16.2f} {'-':>9}  {walked}{projected}")
    if walk.errors:
        print(f"  per-node: {walk.errors} calls failed")
    if walk.finished:
        print(f"  per-node VIFs seen: {len(walk.vifs)}, planted stale VIFs among them: "
              f"{len(planted.stale_vifs & walk.vifs)} of {len(planted.stale_vifs)} (which are stale it cannot say)")
    full = walk.projected_seconds()
    print(f"ratio per-node / audit: {full / max(audit.seconds, 1e-9):.1f}x the time, "
          f"{walk.projected_calls() / max(calls, 1):.1f}x the calls (over {resources:,} resources read by the audit; "
          f"the server's RSS {serve_mb:.0f} MB)")
    checks = {
        "every planted leak found": not missed,
        "none invented": not invented,
        f"<= {TARGET_CALLS_PER_1000:g} API calls per 1,000 resources": per_1000 <= TARGET_CALLS_PER_1000,
        f"under {TARGET_SECONDS:.0f} s": audit.seconds < TARGET_SECONDS,
        f"under {TARGET_MB:.0f} MB": audit.peak_mb < TARGET_MB,
    }
    print("targets (scale {:g}): {}".format(scale, "; ".join(f"{name}: {'ok' if ok else 'MISSED'}"
                                                             for name, ok in checks.items())))
    if not all(checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
