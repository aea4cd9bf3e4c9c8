"""Server actions, updates, metadata and tags on the live server, as a user meets them: the real `openstack` CLI
(a subprocess), openstacksdk and raw HTTP where the CLI cannot reach (microversions, error bodies)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.live import LiveCloud
from tests.test_api_compute import Nova, fault_of, issue_token


def unique(prefix: str) -> str:
    return f"act-{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def admin(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "admin", "admin", "admin"))


@pytest.fixture(scope="module")
def demo(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "demo", "demo", "demo"))


@pytest.fixture(scope="module")
def seeded(sdk) -> dict[str, str]:
    image = sdk.image.find_image("cirros")
    network = sdk.network.find_network("private")
    assert image is not None and network is not None
    return {"image": image.id, "network": network.id}


@pytest.fixture(scope="module")
def made(admin) -> Iterator[list[str]]:
    servers: list[str] = []
    yield servers
    for server_id in servers:
        admin.call("POST", f"/servers/{server_id}/action", json={"unlock": None})
        admin.delete(f"/servers/{server_id}")
    for server_id in servers:
        admin.wait_gone(server_id)


def boot_with_cli(live_cloud: LiveCloud, made: list[str], flavor: str = "m1.tiny", cloud: str = "tether") -> str:
    name = unique(flavor.replace(".", ""))
    created = live_cloud.cli("server", "create", "--flavor", flavor, "--image", "cirros", "--nic", "net-id=private",
                             "--wait", name, "-f", "value", "-c", "id", cloud=cloud)
    made.append(created.stdout.strip())
    return made[-1]


def shown(live_cloud: LiveCloud, server: str, *columns: str, cloud: str = "tether") -> list[str]:
    args = [arg for column in columns for arg in ("-c", column)]
    return live_cloud.cli("server", "show", server, "-f", "value", *args, cloud=cloud).stdout.split("\n")[:-1]


def settled(nova: Nova, server_id: str, status: str, timeout: float = 60) -> dict[str, Any]:
    return nova.wait(server_id, (status,), timeout)


def actions_of(nova: Nova, server_id: str) -> list[dict[str, Any]]:
    response = nova.get(f"/servers/{server_id}/os-instance-actions")
    assert response.status_code == 200, response.text
    return response.json()["instanceActions"]


def events_of(nova: Nova, server_id: str, request_id: str) -> list[dict[str, Any]]:
    response = nova.get(f"/servers/{server_id}/os-instance-actions/{request_id}")
    assert response.status_code == 200, response.text
    return response.json()["instanceAction"]["events"]


# -- power ------------------------------------------------------------------------------------


def test_the_cli_drives_power_actions_through_nova_s_states(live_cloud, admin, made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    steps = [
        (("stop",), "SHUTOFF", 4), (("start",), "ACTIVE", 1), (("reboot", "--wait"), "ACTIVE", 1),
        (("reboot", "--hard", "--wait"), "ACTIVE", 1), (("pause",), "PAUSED", 3), (("unpause",), "ACTIVE", 1),
        (("suspend",), "SUSPENDED", 7), (("resume",), "ACTIVE", 1),
    ]
    for command, status, power in steps:
        live_cloud.cli("server", *command, server_id)
        server = settled(admin, server_id, status)
        assert server["OS-EXT-STS:power_state"] == power, command
    live_cloud.cli("server", "stop", server_id)
    settled(admin, server_id, "SHUTOFF")
    again = live_cloud.cli("server", "stop", server_id, check=False)
    assert again.returncode != 0
    assert f"Cannot 'stop' instance {server_id} while it is in vm_state stopped" in again.stderr
    refused = admin.post(f"/servers/{server_id}/action", {"pause": None})
    assert fault_of(refused, "conflictingRequest", 409) == \
        f"Cannot 'pause' instance {server_id} while it is in vm_state stopped"
    listed = live_cloud.cli("server", "event", "list", server_id, "-f", "value", "-c", "Action").stdout.split()
    assert listed == ["stop", "resume", "suspend", "unpause", "pause", "reboot", "reboot", "start", "stop", "create"]
    for action in actions_of(admin, server_id)[:-1]:
        events = events_of(admin, server_id, action["request_id"])
        assert [event["result"] for event in events] == ["Success"], action
        assert events[0]["event"] == f"compute_{action['action']}_instance"


def test_a_locked_server_refuses_its_owner_until_unlocked(live_cloud, admin, demo, made) -> None:
    server_id = boot_with_cli(live_cloud, made, cloud="tether-demo")
    live_cloud.cli("server", "lock", "--reason", "maintenance window", server_id, cloud="tether-demo")
    assert shown(live_cloud, server_id, "locked", "locked_reason", cloud="tether-demo") == \
        ["True", "maintenance window"]
    stop = live_cloud.cli("server", "stop", server_id, cloud="tether-demo", check=False)
    assert stop.returncode != 0 and f"Instance {server_id} is locked" in stop.stderr
    assert fault_of(demo.delete(f"/servers/{server_id}"), "conflictingRequest", 409) == \
        f"Instance {server_id} is locked"
    listed = demo.get("/servers/detail", params={"locked": "true"}).json()["servers"]
    assert server_id in {server["id"] for server in listed}
    # an admin is not held back by a lock, and an admin's lock is lifted only by an admin
    live_cloud.cli("server", "stop", server_id)
    settled(admin, server_id, "SHUTOFF")
    live_cloud.cli("server", "unlock", server_id, cloud="tether-demo")
    live_cloud.cli("server", "lock", server_id)
    refused = demo.post(f"/servers/{server_id}/action", {"unlock": None})
    assert fault_of(refused, "forbidden", 403) == \
        "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be performed."
    live_cloud.cli("server", "unlock", server_id)
    live_cloud.cli("server", "start", server_id, cloud="tether-demo")
    server = settled(admin, server_id, "ACTIVE")
    assert (server["locked"], server["locked_reason"]) == (False, None)
    actions = [action["action"] for action in actions_of(admin, server_id)]
    assert actions[:5] == ["start", "unlock", "lock", "unlock", "stop"]


# -- rebuild ------------------------------------------------------------------------------------


def test_rebuild_of_a_vm_renames_it_and_replaces_its_metadata(live_cloud, admin, made, seeded) -> None:
    server_id = boot_with_cli(live_cloud, made)
    new_name = unique("rebuilt")
    live_cloud.cli("server", "rebuild", "--image", "cirros", "--name", new_name, "--property", "rebuilt=yes",
                   "--wait", server_id)
    server = settled(admin, server_id, "ACTIVE")
    assert (server["name"], server["metadata"], server["image"]["id"]) == (new_name, {"rebuilt": "yes"},
                                                                             seeded["image"])
    bad = admin.post(f"/servers/{server_id}/action", {"rebuild": {"imageRef": str(uuid.uuid4())}})
    assert fault_of(bad, "badRequest", 400) == "Cannot find image for rebuild"
    rebuilt = [a for a in actions_of(admin, server_id) if a["action"] == "rebuild"]
    assert len(rebuilt) == 1


def test_rebuild_of_a_stopped_vm_leaves_it_stopped(admin, made, seeded) -> None:
    server_id = admin.boot(unique("stopped"), seeded)
    made.append(server_id)
    settled(admin, server_id, "ACTIVE")
    assert admin.post(f"/servers/{server_id}/action", {"os-stop": None}).status_code == 202
    settled(admin, server_id, "SHUTOFF")
    response = admin.post(f"/servers/{server_id}/action", {"rebuild": {"imageRef": seeded["image"]}})
    assert response.status_code == 202, response.text
    assert response.json()["server"]["status"] == "REBUILD" and response.json()["server"]["adminPass"]
    server = settled(admin, server_id, "SHUTOFF")
    assert server["OS-EXT-STS:power_state"] == 4


def test_rebuild_of_a_bare_metal_server_redeploys_the_same_node_and_keeps_its_ports(live_cloud, admin, sdk,
                                                                                      made) -> None:
    server_id = boot_with_cli(live_cloud, made, flavor="baremetal")
    before = admin.get(f"/servers/{server_id}").json()["server"]
    ports = sorted((p.id, p.mac_address, p.fixed_ips[0]["ip_address"]) for p in sdk.network.ports(device_id=server_id))
    assert ports
    live_cloud.cli("server", "rebuild", "--image", "cirros", "--wait", server_id)
    after = settled(admin, server_id, "ACTIVE")
    assert after["OS-EXT-SRV-ATTR:hypervisor_hostname"] == before["OS-EXT-SRV-ATTR:hypervisor_hostname"]
    assert after["addresses"] == before["addresses"]
    assert sorted((p.id, p.mac_address, p.fixed_ips[0]["ip_address"])
                  for p in sdk.network.ports(device_id=server_id)) == ports
    node = sdk.baremetal.get_node(after["OS-EXT-SRV-ATTR:hypervisor_hostname"])
    assert (node.provision_state, node.instance_id) == ("active", server_id)
    assert sorted(sdk.baremetal.list_node_vifs(node)) == [port[0] for port in ports]
    rebuild = next(a for a in actions_of(admin, server_id) if a["action"] == "rebuild")
    assert [e["result"] for e in events_of(admin, server_id, rebuild["request_id"])] == ["Success"]


# -- resize -----------------------------------------------------------------------------------------


def test_resize_waits_for_the_user_to_confirm_or_revert(live_cloud, admin, made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    live_cloud.cli("server", "resize", "--flavor", "m1.small", "--wait", server_id)
    assert shown(live_cloud, server_id, "status") == ["VERIFY_RESIZE"]
    assert settled(admin, server_id, "VERIFY_RESIZE")["flavor"]["original_name"] == "m1.small"
    live_cloud.cli("server", "resize", "revert", server_id)
    assert settled(admin, server_id, "ACTIVE")["flavor"]["original_name"] == "m1.tiny"
    live_cloud.cli("server", "resize", "--flavor", "m1.small", "--wait", server_id)
    live_cloud.cli("server", "resize", "confirm", server_id)
    server = settled(admin, server_id, "ACTIVE")
    assert (server["flavor"]["original_name"], server["OS-EXT-STS:power_state"]) == ("m1.small", 1)
    same = admin.post(f"/servers/{server_id}/action", {"resize": {"flavorRef": "2"}})
    assert fault_of(same, "badRequest", 400) == "When resizing, instances must change flavor!"
    confirm = admin.post(f"/servers/{server_id}/action", {"confirmResize": None})
    assert fault_of(confirm, "conflictingRequest", 409) == \
        f"Cannot 'confirmResize' instance {server_id} while it is in vm_state active"
    actions = [a["action"] for a in actions_of(admin, server_id)]
    assert actions[:4] == ["confirmResize", "resize", "revertResize", "resize"]


def test_a_resize_no_host_can_take_fails_at_scheduling_and_leaves_the_server_as_it_was(live_cloud, admin,
                                                                                         made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    # more disk than any seeded hypervisor has (4000 GB): only the scheduler can refuse it, not a quota
    huge = admin.post("/flavors", {"flavor": {"name": unique("huge"), "ram": 512, "vcpus": 1, "disk": 5000}})
    assert huge.status_code == 200, huge.text
    huge_id = huge.json()["flavor"]["id"]
    try:
        live_cloud.cli("server", "resize", "--flavor", huge_id, server_id)
        resize = next(a for a in actions_of(admin, server_id) if a["action"] == "resize")
        deadline = time.monotonic() + 30
        events = events_of(admin, server_id, resize["request_id"])
        while any(e["result"] is None for e in events):
            assert time.monotonic() < deadline
            time.sleep(0.05)
            events = events_of(admin, server_id, resize["request_id"])
        assert sorted(e["event"] for e in events) == ["cold_migrate", "conductor_migrate_server"]
        assert {(e["result"], e["details"]) for e in events} == \
            {("Error", "No valid host was found. No valid host found for resize")}
        server = settled(admin, server_id, "ACTIVE")
        assert (server["flavor"]["original_name"], server["OS-EXT-STS:task_state"]) == ("m1.tiny", None)
        # nova records the scheduler's fault, and shows faults only of ERROR and DELETED servers
        assert "fault" not in server
        assert shown(live_cloud, server_id, "status") == ["ACTIVE"]
        # the server is not stuck: a resize that fits still goes through
        live_cloud.cli("server", "resize", "--flavor", "m1.small", "--wait", server_id)
        assert settled(admin, server_id, "VERIFY_RESIZE")["flavor"]["original_name"] == "m1.small"
    finally:
        admin.delete(f"/flavors/{huge_id}")


def test_a_bare_metal_server_cannot_be_resized_and_stays_as_it_was(admin, made, seeded) -> None:
    server_id = admin.boot(unique("bm"), seeded, flavorRef="3")
    made.append(server_id)
    settled(admin, server_id, "ACTIVE")
    assert admin.post(f"/servers/{server_id}/action", {"resize": {"flavorRef": "2"}}).status_code == 202
    resize = next(a for a in actions_of(admin, server_id) if a["action"] == "resize")
    deadline = time.monotonic() + 30
    while (events := events_of(admin, server_id, resize["request_id"]))[0]["result"] is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert events[0]["result"] == "Error"
    assert events[0]["details"] == "Resizing is not supported by the ironic driver."
    server = settled(admin, server_id, "ACTIVE")
    assert server["flavor"]["original_name"] == "baremetal"


# -- rescue, snapshots, consoles, password ---------------------------------------------------------


def test_rescue_and_unrescue(live_cloud, admin, made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    rescued = live_cloud.cli("server", "rescue", server_id)
    assert rescued.returncode == 0
    settled(admin, server_id, "RESCUE")
    live_cloud.cli("server", "unrescue", server_id)
    assert settled(admin, server_id, "ACTIVE")["OS-EXT-STS:power_state"] == 1
    log = live_cloud.cli("console", "log", "show", server_id).stdout
    assert "booting rescue image" in log and "booting own disk" in log


def test_a_snapshot_is_an_image_in_the_image_service(live_cloud, admin, sdk, made, seeded) -> None:
    server_id = boot_with_cli(live_cloud, made)
    name = unique("snap")
    live_cloud.cli("server", "image", "create", "--name", name, "--wait", server_id)
    image = sdk.image.find_image(name)
    try:
        assert image is not None and image.status == "active" and image.size > 0
        assert (image.properties["image_type"], image.instance_uuid,
                image.properties["base_image_ref"]) == ("snapshot", server_id, seeded["image"])
        old = admin.post(f"/servers/{server_id}/action", {"createImage": {"name": unique("old")}}, "2.44")
        assert old.status_code == 202 and old.headers["Location"].rsplit("/", 1)[-1]
        sdk.image.delete_image(old.headers["Location"].rsplit("/", 1)[-1])
        settled(admin, server_id, "ACTIVE")
        assert admin.post(f"/servers/{server_id}/action", {"os-stop": None}).status_code == 202
        settled(admin, server_id, "SHUTOFF")
        assert admin.post(f"/servers/{server_id}/action", {"rescue": None}).status_code == 200
        settled(admin, server_id, "RESCUE")
        refused = admin.post(f"/servers/{server_id}/action", {"createImage": {"name": "never"}})
        assert fault_of(refused, "conflictingRequest", 409) == \
            f"Cannot 'createImage' instance {server_id} while it is in vm_state rescued"
        assert sdk.image.find_image("never") is None  # no partial change
    finally:
        if image is not None:
            sdk.image.delete_image(image)


def test_console_log_and_console_url(live_cloud, admin, made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    log = live_cloud.cli("console", "log", "show", "--lines", "2", server_id).stdout
    assert log.strip().splitlines()[-1] == "cirros login:"
    url = live_cloud.cli("console", "url", "show", server_id, "-f", "value", "-c", "url").stdout.strip()
    assert url.startswith(live_cloud.base_url)
    page = httpx.get(url, timeout=30)
    assert page.status_code == 200 and server_id in page.text
    assert httpx.get(url.replace(server_id, str(uuid.uuid4())), timeout=30).status_code == 404
    spice = admin.post(f"/servers/{server_id}/remote-consoles",
                       {"remote_console": {"protocol": "spice", "type": "spice-html5"}})
    assert fault_of(spice, "badRequest", 400) == "Unavailable console type spice-html5."
    old = admin.post(f"/servers/{server_id}/action", {"os-getVNCConsole": {"type": "novnc"}}, "2.1")
    assert old.status_code == 200 and old.json()["console"]["url"].startswith(live_cloud.base_url)


def test_a_password_change_is_declined_as_nova_declines_it_without_driver_support(admin, made, seeded) -> None:
    server_id = admin.boot(unique("pw"), seeded)
    made.append(server_id)
    settled(admin, server_id, "ACTIVE")
    response = admin.post(f"/servers/{server_id}/action", {"changePassword": {"adminPass": "s3cret"}})
    assert fault_of(response, "notImplemented", 501) == "Unable to set password on instance"
    assert actions_of(admin, server_id)[0]["action"] == "changePassword"


# -- update, metadata, tags -------------------------------------------------------------------------


def test_server_set_and_unset_change_name_description_properties_and_tags(live_cloud, admin, made) -> None:
    server_id = boot_with_cli(live_cloud, made)
    name = unique("renamed")
    live_cloud.cli("server", "set", "--name", name, "--description", "a web server", "--property", "role=web",
                   "--property", "tier=front", "--tag", "blue", "--tag", "green", server_id)
    server = admin.get(f"/servers/{server_id}").json()["server"]
    assert (server["name"], server["description"], server["metadata"], sorted(server["tags"])) == \
        (name, "a web server", {"role": "web", "tier": "front"}, ["blue", "green"])
    live_cloud.cli("server", "unset", "--property", "tier", "--tag", "green", server_id)
    server = admin.get(f"/servers/{server_id}").json()["server"]
    assert (server["metadata"], server["tags"]) == ({"role": "web"}, ["blue"])

    def listed(**query: str) -> set[str]:
        return {s["id"] for s in admin.get("/servers", params=query).json()["servers"]}
    assert server_id in listed(tags="blue") and server_id not in listed(tags="blue,green")
    assert server_id in listed(**{"tags-any": "green,blue"}) and server_id not in listed(**{"not-tags": "blue"})


def test_server_update_metadata_and_tags_over_http(admin, made, seeded) -> None:
    server_id = admin.boot(unique("meta"), seeded, accessIPv4="192.0.2.10", description="made")
    made.append(server_id)
    server = settled(admin, server_id, "ACTIVE")
    assert (server["accessIPv4"], server["accessIPv6"], server["description"]) == ("192.0.2.10", "", "made")
    updated = admin.call("PUT", f"/servers/{server_id}", json={"server": {"accessIPv6": "2001:db8::5",
                                                                         "name": "meta-renamed"}})
    assert updated.status_code == 200 and updated.json()["server"]["accessIPv6"] == "2001:db8::5"
    bad = admin.call("PUT", f"/servers/{server_id}", json={"server": {"accessIPv4": "not-an-ip"}})
    assert fault_of(bad, "badRequest", 400).startswith("Invalid input for field/attribute accessIPv4.")
    assert admin.call("PUT", f"/servers/{server_id}/metadata", json={"metadata": {"a": "1", "b": "2"}}).json() == \
        {"metadata": {"a": "1", "b": "2"}}
    assert admin.post(f"/servers/{server_id}/metadata", {"metadata": {"c": "3"}}).json()["metadata"] == \
        {"a": "1", "b": "2", "c": "3"}
    assert admin.call("PUT", f"/servers/{server_id}/metadata/d", json={"meta": {"d": "4"}}).status_code == 200
    mismatch = admin.call("PUT", f"/servers/{server_id}/metadata/e", json={"meta": {"d": "4"}})
    assert fault_of(mismatch, "badRequest", 400) == "Request body and URI mismatch"
    assert admin.get(f"/servers/{server_id}/metadata/d").json() == {"meta": {"d": "4"}}
    assert admin.delete(f"/servers/{server_id}/metadata/a").status_code == 204
    assert fault_of(admin.delete(f"/servers/{server_id}/metadata/a"), "itemNotFound", 404) == \
        "Metadata item was not found"
    assert admin.get(f"/servers/{server_id}/metadata").json()["metadata"] == {"b": "2", "c": "3", "d": "4"}
    assert admin.call("PUT", f"/servers/{server_id}/tags/red").status_code == 201
    assert admin.call("PUT", f"/servers/{server_id}/tags/red").status_code == 204
    assert admin.get(f"/servers/{server_id}/tags/red").status_code == 204
    assert admin.get(f"/servers/{server_id}/tags", "2.25").status_code == 404
    assert admin.call("PUT", f"/servers/{server_id}/tags", json={"tags": ["x", "y"]}).json() == {"tags": ["x", "y"]}
    too_many = admin.call("PUT", f"/servers/{server_id}/tags", json={"tags": [f"t{i}" for i in range(51)]})
    assert fault_of(too_many, "badRequest", 400) == "The number of tags exceeded the per-server limit 50"
    assert admin.delete(f"/servers/{server_id}/tags").status_code == 204
    assert admin.get(f"/servers/{server_id}/tags").json() == {"tags": []}


def test_openstacksdk_drives_the_same_actions(sdk, admin, made, seeded) -> None:
    server = sdk.compute.create_server(name=unique("sdk"), flavor_id="1", image_id=seeded["image"],
                                       networks=[{"uuid": seeded["network"]}])
    made.append(server.id)
    sdk.compute.wait_for_server(server, wait=60, interval=0.2)
    sdk.compute.stop_server(server)
    sdk.compute.wait_for_server(server, status="SHUTOFF", wait=60, interval=0.2)
    sdk.compute.start_server(server)
    sdk.compute.wait_for_server(server, status="ACTIVE", wait=60, interval=0.2)
    sdk.compute.reboot_server(server, "HARD")
    settled(admin, server.id, "ACTIVE")
    sdk.compute.set_server_metadata(server, owner="sdk")
    assert sdk.compute.get_server_metadata(server).metadata == {"owner": "sdk"}
    server.add_tag(sdk.compute, "from-sdk")
    assert "from-sdk" in sdk.compute.get_server(server).tags
    assert "cirros login:" in sdk.compute.get_server_console_output(server)["output"]


def test_nova_s_image_proxy_and_the_actions_of_soft_deletion(admin, made, seeded) -> None:
    image = admin.get(f"/images/{seeded['image']}", "2.35")
    assert image.status_code == 200 and image.json()["image"]["status"] == "ACTIVE"
    assert admin.get(f"/images/{seeded['image']}", "2.36").status_code == 404
    assert admin.post(f"/images/{seeded['image']}/metadata", {"metadata": {"proxy": "yes"}},
                      "2.35").json()["metadata"]["proxy"] == "yes"
    assert admin.call("DELETE", f"/images/{seeded['image']}/metadata/proxy", "2.35").status_code == 204
    assert fault_of(admin.get(f"/images/{uuid.uuid4()}", "2.35"), "itemNotFound", 404) == "Image not found."
    server_id = admin.boot(unique("proxy"), seeded)
    made.append(server_id)
    settled(admin, server_id, "ACTIVE")
    # Tether deletes at once, so no server is ever soft-deleted: nova's 409 for the state it is in
    for action in ("restore", "forceDelete"):
        refused = admin.post(f"/servers/{server_id}/action", {action: None})
        assert fault_of(refused, "conflictingRequest", 409) == \
            f"Cannot '{action}' instance {server_id} while it is in vm_state active"
    missing = admin.post(f"/servers/{uuid.uuid4()}/action", {"restore": None})
    assert fault_of(missing, "itemNotFound", 404).endswith("could not be found.")
    # before 2.75 an update answers without the extended attributes, as nova's does
    updated = admin.call("PUT", f"/servers/{server_id}", "2.74", json={"server": {"name": "proxy-renamed"}})
    body = updated.json()["server"]
    assert body["name"] == "proxy-renamed" and "OS-EXT-STS:vm_state" not in body
    assert all(set(ip) == {"version", "addr"} for ips in body["addresses"].values() for ip in ips)


# -- a restart in the middle of an action ------------------------------------------------------


def test_actions_a_restart_cut_short_are_abandoned_as_nova_s_init_host_abandons_them(tmp_path) -> None:
    from tests.live import start

    data_dir = tmp_path / "cloud"
    held = start(data_dir, "--fault", "compute.snapshot.before_upload=sleep:600",
                 "--fault", "compute.rebuild.before_driver=sleep:600")
    try:
        nova = Nova(held, issue_token(held, "admin", "admin", "admin"))
        sdk = held.connect()
        image = sdk.image.find_image("cirros").id
        seeded = {"image": image, "network": sdk.network.find_network("private").id}
        snapped, rebuilt = (nova.boot(unique("restart"), seeded) for _ in range(2))
        for server_id in (snapped, rebuilt):
            settled(nova, server_id, "ACTIVE")
        assert nova.post(f"/servers/{snapped}/action", {"createImage": {"name": unique("snap")}}).status_code == 202
        assert nova.post(f"/servers/{rebuilt}/action", {"rebuild": {"imageRef": image}}).status_code == 202
        deadline = time.monotonic() + 30
        while (nova.get(f"/servers/{snapped}").json()["server"]["OS-EXT-STS:task_state"] != "image_uploading"
               or nova.get(f"/servers/{rebuilt}").json()["server"]["OS-EXT-STS:task_state"] != "rebuilding"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        held.process.kill()  # a crash: nothing gets to end the actions
        held.process.wait()
    restarted = start(data_dir)
    try:
        nova = Nova(restarted, issue_token(restarted, "admin", "admin", "admin"))
        # the snapshot's task state is cleared and its server stays ACTIVE; the half-rebuilt one is broken
        snapshot_server = settled(nova, snapped, "ACTIVE")
        assert snapshot_server["OS-EXT-STS:vm_state"] == "active"
        assert settled(nova, rebuilt, "ERROR")["fault"]["message"] == \
            "the control plane restarted during the action"
        for server_id, action in ((snapped, "createImage"), (rebuilt, "rebuild")):
            record = next(a for a in actions_of(nova, server_id) if a["action"] == action)
            events = events_of(nova, server_id, record["request_id"])
            assert [e["result"] for e in events] == ["Error"], events
        # nothing resumes: the server takes new actions at once
        assert nova.post(f"/servers/{snapped}/action", {"os-stop": None}).status_code == 202
        settled(nova, snapped, "SHUTOFF")
    finally:
        restarted.stop()
