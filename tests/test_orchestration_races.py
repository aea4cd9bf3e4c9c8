"""Stack creates, updates and deletes racing out-of-band server deletes, port deletes and node
undeploys, all through the real API of one `tether serve`: afterwards nothing leaks and no stack
is left in progress."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.live import start
from tests.test_orchestration_api import Heat, check_clean


def _group(count: int, flavor: str) -> dict[str, Any]:
    server = {"type": "OS::Nova::Server", "properties": {"flavor": flavor, "image": "cirros",
                                                         "networks": [{"network": "private"}]}}
    return {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup", "properties": {"count": count, "resource_def": server}}}}


def _settled(heat: Heat, name: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while True:
        answer = heat.request("GET", f"/stacks/{name}", follow_redirects=True)
        status = answer.json()["stack"]["stack_status"] if answer.status_code == 200 else "GONE"
        if not status.endswith("IN_PROGRESS") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_stack_actions_racing_out_of_band_deletes_leave_nothing_behind(tmp_path: Path) -> None:
    cloud = start(tmp_path / "cloud", deploy_seconds=0.3, clean_seconds=0.2)
    errors: list[str] = []
    try:
        heat = Heat(cloud)
        chance = random.Random(7)

        def guarded(action: Any) -> Any:
            def run() -> None:
                try:
                    action()
                except Exception as error:  # a thread's failure must fail the test, not vanish
                    errors.append(f"{action.__name__}: {error!r}")
            return run

        def vms() -> None:
            assert heat.request("POST", "/stacks", json={"stack_name": "vms", "template": _group(3, "m1.tiny")}
                                ).status_code == 201
            _settled(heat, "vms")
            heat.request("PATCH", "/stacks/vms", follow_redirects=False)  # a lookup: answered 302, changes nothing
            stack = heat.request("GET", "/stacks/vms", follow_redirects=True).json()["stack"]
            href = stack["links"][0]["href"]
            assert httpx.patch(href, json={"template": _group(5, "m1.tiny")}, headers=heat.headers,
                               timeout=60).status_code == 202
            _settled(heat, "vms")
            httpx.delete(href, headers=heat.headers, timeout=60)

        def cancelled() -> None:
            created = heat.request("POST", "/stacks", json={"stack_name": "cancelled",
                                                            "template": _group(2, "m1.tiny")})
            assert created.status_code == 201
            href = created.json()["stack"]["links"][0]["href"]
            assert httpx.delete(href, headers=heat.headers, timeout=60).status_code == 204  # supersedes the create

        def metal() -> None:
            assert heat.request("POST", "/stacks", json={"stack_name": "metal", "template": _group(2, "baremetal")}
                                ).status_code == 201
            _settled(heat, "metal")
            href = heat.request("GET", "/stacks/metal", follow_redirects=True).json()["stack"]["links"][0]["href"]
            httpx.patch(href, json={}, headers=heat.headers, timeout=60)  # replaces whatever failed
            _settled(heat, "metal")

        def operator() -> None:
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                servers = heat.compute("/servers")["servers"]
                ports = [p for p in heat.network("/ports")["ports"] if p["name"].endswith("-port-0")]
                choice = chance.random()
                if servers and choice < 0.3:
                    victim = chance.choice(servers)["id"]
                    httpx.delete(f"{cloud.base_url}/compute/v2.1/servers/{victim}", headers=heat.headers, timeout=60)
                elif ports and choice < 0.6:
                    victim = chance.choice(ports)["id"]
                    httpx.delete(f"{cloud.base_url}/network/v2.0/ports/{victim}", headers=heat.headers, timeout=60)
                elif choice < 0.7:
                    active = [n for n in httpx.get(f"{cloud.base_url}/baremetal/v1/nodes?provision_state=active",
                                                   headers={**heat.headers, "X-OpenStack-Ironic-API-Version": "1.78"},
                                                   timeout=60).json()["nodes"]]
                    if active:
                        node = chance.choice(active)["uuid"]
                        httpx.put(f"{cloud.base_url}/baremetal/v1/nodes/{node}/states/provision",
                                  json={"target": "deleted"},
                                  headers={**heat.headers, "X-OpenStack-Ironic-API-Version": "1.78"}, timeout=60)
                time.sleep(0.05)

        threads = [threading.Thread(target=guarded(action)) for action in (vms, cancelled, metal, operator)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert errors == []

        for name in ("vms", "cancelled", "metal"):
            assert not _settled(heat, name).endswith("IN_PROGRESS"), name
        leftover = heat.request("GET", "/stacks").json()["stacks"]
        for stack in leftover:
            httpx.delete(stack["links"][0]["href"], headers=heat.headers, timeout=60)
        for stack in leftover:
            assert _settled(heat, stack["id"]) == "DELETE_COMPLETE", stack["stack_name"]
        listed = heat.request("GET", "/stacks?show_nested=true").json()["stacks"]
        assert [s for s in listed if s["stack_status"].endswith("IN_PROGRESS")] == []
        assert heat.compute("/servers")["servers"] == []
        assert [p["name"] for p in heat.network("/ports")["ports"] if p["name"].endswith("-port-0")] == []
        # the reconcilers' next pass is not needed: the stack actions themselves left nothing behind
        check_clean(cloud)
    finally:
        cloud.stop()
