"""Throughput of a live `tether serve` on SQLite, through openstacksdk.

Prints, measured in one run against one server:
- the floor: authenticated no-op GETs per second (GET /network/v2.0/extensions);
- VM boot -> ACTIVE -> delete -> gone cycles per second at concurrency 1, 8 and 32, with the
  p50/p99 latency of the server create call, twice: through openstacksdk's resources and waiters
  (``create_server``, ``wait_for_server``, ...), as a user's script drives it, and through
  openstacksdk's authenticated session with the same requests (``compute.post("/servers")``, ...);
- bare-metal cycles per second with zero deploy and clean time;
and each cycle rate as a ratio of the floor, and the CPU time the server and the clients spent on
each operation (the machine has two cores: together they bound the rate).

The clients are openstacksdk connections, each driving its own cycles one after another. Building
openstacksdk's Server resources costs the client about twice the CPU a cycle costs the server (the
figures it prints show it), which on two cores caps the first rate; the session rate shows what
the server itself sustains. A Python process runs one thread at a time, so the connections are
spread over up to --client-processes processes (as that many users would be), each started and
authenticated before the clock starts.

With ``--peer DIR`` (another build's checkout, with its own .venv), both builds serve at once and each
figure is measured on one and then on the other, ``--rounds`` times, the order alternating; the medians
and the median ratio of the pairs end the output. That is the way to tell whether a change slowed the
server: one run's figures move by 20% and more on a shared machine, a pair measured together far less.

Target on the 2-core machine: >= 50 VM cycles/s at concurrency 8, p99 create < 200 ms.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openstack
import openstack.config
from _live import LiveCloud, live_cloud

POLL = 0.02


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@dataclass
class Measured:
    rate: float  # operations (requests or cycles) per second
    latencies: list[float]  # of each server create, in seconds
    client_cpu: float  # CPU seconds the openstacksdk clients spent per operation
    server_cpu: float  # CPU seconds the server spent per operation
    requests: float  # HTTP requests per operation (polls included)


def server_cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def floor(cloud: LiveCloud, seconds: float, concurrency: int, processes: int) -> Measured:
    return _run(cloud, "floor", concurrency, processes, {"seconds": seconds})


def cycles(cloud: LiveCloud, concurrency: int, total: int, flavor: str, prefix: str, processes: int,
           layer: str = "resources") -> Measured:
    job = {"total": total, "flavor": flavor, "prefix": prefix, "layer": layer}
    return _run(cloud, "cycles", concurrency, processes, job)


def _run(cloud: LiveCloud, kind: str, concurrency: int, processes: int, job: dict[str, Any]) -> Measured:
    processes = max(1, min(processes, concurrency))
    shares = [concurrency // processes + (1 if i < concurrency % processes else 0) for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(processes + 1)
    counter = context.Value("i", 0)
    results = context.Queue()
    workers = [context.Process(target=_client, args=(str(cloud.clouds_yaml), kind, threads, job, ready, counter,
                                                      results))
               for threads in shares]
    for worker in workers:
        worker.start()
    ready.wait()
    began, server_began = time.perf_counter(), server_cpu_seconds(cloud.process.pid)
    latencies: list[float] = []
    done = 0
    client_cpu = 0.0
    sent = 0
    for _ in workers:
        count, measured, cpu, requests = results.get()
        done += count
        client_cpu += cpu
        sent += requests
        latencies.extend(measured)
    elapsed = time.perf_counter() - began
    server = server_cpu_seconds(cloud.process.pid) - server_began
    for worker in workers:
        worker.join()
    return Measured(done / elapsed, latencies, client_cpu / max(done, 1), server / max(done, 1),
                    sent / max(done, 1))


def _client(clouds_yaml: str, kind: str, threads: int, job: dict[str, Any], ready: Any, counter: Any,
            results: Any) -> None:
    config = openstack.config.OpenStackConfig(config_files=[clouds_yaml]).get_one("tether")
    connections = [openstack.connection.Connection(config=config) for _ in range(threads)]
    sent = [0]
    sent_lock = threading.Lock()

    def tally(response: Any, *args: Any, **kwargs: Any) -> None:
        with sent_lock:
            sent[0] += 1

    for connection in connections:
        # A password check costs ~0.3 s of argon2, as keystone's bcrypt does: pay it before the clock starts.
        connection.authorize()
        connection.network.get("/extensions")
        connection.session.session.hooks["response"].append(tally)
    first = connections[0]
    if kind == "cycles":
        image = first.image.find_image("cirros")
        network = first.network.find_network("private")
        flavor_id = first.compute.find_flavor(job["flavor"]).id
    latencies: list[float] = []
    lock = threading.Lock()
    count = [0]

    def next_cycle() -> int | None:
        with counter.get_lock():
            n = counter.value
            if n >= job["total"]:
                return None
            counter.value = n + 1
            return n

    def resource_cycle(connection: Any, name: str) -> float:
        """What a user's script does: openstacksdk's Server resources and its waiters."""
        began = time.perf_counter()
        server = connection.compute.create_server(name=name, flavor_id=flavor_id, image_id=image.id,
                                                  networks=[{"uuid": network.id}])
        created = time.perf_counter() - began
        server = connection.compute.wait_for_server(server, interval=POLL, wait=120)
        connection.compute.delete_server(server)
        connection.compute.wait_for_delete(server, interval=POLL, wait=120)
        return created

    def session_cycle(connection: Any, name: str) -> float:
        """The same requests through openstacksdk's authenticated session, without building resources."""
        compute = connection.compute
        began = time.perf_counter()
        response = compute.post("/servers", json={"server": {
            "name": name, "flavorRef": flavor_id, "imageRef": image.id, "networks": [{"uuid": network.id}]}})
        created = time.perf_counter() - began
        assert response.status_code == 202, response.text
        server_id = response.json()["server"]["id"]
        while (status := compute.get(f"/servers/{server_id}").json()["server"]["status"]) != "ACTIVE":
            assert status == "BUILD", status
            time.sleep(POLL)
        compute.delete(f"/servers/{server_id}")
        while compute.get(f"/servers/{server_id}", raise_exc=False).status_code != 404:
            time.sleep(POLL)
        return created

    def cycle_worker(index: int) -> None:
        connection = connections[index]
        cycle = resource_cycle if job["layer"] == "resources" else session_cycle
        while (n := next_cycle()) is not None:
            created = cycle(connection, f"{job['prefix']}-{n}")
            with lock:
                latencies.append(created)
                count[0] += 1

    def floor_worker(index: int) -> None:
        stop = time.perf_counter() + job["seconds"]
        while time.perf_counter() < stop:
            connections[index].network.get("/extensions")
            with lock:
                count[0] += 1

    ready.wait()
    sent[0] = 0
    cpu = time.process_time()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(cycle_worker if kind == "cycles" else floor_worker, range(threads)))
    results.put((count[0], latencies, time.process_time() - cpu, sent[0]))


@dataclass
class Figure:
    """One printed rate of one build, with its line."""
    rate: float
    line: str


# Each figure's name, and for a VM figure the layer and the concurrency it runs at.
FIGURES: dict[str, tuple[str, int] | None] = {
    "floor": None,
    **{f"VM {layer} c{concurrency}": (layer, concurrency)
       for layer in ("resources", "session") for concurrency in (1, 8, 32)},
    "bare metal c4": None,
}


def measure(cloud: LiveCloud, name: str, args: argparse.Namespace, floor_rate: float) -> Figure:
    """One of FIGURES on one server; ``floor_rate`` is that server's floor, for the ratio each line shows."""
    processes = args.client_processes
    if name == "floor":
        base = floor(cloud, args.seconds, 8, processes)
        return Figure(base.rate, f"floor: authenticated no-op GET      {base.rate:8.1f} req/s (concurrency 8)"
                                 f"  server CPU {base.server_cpu * 1000:5.2f} ms/request"
                                 f"  client CPU {base.client_cpu * 1000:5.2f} ms")
    if name == "bare metal c4":
        run = cycles(cloud, 4, 40, "baremetal", "bm", processes)
        return Figure(run.rate, f"bare-metal cycles, concurrency 4:  {run.rate:8.1f} cycles/s"
                                f"  create p99 {percentile(run.latencies, 0.99) * 1000:6.1f} ms"
                                f"  ({run.rate / floor_rate:.3f} of the floor)"
                                f"  CPU/cycle: server {run.server_cpu * 1000:5.1f} ms,"
                                f" clients {run.client_cpu * 1000:5.1f} ms")
    vm = FIGURES[name]
    assert vm is not None, name
    layer, concurrency = vm
    run = cycles(cloud, concurrency, args.cycles, "m1.tiny", f"vm-{layer}-c{concurrency}-{time.monotonic_ns()}",
                 processes, layer)
    return Figure(run.rate, f"VM cycles ({layer:>9}), concurrency {concurrency:>2}: {run.rate:6.1f} cycles/s"
                            f"  create p50 {statistics.median(run.latencies) * 1000:6.1f} ms"
                            f"  p99 {percentile(run.latencies, 0.99) * 1000:6.1f} ms"
                            f"  ({run.rate / floor_rate:.3f} of the floor)"
                            f"  CPU/cycle: server {run.server_cpu * 1000:5.1f} ms,"
                            f" clients {run.client_cpu * 1000:5.1f} ms"
                            f"  {run.requests:4.1f} requests/cycle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=200, help="VM cycles per concurrency level")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to measure the floor")
    parser.add_argument("--client-processes", type=int, default=4, help="processes the connections are spread over")
    parser.add_argument("--peer", type=Path, default=None,
                        help="another build's checkout, with its own .venv: measured in turn with this one")
    parser.add_argument("--rounds", type=int, default=3, help="with --peer: times each figure is measured")
    parser.add_argument("--figure", action="append", choices=list(FIGURES), default=None,
                        help="measure only this figure (repeatable; the floor is always measured, for the ratios)")
    args = parser.parse_args()
    names = ["floor", *(name for name in FIGURES if name != "floor" and name in (args.figure or FIGURES))]
    builds = {"this build": sys.executable}
    if args.peer is not None:
        peer_python = args.peer / ".venv" / "bin" / "python"
        if not peer_python.exists():
            parser.error(f"{peer_python} does not exist: make the peer's venv (pip install -e '.[test]' in it)")
        builds["peer"] = str(peer_python)
    rounds = args.rounds if args.peer is not None else 1
    ratios: dict[str, list[float]] = {name: [] for name in names}
    rates: dict[str, dict[str, list[float]]] = {build: {name: [] for name in names} for build in builds}
    with ExitStack() as stack:
        # Both servers are up at once, the idle one costing nothing: each figure is measured on one and
        # then at once on the other, the order alternating, so that a machine whose speed drifts over
        # minutes (a shared host's does, by 20% and more) moves both of a pair alike.
        clouds = {build: stack.enter_context(live_cloud(python=python)) for build, python in builds.items()}
        floors = dict.fromkeys(builds, 0.0)
        for turn in range(rounds):
            for index, name in enumerate(names):
                order = list(builds) if (turn + index) % 2 == 0 else list(reversed(builds))
                for build in order:
                    figure = measure(clouds[build], name, args, floors[build])
                    if name == "floor":
                        floors[build] = figure.rate
                    rates[build][name].append(figure.rate)
                    prefix = f"[{build}, round {turn + 1}] " if args.peer is not None else ""
                    print(prefix + figure.line, flush=True)
                if args.peer is not None:
                    ratios[name].append(rates["this build"][name][-1] / rates["peer"][name][-1])
    if args.peer is None:
        return
    print(f"\nover {rounds} rounds: the medians of this build and of the peer ({args.peer}), and the median"
          f" of the ratio of each pair measured together (the spread of those ratios after it)")
    for name in names:
        ours = statistics.median(rates["this build"][name])
        theirs = statistics.median(rates["peer"][name])
        spread = f"{min(ratios[name]):.2f}-{max(ratios[name]):.2f}"
        print(f"{name:<20} {ours:8.1f} {theirs:8.1f}  ratio {statistics.median(ratios[name]):6.3f}  ({spread})")


if __name__ == "__main__":
    main()
