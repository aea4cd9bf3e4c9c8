"""Throughput of a live `tether serve` on SQLite, through openstacksdk.

Prints, measured in one run against one server:
- the floor: authenticated no-op GETs per second (GET /network/v2.0/extensions);
- VM boot -> ACTIVE -> delete -> gone cycles per second at concurrency 1, 8 and 32, with the
  p50/p99 latency of the server create call;
- bare-metal cycles per second with zero deploy and clean time;
and each cycle rate as a ratio of the floor.

The clients are openstacksdk connections, each driving its own cycles one after another. One
openstacksdk cycle costs the client about as much CPU as it costs the server, and a Python
process runs one thread at a time, so the connections are spread over up to --client-processes
processes (as that many users would be), each started and authenticated before the clock starts.

Target on the 2-core machine: >= 50 VM cycles/s at concurrency 8, p99 create < 200 ms.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openstack
import openstack.config
from _live import LiveCloud, live_cloud

POLL = 0.02


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def floor(cloud: LiveCloud, seconds: float, concurrency: int, processes: int) -> float:
    return _run(cloud, "floor", concurrency, processes, {"seconds": seconds})[0]


def cycles(cloud: LiveCloud, concurrency: int, total: int, flavor: str, prefix: str,
           processes: int) -> tuple[float, list[float]]:
    return _run(cloud, "cycles", concurrency, processes, {"total": total, "flavor": flavor, "prefix": prefix})


def _run(cloud: LiveCloud, kind: str, concurrency: int, processes: int,
         job: dict[str, Any]) -> tuple[float, list[float]]:
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
    began = time.perf_counter()
    latencies: list[float] = []
    done = 0
    for _ in workers:
        count, measured = results.get()
        done += count
        latencies.extend(measured)
    elapsed = time.perf_counter() - began
    for worker in workers:
        worker.join()
    return done / elapsed, latencies


def _client(clouds_yaml: str, kind: str, threads: int, job: dict[str, Any], ready: Any, counter: Any,
            results: Any) -> None:
    config = openstack.config.OpenStackConfig(config_files=[clouds_yaml]).get_one("tether")
    connections = [openstack.connection.Connection(config=config) for _ in range(threads)]
    for connection in connections:
        # A password check costs ~0.3 s of argon2, as keystone's bcrypt does: pay it before the clock starts.
        connection.authorize()
        connection.network.get("/extensions")
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

    def cycle_worker(index: int) -> None:
        connection = connections[index]
        while (n := next_cycle()) is not None:
            began = time.perf_counter()
            server = connection.compute.create_server(
                name=f"{job['prefix']}-{n}", flavor_id=flavor_id, image_id=image.id,
                networks=[{"uuid": network.id}])
            created = time.perf_counter() - began
            server = connection.compute.wait_for_server(server, interval=POLL, wait=120)
            connection.compute.delete_server(server)
            connection.compute.wait_for_delete(server, interval=POLL, wait=120)
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
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(cycle_worker if kind == "cycles" else floor_worker, range(threads)))
    results.put((count[0], latencies))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=200, help="VM cycles per concurrency level")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to measure the floor")
    parser.add_argument("--client-processes", type=int, default=4, help="processes the connections are spread over")
    args = parser.parse_args()
    processes = args.client_processes
    with live_cloud() as cloud:
        floor_rate = floor(cloud, args.seconds, 8, processes)
        print(f"floor: authenticated no-op GET      {floor_rate:8.1f} req/s (concurrency 8)")
        for concurrency in (1, 8, 32):
            rate, latencies = cycles(cloud, concurrency, args.cycles, "m1.tiny", f"vm-c{concurrency}", processes)
            print(f"VM cycles, concurrency {concurrency:>2}:        {rate:8.1f} cycles/s"
                  f"  create p50 {statistics.median(latencies) * 1000:6.1f} ms"
                  f"  p99 {percentile(latencies, 0.99) * 1000:6.1f} ms"
                  f"  ({rate / floor_rate:.3f} of the floor)")
        rate, latencies = cycles(cloud, 4, 40, "baremetal", "bm", processes)
        print(f"bare-metal cycles, concurrency 4:  {rate:8.1f} cycles/s"
              f"  create p99 {percentile(latencies, 0.99) * 1000:6.1f} ms  ({rate / floor_rate:.3f} of the floor)")


if __name__ == "__main__":
    main()
