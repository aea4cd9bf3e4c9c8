"""A 100-server stack against the same 100 servers made directly, on one live `tether serve`.

Prints, measured in one run against one server (SQLite):
- direct: the servers created through the compute API (POST /servers, 8 at a time, as a script
  with a thread pool does), waited for until every one is ACTIVE, then deleted and waited for
  until every one is gone;
- stack: one OS::Heat::ResourceGroup of the same servers, created and waited for until
  CREATE_COMPLETE, then deleted and waited for until DELETE_COMPLETE;
and the ratio stack / direct, end to end and for each half. Target: the stack path takes no more
than 1.5x the direct path.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _live import live_cloud

POLL = 0.05


def _session(cloud: Any) -> Any:
    connection = cloud.connect()
    connection.authorize()
    return connection


def direct(connection: Any, count: int, flavor: str, image: str, network: str) -> tuple[float, float]:
    compute = connection.compute
    body = {"flavorRef": flavor, "imageRef": image, "networks": [{"uuid": network}]}
    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda n: compute.post("/servers", json={"server": {**body, "name": f"direct-{n}"}})
                            .json()["server"]["id"], range(count)))
    while True:
        servers = compute.get("/servers/detail?name=direct-").json()["servers"]
        statuses = [server["status"] for server in servers]
        if "ERROR" in statuses:
            raise SystemExit(f"a direct server failed: {[s['fault'] for s in servers if s['status'] == 'ERROR'][:1]}")
        if statuses.count("ACTIVE") == count:
            break
        time.sleep(POLL)
    created = time.perf_counter() - started
    started = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda server_id: compute.delete(f"/servers/{server_id}"), ids))
    while compute.get("/servers?name=direct-").json()["servers"]:
        time.sleep(POLL)
    return created, time.perf_counter() - started


def stacked(connection: Any, count: int, flavor: str, image: str, network: str) -> tuple[float, float]:
    heat = connection.orchestration
    template = {"heat_template_version": "2018-08-31", "resources": {"fleet": {
        "type": "OS::Heat::ResourceGroup", "properties": {"count": count, "resource_def": {
            "type": "OS::Nova::Server", "properties": {"name": "stacked-%index%", "flavor": flavor,
                                                       "image": image, "networks": [{"network": network}]}}}}}}
    started = time.perf_counter()
    stack_id = heat.post("/stacks", json={"stack_name": "bench", "template": template}).json()["stack"]["id"]
    status = _wait(heat, stack_id)
    if status != "CREATE_COMPLETE":
        raise SystemExit(f"the stack ended {status}")
    created = time.perf_counter() - started
    started = time.perf_counter()
    heat.delete(f"/stacks/bench/{stack_id}")
    status = _wait(heat, stack_id)
    if status != "DELETE_COMPLETE":
        raise SystemExit(f"the stack delete ended {status}")
    return created, time.perf_counter() - started


def _wait(heat: Any, stack_id: str) -> str:
    while True:
        stack = heat.get(f"/stacks/bench/{stack_id}?resolve_outputs=False").json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return str(stack["stack_status"])
        time.sleep(POLL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=100)
    args = parser.parse_args()
    with live_cloud() as cloud:
        connection = _session(cloud)
        flavor_id = next(f["id"] for f in connection.compute.get("/flavors").json()["flavors"]
                         if f["name"] == "m1.tiny")
        image = connection.image.get("/images?name=cirros").json()["images"][0]["id"]
        network = connection.network.get("/networks?name=private").json()["networks"][0]["id"]
        direct_times = direct(connection, args.servers, flavor_id, image, network)
        stack_times = stacked(connection, args.servers, flavor_id, image, network)
    total_direct, total_stack = sum(direct_times), sum(stack_times)
    print(f"{args.servers} VMs, one tether serve on SQLite")
    print(f"direct (compute API, 8 at a time): create {direct_times[0]:6.2f} s  delete {direct_times[1]:6.2f} s  "
          f"total {total_direct:6.2f} s")
    print(f"stack (one ResourceGroup):          create {stack_times[0]:6.2f} s  delete {stack_times[1]:6.2f} s  "
          f"total {total_stack:6.2f} s")
    print(f"ratio stack/direct: create {stack_times[0] / direct_times[0]:.2f}x  delete "
          f"{stack_times[1] / direct_times[1]:.2f}x  total {total_stack / total_direct:.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
