"""Throughput of a live `tether serve` on SQLite, through openstacksdk.

Prints, measured in one run against one server:
- the floor: authenticated no-op GETs per second (GET /network/v2.0/extensions);
- VM boot -> ACTIVE -> delete -> gone cycles per second at concurrency 1, 8 and 32, with the
  p50/p99 latency of the server create call;
- bare-metal cycles per second with zero deploy and clean time;
and each cycle rate as a ratio of the floor.

Target on the 2-core machine: >= 50 VM cycles/s at concurrency 8, p99 create < 200 ms.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _live import live_cloud

POLL = 0.02


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def floor(cloud: Any, seconds: float, concurrency: int) -> float:
    connections = [cloud.connect() for _ in range(concurrency)]
    for connection in connections:
        connection.network.get("/extensions")
    stop = time.perf_counter() + seconds
    counts = [0] * concurrency

    def worker(index: int) -> None:
        while time.perf_counter() < stop:
            connections[index].network.get("/extensions")
            counts[index] += 1

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(worker, range(concurrency)))
    return sum(counts) / seconds


def cycles(cloud: Any, concurrency: int, total: int, flavor: str, prefix: str) -> tuple[float, list[float]]:
    connections = [cloud.connect() for _ in range(concurrency)]
    for connection in connections:
        # A password check costs ~0.3 s of argon2, as keystone's bcrypt does: pay it before the clock starts.
        connection.authorize()
    first = connections[0]
    image = first.image.find_image("cirros")
    network = first.network.find_network("private")
    flavor_id = first.compute.find_flavor(flavor).id
    create_latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(total))

    def worker(index: int) -> None:
        connection = connections[index]
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                return
            began = time.perf_counter()
            server = connection.compute.create_server(
                name=f"{prefix}-{n}", flavor_id=flavor_id, image_id=image.id, networks=[{"uuid": network.id}])
            with lock:
                create_latencies.append(time.perf_counter() - began)
            server = connection.compute.wait_for_server(server, interval=POLL, wait=120)
            connection.compute.delete_server(server)
            connection.compute.wait_for_delete(server, interval=POLL, wait=120)

    began = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(worker, range(concurrency)))
    return total / (time.perf_counter() - began), create_latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=200, help="VM cycles per concurrency level")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to measure the floor")
    args = parser.parse_args()
    with live_cloud() as cloud:
        floor_rate = floor(cloud, args.seconds, 8)
        print(f"floor: authenticated no-op GET      {floor_rate:8.1f} req/s (concurrency 8)")
        for concurrency in (1, 8, 32):
            rate, latencies = cycles(cloud, concurrency, args.cycles, "m1.tiny", f"vm-c{concurrency}")
            print(f"VM cycles, concurrency {concurrency:>2}:        {rate:8.1f} cycles/s"
                  f"  create p50 {statistics.median(latencies) * 1000:6.1f} ms"
                  f"  p99 {percentile(latencies, 0.99) * 1000:6.1f} ms"
                  f"  ({rate / floor_rate:.3f} of the floor)")
        rate, latencies = cycles(cloud, 4, 40, "baremetal", "bm")
        print(f"bare-metal cycles, concurrency 4:  {rate:8.1f} cycles/s"
              f"  create p99 {percentile(latencies, 0.99) * 1000:6.1f} ms  ({rate / floor_rate:.3f} of the floor)")


if __name__ == "__main__":
    main()
