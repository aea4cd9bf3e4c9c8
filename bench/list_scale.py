"""Do lists stay fast as the cloud grows? The same requests on a small and a large store (issue 18).

For each size the script makes a data directory with a real `tether serve` (its demo cloud and
clouds.yaml), stops it, seeds the store through the repositories (bulk inserts, one transaction per
table), starts `tether serve` again on it and measures through openstacksdk, each row over
``--requests`` requests (default 200):

- a page of 100 (the first, and one after a deep marker: nine tenths of the way through) of ports,
  bare-metal nodes (detail) and servers (detail), each a GET through the SDK's service proxy read as
  JSON (the SDK's Resource objects cost tens of milliseconds an item on a loaded machine, more than the
  server's whole answer);
- a filtered lookup: a port by device_id, a node by instance_uuid, a server by name (the SDK's
  find_server: a GET by the name, then ``?name=``);
- a show: a port, a node, a server.

Both sizes are served at once and each row's requests alternate between them (small, large, small,
...), so that the load of a shared machine, which comes and goes, weighs on both sizes alike. It prints
p50/p99 per row and size, and the ratio large/small of the p50s (target at most 1.5; a page
p99 under 20 ms on a quiet machine), the server's resident memory at each size (target under 1 GB at
the large one), the time from exec to the first answer on the seeded store, and how long the process
then kept a core busy (its start-up resync) before the requests began, and the load average.

Sizes: small 1,000 ports, 200 nodes, 500 servers; large 100,000 ports, 10,000 nodes, 50,000 servers
(``--scale`` divides the large one, for a quick look). A row that takes longer than ``--budget``
seconds stops early and says after how many requests; a request that fails is counted and shown.

    python bench/list_scale.py [--requests 200] [--budget 120] [--scale 1] [--sizes small,large]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.live import LiveCloud, free_port, start

from tether.config import DataDir
from tether.domain.baremetal import Node, NodePort
from tether.domain.compute import Instance
from tether.domain.network import IpAllocation, Network, Port, Subnet
from tether.store import repos
from tether.store.database import Database

PAGE = 100
TARGET_RATIO = 1.5
PORTS_PER_NETWORK = 1_000
BAREMETAL_INSTANCES = 0.1  # of the nodes: active, each with its instance (both ways)


@dataclass(frozen=True)
class Size:
    name: str
    ports: int
    nodes: int
    servers: int


@dataclass
class Seeded:
    """What the requests look for: ids known to the seeding."""

    deep_port: str
    deep_node: str
    deep_server: str
    port: str
    device_id: str
    node: str
    node_instance: str
    server: str
    server_name: str


@dataclass
class Row:
    name: str
    samples: list[float] = field(default_factory=list)
    errors: int = 0
    stopped: bool = False

    def quantile(self, q: float) -> float | None:
        if not self.samples:
            return None
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def mac(prefix: str, index: int) -> str:
    return f"{prefix}:{(index >> 16) & 255:02x}:{(index >> 8) & 255:02x}:{index & 255:02x}"


async def seed_store(url: str, size: Size) -> Seeded:
    database = Database(url)
    try:
        async with database.begin() as conn:
            admin = await repos.projects.first(conn, name="admin")
            user = await repos.users.first(conn, name="admin")
            flavor = (await repos.flavors.find(conn, limit=1))[0]
            image = (await repos.images.find(conn, limit=1))[0]
            hypervisor = (await repos.hypervisors.find(conn, limit=1))[0]
        assert admin is not None and user is not None
        now = time.time() - 86_400
        servers = [str(uuid.UUID(int=(7 << 96) + i)) for i in range(size.servers)]
        nodes = [str(uuid.UUID(int=(8 << 96) + i)) for i in range(size.nodes)]
        on_metal = int(size.nodes * BAREMETAL_INSTANCES)
        instances = []
        for i, ident in enumerate(servers):
            metal = i < on_metal
            instances.append(Instance(
                uuid=ident, name=f"bench-server-{i:06d}", project_id=admin.id, user_id=user.id, flavor_id=flavor.id,
                image_id=image.id, vm_state="active", power_state=1, host="ironic" if metal else hypervisor.hostname,
                node=nodes[i] if metal else hypervisor.hostname, is_baremetal=metal, created_at=now + i * 0.001,
                updated_at=now + i * 0.001, launched_at=now + i * 0.001))
        node_rows = [Node(uuid=ident, name=f"bench-node-{i:06d}", provision_state="active" if i < on_metal else
                          "available", power_state="power on" if i < on_metal else "power off",
                          instance_uuid=servers[i] if i < on_metal else None, resource_class="baremetal",
                          provision_updated_at=now, created_at=now + i * 0.001, updated_at=now + i * 0.001)
                     for i, ident in enumerate(nodes)]
        nics = [NodePort(uuid=str(uuid.UUID(int=(9 << 96) + i)), address=mac("52:54:01", i), node_uuid=ident,
                         created_at=now + i * 0.001, updated_at=now + i * 0.001)
                for i, ident in enumerate(nodes)]
        networks, subnets, ports, addresses = [], [], [], []
        for n in range((size.ports + PORTS_PER_NETWORK - 1) // PORTS_PER_NETWORK):
            net = Network(id=str(uuid.UUID(int=(10 << 96) + n)), name=f"bench-net-{n:04d}", project_id=admin.id,
                          created_at=now, updated_at=now)
            sub = Subnet(id=str(uuid.UUID(int=(11 << 96) + n)), name=f"bench-subnet-{n:04d}", network_id=net.id,
                         project_id=admin.id, ip_version=4, cidr=f"10.{100 + 4 * n // 256}.{4 * n % 256}.0/22",
                         gateway_ip=None, created_at=now, updated_at=now)
            networks.append(net)
            subnets.append(sub)
        for i in range(size.ports):
            net, sub = networks[i // PORTS_PER_NETWORK], subnets[i // PORTS_PER_NETWORK]
            ident = str(uuid.UUID(int=(12 << 96) + i))
            # two ports a device (not a server: those would be ports the server does not list, which the
            # reconcilers release)
            device = str(uuid.UUID(int=(13 << 96) + i // 2))
            ports.append(Port(id=ident, name=f"bench-port-{i:06d}", network_id=net.id, project_id=admin.id,
                              mac_address=mac("fa:16:3e", i), device_id=device, status="ACTIVE",
                              created_at=now + i * 0.001, updated_at=now + i * 0.001))
            base = sub.cidr.split("/")[0].rsplit(".", 2)[0]
            third = int(sub.cidr.split(".")[2])
            local = i % PORTS_PER_NETWORK + 2
            addresses.append(IpAllocation(subnet_id=sub.id, ip_address=f"{base}.{third + local // 256}.{local % 256}",
                                          network_id=net.id, port_id=ident))
        for repo, rows in ((repos.instances, instances), (repos.nodes, node_rows), (repos.node_ports, nics),
                           (repos.networks, networks), (repos.subnets, subnets), (repos.ports, ports),
                           (repos.ip_allocations, addresses)):
            for at in range(0, len(rows), 10_000):
                async with database.begin() as conn:
                    await repo.add_all(conn, rows[at:at + 10_000])
    finally:
        await database.dispose()
    def deep(count: int) -> int:
        """Nine tenths of the way through, yet a full page after it."""
        return max(0, min(count * 9 // 10, count - PAGE - 1))

    return Seeded(
        deep_port=sorted(port.id for port in ports)[deep(len(ports))],
        deep_node=nodes[deep(len(nodes))],
        # nova lists newest first: the deep marker is an early server
        deep_server=servers[len(servers) - 1 - deep(len(servers))],
        port=ports[len(ports) // 2].id, device_id=ports[len(ports) // 3].device_id,
        node=nodes[len(nodes) // 2], node_instance=servers[on_metal // 2],
        server=servers[len(servers) // 2], server_name=f"bench-server-{len(servers) * 2 // 3:06d}")


def launch(data: Path, limit: float, *extra: str) -> LiveCloud:
    """`tether serve` on a seeded store (``extra``: more of its options), waiting up to ``limit`` seconds for
    its first answer (tests.live's start gives up sooner: its stores are small)."""
    port = free_port()
    log = data / "serve.log"
    args = [sys.executable, "-m", "tether.cli", "serve", "--port", str(port), "--data-dir", str(data),
            "--deploy-seconds", "0", "--clean-seconds", "0", *extra]
    process = subprocess.Popen(args, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tether serve exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/compute/v2.1", timeout=5):
                return LiveCloud(base, data, data / "clouds.yaml", process, log)
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"tether serve did not answer in {limit:.0f} s")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def settle(pid: int, limit: float) -> float:
    """Seconds until the process uses less than a tenth of a core over two seconds in a row."""
    began = time.monotonic()
    quiet = 0
    last = cpu_seconds(pid)
    while time.monotonic() - began < limit:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        quiet = quiet + 1 if now - last < 0.1 else 0
        last = now
        if quiet >= 2:
            break
    return time.monotonic() - began


def first_page(get: Callable[..., Any], path: str, key: str) -> Callable[[], int]:
    """One page through the SDK's proxy (its session, token and endpoint), as JSON: the SDK's Resource
    objects cost tens of milliseconds an item on a loaded machine, which would drown the server's cost."""
    def run() -> int:
        response = get(path)
        response.raise_for_status()
        found = response.json()[key]
        if len(found) != PAGE:
            raise RuntimeError(f"a page of {len(found)}")
        return len(found)
    return run


def requests(conn: Any, seeded: Seeded) -> dict[str, Callable[[], Any]]:
    def one(found: list[Any]) -> Any:
        if len(found) != 1:
            raise RuntimeError(f"{len(found)} found, one expected")
        return found[0]

    def two(found: list[Any]) -> list[Any]:
        if len(found) != 2:
            raise RuntimeError(f"{len(found)} found, two expected")
        return found

    return {
        "ports: first page": first_page(conn.network.get, f"/ports?limit={PAGE}", "ports"),
        "ports: deep marker": first_page(conn.network.get, f"/ports?limit={PAGE}&marker={seeded.deep_port}",
                                         "ports"),
        "nodes: first page": first_page(conn.baremetal.get, f"/nodes/detail?limit={PAGE}", "nodes"),
        "nodes: deep marker": first_page(conn.baremetal.get, f"/nodes/detail?limit={PAGE}&marker={seeded.deep_node}",
                                         "nodes"),
        "servers: first page": first_page(conn.compute.get, f"/servers/detail?limit={PAGE}", "servers"),
        "servers: deep marker": first_page(conn.compute.get,
                                           f"/servers/detail?limit={PAGE}&marker={seeded.deep_server}", "servers"),
        "port by device_id": lambda: two(list(conn.network.ports(device_id=seeded.device_id))),
        "node by instance_uuid": lambda: one(list(conn.baremetal.nodes(instance_id=seeded.node_instance))),
        "server by name": lambda: conn.compute.find_server(seeded.server_name, ignore_missing=False),
        "port show": lambda: conn.network.get_port(seeded.port),
        "node show": lambda: conn.baremetal.get_node(seeded.node),
        "server show": lambda: conn.compute.get_server(seeded.server),
    }


def measure(runs: list[Callable[[], Any]], name: str, count: int, budget: float) -> list[Row]:
    """One row for every size, their requests taken in turn (small, large, small, ...): the machine's
    load, which comes and goes, weighs on each size alike and the ratio stays the servers' own."""
    rows = [Row(name) for _ in runs]
    for run, row in zip(runs, rows, strict=True):
        try:
            run()  # the token and the connection, not measured
        except Exception:
            row.errors += 1
    began = time.monotonic()
    for _ in range(count):
        if time.monotonic() - began > budget:
            for row in rows:
                row.stopped = True
            break
        for run, row in zip(runs, rows, strict=True):
            start_at = time.perf_counter()
            try:
                run()
            except Exception:
                row.errors += 1
                continue
            row.samples.append(time.perf_counter() - start_at)
    return rows


@dataclass
class Result:
    size: Size
    rows: dict[str, Row]
    ready_seconds: float
    settle_seconds: float
    rss_mb: float
    seed_seconds: float


@dataclass
class Served:
    size: Size
    cloud: LiveCloud
    seeded: Seeded
    ready_seconds: float
    settle_seconds: float
    seed_seconds: float


def serve_size(size: Size, directory: Path) -> Served:
    data = directory / size.name
    first = start(data, deploy_seconds=0.0, clean_seconds=0.0)
    first.stop()
    began = time.monotonic()
    seeded = asyncio.run(seed_store(DataDir(data).database_url, size))
    seed_seconds = time.monotonic() - began
    began = time.monotonic()
    cloud = launch(data, limit=900)
    ready = time.monotonic() - began
    try:
        settled = settle(cloud.process.pid, limit=600)
    except BaseException:
        cloud.stop()
        raise
    return Served(size, cloud, seeded, ready, settled, seed_seconds)


def run_sizes(sizes: list[Size], count: int, budget: float, directory: Path) -> list[Result]:
    """Every size served at once, seeded and started one after the other, then measured side by side."""
    served: list[Served] = []
    try:
        for size in sizes:
            served.append(serve_size(size, directory))
        conns = [each.cloud.connect("tether") for each in served]
        asked = [requests(conn, each.seeded) for conn, each in zip(conns, served, strict=True)]
        rows: list[dict[str, Row]] = [{} for _ in served]
        for name in asked[0]:
            for found, row in zip(rows, measure([each[name] for each in asked], name, count, budget), strict=True):
                found[name] = row
        memory = [rss_mb(each.cloud.process.pid) for each in served]
        for conn in conns:
            conn.close()
    finally:
        for each in served:
            each.cloud.stop()
    return [Result(each.size, found, each.ready_seconds, each.settle_seconds, rss, each.seed_seconds)
            for each, found, rss in zip(served, rows, memory, strict=True)]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:8.1f}"


def report(results: list[Result]) -> None:
    for result in results:
        size = result.size
        print(f"{size.name}: {size.ports:,} ports, {size.nodes:,} nodes, {size.servers:,} servers; "
              f"seeded in {result.seed_seconds:.1f} s; ready {result.ready_seconds:.2f} s after exec, "
              f"busy {result.settle_seconds:.0f} s more; RSS {result.rss_mb:.0f} MB")
    small, large = results[0], results[-1]
    pair = len(results) > 1
    print(f"{'request':24} {small.size.name + ' p50':>12} {small.size.name + ' p99':>12}"
          + (f" {large.size.name + ' p50':>12} {large.size.name + ' p99':>12} {'ratio':>6}" if pair else ""))
    for name, before in small.rows.items():
        row = large.rows[name]
        columns = [ms(before.quantile(0.5)), ms(before.quantile(0.99))]
        if pair:
            ratio = "-"
            if before.samples and row.samples:
                ratio = f"{row.quantile(0.5) / before.quantile(0.5):6.2f}"  # type: ignore[operator]
            columns += [ms(row.quantile(0.5)), ms(row.quantile(0.99)), f"{ratio:>6}"]
        notes = []
        for seen in (before, row) if pair else (before,):
            if seen.errors:
                notes.append(f"{seen_size(results, seen)}: {seen.errors} failed")
            if seen.stopped:
                notes.append(f"{seen_size(results, seen)}: stopped after {len(seen.samples)} (budget)")
        print(f"{name:24} " + " ".join(f"{column:>12}" for column in columns) + f"  {'; '.join(notes)}")
    if pair:
        print(f"(ms; ratio = {large.size.name} p50 / {small.size.name} p50, target <= {TARGET_RATIO}; "
              f"RSS at the {large.size.name} size {large.rss_mb:.0f} MB, target < 1024 MB)")


def seen_size(results: list[Result], row: Row) -> str:
    return next(result.size.name for result in results if any(seen is row for seen in result.rows.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds at most per row")
    parser.add_argument("--scale", type=int, default=1, help="divide the large size by this")
    parser.add_argument("--sizes", default="small,large")
    args = parser.parse_args()
    sizes = {"small": Size("small", 1_000, 200, 500),
             "large": Size("large", 100_000 // args.scale, 10_000 // args.scale, 50_000 // args.scale)}
    with tempfile.TemporaryDirectory(prefix="tether-list-scale-") as directory:
        results = run_sizes([sizes[name] for name in args.sizes.split(",")], args.requests, args.budget,
                            Path(directory))
    for result in results:
        report([result])
        print(flush=True)
    if len(results) > 1:
        report(results)
    print(f"load average (1, 5, 15 min) at the end: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
