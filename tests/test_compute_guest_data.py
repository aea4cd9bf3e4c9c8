"""What a boot gives its guest (user data, personality, config drive, disk config, access IPs), availability
zones and host hints the scheduler honours, the hypervisor routes before 2.53, a flavor's rxtx_factor and
tenant usage: on the live server,
through the real `openstack` CLI and raw HTTP where a microversion or an error body matters."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_api_compute import Nova, fault_of, issue_token


def unique(prefix: str) -> str:
    return f"gd-{prefix}-{uuid.uuid4().hex[:8]}"


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
        admin.delete(f"/servers/{server_id}")
    for server_id in servers:
        admin.wait_gone(server_id)


def boot(nova: Nova, made: list[str], seeded: dict[str, str], version: str = "2.96", **server: Any) -> str:
    body = {"name": unique("vm"), "flavorRef": "1", "imageRef": seeded["image"],
            "networks": [{"uuid": seeded["network"]}], **server}
    response = nova.post("/servers", {"server": body}, version)
    assert response.status_code == 202, response.text
    made.append(response.json()["server"]["id"])
    return made[-1]


def console(nova: Nova, server_id: str) -> str:
    response = nova.post(f"/servers/{server_id}/action", {"os-getConsoleOutput": {}})
    assert response.status_code == 200, response.text
    return response.json()["output"]


# -- user data -----------------------------------------------------------------------------


def test_user_data_is_kept_and_shown_to_admins_from_2_3(live_cloud, tmp_path, admin, demo, made) -> None:
    script = "#!/bin/sh\necho hello from tether\n" * 4
    (tmp_path / "user-data").write_text(script)
    created = live_cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                             "net-id=private", "--user-data", str(tmp_path / "user-data"), "--wait",
                             unique("ud"), "-f", "value", "-c", "id", cloud="tether-demo")
    server_id = created.stdout.strip()
    made.append(server_id)
    shown = admin.get(f"/servers/{server_id}", "2.3").json()["server"]
    assert base64.b64decode(shown["OS-EXT-SRV-ATTR:user_data"]).decode() == script
    assert "OS-EXT-SRV-ATTR:user_data" not in admin.get(f"/servers/{server_id}", "2.2").json()["server"]
    assert "OS-EXT-SRV-ATTR:user_data" not in demo.get(f"/servers/{server_id}").json()["server"]
    assert f"user data: {len(script)} bytes" in console(admin, server_id)


def test_user_data_must_be_base64_of_at_most_65535_characters(admin, made, seeded) -> None:
    # nova decodes as base64.decodebytes does: line breaks are fine, a wrong padding is not
    wrapped = base64.encodebytes(b"x" * 100).decode()
    assert "\n" in wrapped
    server_id = boot(admin, made, seeded, user_data=wrapped)
    assert admin.wait(server_id)["OS-EXT-SRV-ATTR:user_data"] == wrapped
    for bad in ("abc", "a" * 65536):
        name = unique("bad-ud")
        body = {"server": {"name": name, "flavorRef": "1", "imageRef": seeded["image"], "networks": "none",
                           "user_data": bad}}
        assert "Invalid input for field/attribute user_data" in fault_of(admin.post("/servers", body),
                                                                          "badRequest", 400)
        assert admin.named(name) == []


def test_rebuild_replaces_user_data_from_2_57_and_key_name_from_2_54(admin, made, seeded) -> None:
    server_id = boot(admin, made, seeded, user_data=base64.b64encode(b"old").decode())
    admin.wait(server_id)
    key = unique("key")
    assert admin.post("/os-keypairs", {"keypair": {"name": key}}, "2.91").status_code == 201
    try:
        new = base64.b64encode(b"new").decode()
        rebuilt = admin.post(f"/servers/{server_id}/action",
                             {"rebuild": {"imageRef": seeded["image"], "user_data": new, "key_name": key}})
        assert rebuilt.status_code == 202, rebuilt.text
        assert (rebuilt.json()["server"]["user_data"], rebuilt.json()["server"]["key_name"]) == (new, key)
        server = admin.wait(server_id)
        assert (server["OS-EXT-SRV-ATTR:user_data"], server["key_name"]) == (new, key)
        unknown = admin.post(f"/servers/{server_id}/action",
                             {"rebuild": {"imageRef": seeded["image"], "key_name": unique("none")}})
        assert fault_of(unknown, "badRequest", 400) == "Invalid key_name provided."
        early = admin.post(f"/servers/{server_id}/action", {"rebuild": {"imageRef": seeded["image"],
                                                                        "user_data": new}}, "2.56")
        assert "'user_data' was unexpected" in fault_of(early, "badRequest", 400)
    finally:
        admin.delete(f"/os-keypairs/{key}")


# -- personality, config drive, disk config, access IPs -------------------------------------------------


def test_personality_is_injected_up_to_2_56_within_the_injected_file_quotas(admin, made, seeded) -> None:
    motd = {"path": "/etc/motd", "contents": base64.b64encode(b"welcome to tether\n").decode()}
    server_id = boot(admin, made, seeded, "2.56", personality=[motd])
    assert admin.wait(server_id)["status"] == "ACTIVE"
    assert "injected file /etc/motd (18 bytes)" in console(admin, server_id)

    def refused(files: list[dict[str, str]], version: str = "2.56") -> Any:
        body = {"server": {"name": unique("pers"), "flavorRef": "1", "imageRef": seeded["image"],
                           "networks": "none", "personality": files}}
        return admin.post("/servers", body, version)

    assert "'personality' was unexpected" in fault_of(refused([motd], "2.57"), "badRequest", 400)
    assert fault_of(refused([motd] * 6), "forbidden", 403) == "Personality file limit exceeded"
    long_path = {"path": "/" + "p" * 255, "contents": motd["contents"]}
    assert fault_of(refused([long_path]), "forbidden", 403) == "Personality file path exceeds maximum 255"
    big = {"path": "/big", "contents": base64.b64encode(b"x" * 8000).decode()}
    assert fault_of(refused([big]), "forbidden", 403) == "Personality file content exceeds maximum 10240"
    not_base64 = {"path": "/x", "contents": "abc"}
    assert "is not a 'base64'" in fault_of(refused([not_base64]), "badRequest", 400)


def test_config_drive_and_disk_config_are_kept_and_shown(live_cloud, admin, made, seeded) -> None:
    created = admin.post("/servers", {"server": {
        "name": unique("cd"), "flavorRef": "1", "imageRef": seeded["image"], "networks": "none",
        "config_drive": True, "OS-DCF:diskConfig": "AUTO"}})
    assert created.status_code == 202, created.text
    assert created.json()["server"]["OS-DCF:diskConfig"] == "AUTO"
    server_id = created.json()["server"]["id"]
    made.append(server_id)
    server = admin.wait(server_id)
    assert (server["config_drive"], server["OS-DCF:diskConfig"]) == ("True", "AUTO")
    assert "config drive attached" in console(admin, server_id)
    resized = admin.post(f"/servers/{server_id}/action", {"resize": {"flavorRef": "2",
                                                                     "OS-DCF:diskConfig": "MANUAL"}})
    assert resized.status_code == 202, resized.text
    assert admin.wait(server_id, ("VERIFY_RESIZE",))["OS-DCF:diskConfig"] == "MANUAL"
    plain = live_cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "none",
                           "--config-drive", "True", "--wait", unique("cd-cli"), "-f", "json")
    made.append(__import__("json").loads(plain.stdout)["id"])
    assert admin.get(f"/servers/{made[-1]}").json()["server"]["config_drive"] == "True"


def test_access_ips_are_validated_stored_and_shown(live_cloud, admin, made, seeded) -> None:
    server_id = boot(admin, made, seeded, accessIPv4="192.0.2.10", accessIPv6="2001:db8::10")
    server = admin.wait(server_id)
    assert (server["accessIPv4"], server["accessIPv6"]) == ("192.0.2.10", "2001:db8::10")
    body = {"server": {"name": unique("aip"), "flavorRef": "1", "imageRef": seeded["image"], "networks": "none",
                       "accessIPv4": "2001:db8::1"}}
    assert "accessIPv4" in fault_of(admin.post("/servers", body), "badRequest", 400)
    assert admin.call("PUT", f"/servers/{server_id}", json={"server": {"accessIPv4": "192.0.2.11"}}).status_code \
        == 200
    assert live_cloud.cli("server", "show", server_id, "-f", "value", "-c", "accessIPv4").stdout.strip() == \
        "192.0.2.11"


def test_the_guest_hostname_is_set_from_2_90_and_a_fqdn_from_2_94(admin, made, seeded) -> None:
    server_id = boot(admin, made, seeded, hostname="web-01.example.org")
    assert admin.wait(server_id)["OS-EXT-SRV-ATTR:hostname"] == "web-01.example.org"
    renamed = admin.call("PUT", f"/servers/{server_id}", "2.90", json={"server": {"hostname": "web-02"}})
    assert renamed.status_code == 200, renamed.text
    assert admin.get(f"/servers/{server_id}").json()["server"]["OS-EXT-SRV-ATTR:hostname"] == "web-02"
    body = {"server": {"name": unique("host"), "flavorRef": "1", "imageRef": seeded["image"], "networks": "none",
                       "hostname": "a.b"}}
    assert "hostname" in fault_of(admin.post("/servers", body, "2.90"), "badRequest", 400)
    assert "'hostname' was unexpected" in fault_of(admin.post("/servers", body, "2.89"), "badRequest", 400)


# -- availability zones ------------------------------------------------------------------------


def test_a_boot_into_a_zone_lands_on_a_host_of_that_zone_s_aggregate(live_cloud, admin, made, seeded) -> None:
    # a boot first: the scheduler has read the aggregates before the zone is made, and must read them again
    before = admin.wait(boot(admin, made, seeded))
    admin.delete(f"/servers/{before['id']}")
    zone = unique("az")
    created = admin.post("/os-aggregates", {"aggregate": {"name": zone, "availability_zone": zone}})
    assert created.status_code == 200, created.text
    aggregate = created.json()["aggregate"]["id"]
    added = admin.post(f"/os-aggregates/{aggregate}/action", {"add_host": {"host": "compute-2"}})
    assert added.status_code == 200, added.text
    try:
        server_id = boot(admin, made, seeded, availability_zone=zone)
        server = admin.wait(server_id)
        assert (server["OS-EXT-SRV-ATTR:host"], server["OS-EXT-AZ:availability_zone"]) == ("compute-2", zone)
        assert server["pinned_availability_zone"] == zone
        shown = live_cloud.cli("server", "show", server_id, "-f", "value", "-c", "OS-EXT-AZ:availability_zone")
        assert shown.stdout.strip() == zone
        default = admin.wait(boot(admin, made, seeded, availability_zone="nova"))
        assert (default["OS-EXT-SRV-ATTR:host"], default["OS-EXT-AZ:availability_zone"]) == ("compute-1", "nova")
        name = unique("no-az")
        unknown = admin.post("/servers", {"server": {"name": name, "flavorRef": "1", "imageRef": seeded["image"],
                                                     "networks": "none", "availability_zone": "no-such-zone"}})
        assert fault_of(unknown, "badRequest", 400) == "The requested availability zone is not available"
        assert admin.named(name) == []
        for server in (server_id, default["id"]):
            admin.delete(f"/servers/{server}")
            admin.wait_gone(server)
    finally:
        admin.post(f"/os-aggregates/{aggregate}/action", {"remove_host": {"host": "compute-2"}})
        admin.delete(f"/os-aggregates/{aggregate}")


# -- hypervisors and flavors ----------------------------------------------------------------------


def test_the_hypervisor_routes_before_2_53(admin, demo, made, seeded) -> None:
    server_id = boot(admin, made, seeded)
    host = admin.wait(server_id)["OS-EXT-SRV-ATTR:host"]
    found = admin.get("/os-hypervisors/compute/search", "2.52").json()["hypervisors"]
    assert sorted(h["hypervisor_hostname"] for h in found) == ["compute-1", "compute-2"]
    assert set(found[0]) == {"id", "hypervisor_hostname", "state", "status"}
    servers = admin.get(f"/os-hypervisors/{host}/servers", "2.52").json()["hypervisors"]
    assert [h["hypervisor_hostname"] for h in servers] == [host]
    assert server_id in {s["uuid"] for s in servers[0]["servers"]}
    assert fault_of(admin.get("/os-hypervisors/nowhere/search", "2.52"), "itemNotFound", 404) == \
        "No hypervisor matching 'nowhere' could be found."
    assert admin.get(f"/os-hypervisors/{host}/search", "2.53").status_code == 404
    assert demo.get(f"/os-hypervisors/{host}/search", "2.52").status_code == 403
    hypervisor_id = found[0]["id"]
    uptime = admin.get(f"/os-hypervisors/{hypervisor_id}/uptime", "2.52").json()["hypervisor"]
    assert uptime["id"] == hypervisor_id and " up " in uptime["uptime"] and "load average" in uptime["uptime"]


def test_a_flavor_keeps_its_rxtx_factor(admin) -> None:
    created = admin.post("/flavors", {"flavor": {"name": unique("rxtx"), "ram": 64, "vcpus": 1, "disk": 0,
                                                 "rxtx_factor": 2.5}})
    assert created.status_code == 200, created.text
    flavor = created.json()["flavor"]
    try:
        assert flavor["rxtx_factor"] == 2.5
        assert admin.get(f"/flavors/{flavor['id']}").json()["flavor"]["rxtx_factor"] == 2.5
        bad = admin.post("/flavors", {"flavor": {"name": unique("rxtx"), "ram": 64, "vcpus": 1, "disk": 0,
                                                 "rxtx_factor": 0}})
        assert "rxtx_factor" in fault_of(bad, "badRequest", 400)
    finally:
        admin.delete(f"/flavors/{flavor['id']}")


def test_same_host_and_different_host_hints_place_a_boot_beside_or_away_from_a_server(admin, made, seeded) -> None:
    first = admin.wait(boot(admin, made, seeded))
    beside = admin.post("/servers", {"server": {"name": unique("same"), "flavorRef": "1", "imageRef": seeded["image"],
                                                "networks": "none"}, "os:scheduler_hints": {"same_host": first["id"]}})
    assert beside.status_code == 202, beside.text
    made.append(beside.json()["server"]["id"])
    away = admin.post("/servers", {"server": {"name": unique("diff"), "flavorRef": "1", "imageRef": seeded["image"],
                                              "networks": "none"},
                                   "os:scheduler_hints": {"different_host": [first["id"]]}})
    assert away.status_code == 202, away.text
    made.append(away.json()["server"]["id"])
    host = first["OS-EXT-SRV-ATTR:host"]
    assert admin.wait(made[-2])["OS-EXT-SRV-ATTR:host"] == host
    assert admin.wait(made[-1])["OS-EXT-SRV-ATTR:host"] not in (host, None)
    bad = admin.post("/servers", {"server": {"name": unique("bad"), "flavorRef": "1", "imageRef": seeded["image"],
                                             "networks": "none"}, "os:scheduler_hints": {"same_host": "nope"}})
    assert "same_host" in fault_of(bad, "badRequest", 400)


def test_simple_tenant_usage_counts_each_server_s_hours(live_cloud, admin, demo, made, seeded) -> None:
    server_id = boot(demo, made, seeded)
    demo.wait(server_id)
    project = demo.project_id()
    period = {"start": "2020-01-01T00:00:00", "end": "2099-01-01T00:00:00"}
    mine = demo.get(f"/os-simple-tenant-usage/{project}", params=period).json()["tenant_usage"]
    usage = next(u for u in mine["server_usages"] if u["instance_id"] == server_id)
    assert (usage["flavor"], usage["vcpus"], usage["memory_mb"], usage["state"]) == ("m1.tiny", 1, 512, "active")
    assert usage["hours"] > 0 and mine["total_hours"] >= usage["hours"] and mine["tenant_id"] == project
    every = admin.get("/os-simple-tenant-usage", params={**period, "detailed": "1"}).json()["tenant_usages"]
    assert project in {u["tenant_id"] for u in every}
    assert fault_of(demo.get("/os-simple-tenant-usage", params=period), "forbidden", 403)
    backwards = admin.get("/os-simple-tenant-usage", params={"start": period["end"], "end": period["start"]})
    assert fault_of(backwards, "badRequest", 400) == \
        "Invalid start time. The start time cannot occur after the end time."
    assert "invalid format" in fault_of(admin.get("/os-simple-tenant-usage", params={"start": "yesterday"}),
                                        "badRequest", 400)
    listed = live_cloud.cli("usage", "show", "--project", "demo", "--start", "2020-01-01", "-f", "json")
    assert listed.returncode == 0 and "Servers" in listed.stdout


def test_create_backup_keeps_the_newest_backups_of_its_type(admin, made, seeded, sdk) -> None:
    server_id = boot(admin, made, seeded)
    admin.wait(server_id)
    images = []
    for index in range(3):
        made_backup = admin.post(f"/servers/{server_id}/action", {"createBackup": {
            "name": unique(f"backup-{index}"), "backup_type": "daily", "rotation": 2}})
        assert made_backup.status_code == 202, made_backup.text
        images.append(made_backup.json()["image_id"])
        admin.wait(server_id)
    kept = [image.id for image in sdk.image.images(backup_type="daily", instance_uuid=server_id)]
    assert sorted(kept) == sorted(images[1:])
    assert sdk.image.get_image(images[2]).properties.get("image_type") == "backup" or \
        sdk.image.get_image(images[2]).image_type == "backup"
    for image in images[1:]:
        sdk.image.delete_image(image, ignore_missing=True)
    bad = admin.post(f"/servers/{server_id}/action", {"createBackup": {"name": "b", "backup_type": "daily",
                                                                      "rotation": -1}})
    assert "rotation" in fault_of(bad, "badRequest", 400)


def test_addresses_network_proxies_and_the_usage_audit_log(admin, demo, made, seeded) -> None:
    server_id = boot(demo, made, seeded)
    demo.wait(server_id)
    addresses = demo.get(f"/servers/{server_id}/ips").json()["addresses"]
    assert list(addresses) == ["private"] and set(addresses["private"][0]) == {"version", "addr"}
    assert demo.get(f"/servers/{server_id}/ips/private").json() == {"private": addresses["private"]}
    assert fault_of(demo.get(f"/servers/{server_id}/ips/nowhere"), "itemNotFound", 404) == \
        "Instance is not a member of specified network"
    networks = demo.get("/os-networks", "2.35").json()["networks"]
    private = next(n for n in networks if n["label"] == "private")
    assert private["id"] == seeded["network"] and private["cidr"] is None
    assert demo.get(f"/os-tenant-networks/{private['id']}", "2.35").json()["network"] == \
        {"id": private["id"], "cidr": "None", "label": "private"}
    assert demo.get("/os-networks", "2.36").status_code == 404
    audit = admin.get("/os-instance_usage_audit_log").json()["instance_usage_audit_logs"]
    assert audit["num_hosts"] == audit["num_hosts_not_run"] >= 2 and audit["log"] == {}
    assert fault_of(admin.get("/os-instance_usage_audit_log/yesterday"), "badRequest", 400) == \
        "Invalid timestamp for date yesterday"
    assert demo.get("/os-instance_usage_audit_log").status_code == 403
    assert admin.get("/os-simple-tenant-usage/").status_code == 404
    assert admin.call("DELETE", "/images/", "2.35").status_code == 404


def test_os_hosts_lists_and_shows_compute_hosts_before_2_43(admin, demo, made, seeded) -> None:
    server_id = boot(admin, made, seeded)
    host = admin.wait(server_id)["OS-EXT-SRV-ATTR:host"]
    hosts = admin.get("/os-hosts", "2.42").json()["hosts"]
    assert {"host_name": host, "service": "compute", "zone": "nova"} in hosts
    assert admin.get("/os-hosts", "2.42", params={"zone": "no-such-zone"}).json()["hosts"] == []
    resources = [r["resource"] for r in admin.get(f"/os-hosts/{host}", "2.42").json()["host"]]
    assert [r["project"] for r in resources[:3]] == ["(total)", "(used_now)", "(used_max)"]
    assert resources[2]["cpu"] >= 1 and admin.project_id() in {r["project"] for r in resources[3:]}
    assert fault_of(admin.get("/os-hosts/nowhere", "2.42"), "itemNotFound", 404) == \
        "Compute host nowhere could not be found."
    assert fault_of(admin.call("PUT", f"/os-hosts/{host}", "2.42", json={"status": "disable"}),
                    "notImplemented", 501) == "The requested functionality is not supported."
    assert admin.call("PUT", f"/os-hosts/{host}", "2.42", json={"status": "off"}).status_code == 400
    assert demo.get("/os-hosts", "2.42").status_code == 403
    assert admin.get("/os-hosts", "2.43").status_code == 404
