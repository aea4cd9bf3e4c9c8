"""Nova's API on the live server (/compute/v2.1), driven by openstacksdk, raw HTTP and the real CLI.

Every resource is named uniquely (other test files share the server). A
second project's user (``tether-demo``) checks isolation; a reader on that
project, made in the live cloud's own database, checks that reading is not
writing.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher, profiles

from tests.live import LiveCloud, start
from tether.config import DataDir
from tether.runtime.runtime import Runtime
from tether.services.identity.service import IdentityService
from tether.store.database import Database, Store

LATEST = "2.96"
MAC = r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$"


def unique(prefix: str) -> str:
    return f"cmp-{prefix}-{uuid.uuid4().hex[:8]}"


def issue_token(live: LiveCloud, user: str, password: str, project: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{live.base_url}/identity/v3/auth/tokens", json=body, timeout=30)
    assert response.status_code == 201, response.text
    return response.headers["X-Subject-Token"]


@dataclass
class Nova:
    """Raw calls to /compute/v2.1 as one user, at a chosen microversion."""

    live: LiveCloud
    token: str

    def call(self, method: str, path: str, version: str | None = LATEST, **kwargs: Any) -> httpx.Response:
        headers = {"X-Auth-Token": self.token, **kwargs.pop("headers", {})}
        if version is not None:
            headers["OpenStack-API-Version"] = f"compute {version}"
        return httpx.request(method, f"{self.live.base_url}/compute/v2.1{path}", headers=headers, timeout=60,
                             **kwargs)

    def project_id(self) -> str:
        response = httpx.get(f"{self.live.base_url}/identity/v3/auth/tokens", timeout=30,
                             headers={"X-Auth-Token": self.token, "X-Subject-Token": self.token})
        return response.json()["token"]["project"]["id"]

    def get(self, path: str, version: str | None = LATEST, **kwargs: Any) -> httpx.Response:
        return self.call("GET", path, version, **kwargs)

    def post(self, path: str, body: Any, version: str | None = LATEST) -> httpx.Response:
        return self.call("POST", path, version, json=body)

    def delete(self, path: str, version: str | None = LATEST) -> httpx.Response:
        return self.call("DELETE", path, version)

    def boot(self, name: str, seeded: dict[str, str], **server: Any) -> str:
        body = {"name": name, "flavorRef": "1", "imageRef": seeded["image"],
                "networks": [{"uuid": seeded["network"]}], **server}
        response = self.post("/servers", {"server": body})
        assert response.status_code == 202, response.text
        return response.json()["server"]["id"]

    def wait(self, server_id: str, statuses: tuple[str, ...] = ("ACTIVE", "ERROR"), timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = self.get(f"/servers/{server_id}")
            assert response.status_code == 200, response.text
            server = response.json()["server"]
            if server["status"] in statuses and server["OS-EXT-STS:task_state"] is None:
                return server
            time.sleep(0.05)
        raise AssertionError(f"server {server_id} did not reach {statuses}")

    def wait_gone(self, server_id: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.get(f"/servers/{server_id}").status_code == 404:
                return
            time.sleep(0.05)
        raise AssertionError(f"server {server_id} was not deleted")

    def named(self, name: str) -> list[dict]:
        response = self.get("/servers/detail", params={"name": f"^{name}$", "all_tenants": "1"})
        assert response.status_code == 200, response.text
        return response.json()["servers"]


def fault_of(response: httpx.Response, key: str, status: int) -> str:
    """The message of nova's error envelope, after checking its key and code."""
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == [key], body
    assert body[key]["code"] == status
    return body[key]["message"]


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded(sdk) -> dict[str, str]:
    image = sdk.image.find_image("cirros")
    network = sdk.network.find_network("private")
    assert image is not None and network is not None
    return {"image": image.id, "network": network.id}


@pytest.fixture(scope="module")
def admin(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "admin", "admin", "admin"))


@pytest.fixture(scope="module")
def demo(live_cloud) -> Nova:
    return Nova(live_cloud, issue_token(live_cloud, "demo", "demo", "demo"))


@pytest.fixture(scope="module")
def demo_sdk(live_cloud):
    connection = live_cloud.connect("tether-demo")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def reader(live_cloud) -> Nova:
    """A user with only the reader role on the demo project, added to the live cloud's database."""
    name = unique("reader")

    async def add_reader() -> None:
        database = Database(DataDir(live_cloud.data_dir).database_url)
        runtime = Runtime()
        identity = IdentityService(Store(database, runtime), runtime, random.Random(),
                                   password_hasher=PasswordHasher.from_parameters(profiles.CHEAPEST))
        try:
            user = await identity.create_user(name=name, password="reader-pass")
            project = await identity.find_project("demo")
            role = await identity.find_role("reader")
            await identity.assign_role(user_id=user.id, project_id=project.id, role_id=role.id)
        finally:
            await database.dispose()

    asyncio.run(add_reader())
    return Nova(live_cloud, issue_token(live_cloud, name, "reader-pass", "demo"))


@pytest.fixture(scope="module")
def servers(admin) -> Iterator[list[str]]:
    """Server ids to delete when the module is done (as admin, whoever owns them)."""
    made: list[str] = []
    yield made
    for server_id in made:
        admin.delete(f"/servers/{server_id}")
    for server_id in made:
        admin.wait_gone(server_id)


@pytest.fixture(scope="module")
def vm(admin, seeded, servers) -> dict:
    """One ACTIVE admin server the read-only tests share."""
    server_id = admin.boot(unique("vm"), seeded, metadata={"role": "shared"})
    servers.append(server_id)
    return admin.wait(server_id)


@pytest.fixture(scope="module")
def demo_vm(demo, seeded, servers) -> dict:
    server_id = demo.boot(unique("demo-vm"), seeded)
    servers.append(server_id)
    return demo.wait(server_id)


# -- flavors ---------------------------------------------------------------------------------


def test_flavor_names_are_404_in_the_path_and_found_in_the_detailed_list(admin, sdk) -> None:
    assert fault_of(admin.get("/flavors/m1.tiny", "2.61"),
                                                            "itemNotFound", 404) == "Flavor m1.tiny could not be found."
    listed = admin.get("/flavors/detail", "2.61", params={"is_public": "None"})
    assert listed.headers["openstack-api-version"] == "compute 2.61"
    tiny = next(f for f in listed.json()["flavors"] if f["name"] == "m1.tiny")
    assert tiny == {**tiny, "id": "1", "ram": 512, "vcpus": 1, "disk": 1, "swap": "", "rxtx_factor": 1.0,
                    "OS-FLV-EXT-DATA:ephemeral": 0, "os-flavor-access:is_public": True, "extra_specs": {},
                    "description": None}
    assert tiny["links"][0] == {"rel": "self", "href": f"{admin.live.base_url}/compute/v2.1/flavors/1"}
    assert sdk.compute.find_flavor("m1.tiny").id == "1"
    assert admin.get("/flavors/1", "2.75").json()["flavor"]["swap"] == 0  # an integer from 2.75
    specs = admin.get("/flavors/3/os-extra_specs").json()["extra_specs"]
    assert specs == {"resources:CUSTOM_BAREMETAL": "1"}
    brief = admin.get("/flavors", "2.54").json()["flavors"]
    assert {"id", "name", "links"} == set(brief[0]) and [f["id"] for f in brief][:3] == ["1", "2", "3"]


def test_flavor_paging_follows_next_links(admin) -> None:
    first = admin.get("/flavors", params={"limit": "2"}).json()
    assert [f["id"] for f in first["flavors"]] == ["1", "2"]
    (link,) = first["flavors_links"]
    assert link["rel"] == "next" and "marker=2" in link["href"]
    rest = admin.get("/flavors", params={"limit": "2", "marker": "2"}).json()["flavors"]
    assert rest and rest[0]["id"] == "3"
    fault_of(admin.get("/flavors", params={"marker": "no-such-flavor"}), "badRequest", 400)


def test_admins_create_private_flavors_that_other_projects_cannot_see(admin, demo) -> None:
    name = unique("flavor")
    body = {"flavor": {"name": name, "ram": 256, "vcpus": "2", "disk": 0, "os-flavor-access:is_public": False,
                       "description": "private test flavor"}}
    created = admin.post("/flavors", body)
    assert created.status_code == 200, created.text
    flavor = created.json()["flavor"]
    assert (flavor["vcpus"], flavor["os-flavor-access:is_public"], flavor["description"]) == (2, False,
                                                                                            "private test flavor")
    assert fault_of(admin.post("/flavors", body), "conflictingRequest", 409).endswith("already exists.")
    fault_of(demo.get(f"/flavors/{flavor['id']}"), "itemNotFound", 404)
    assert name not in [f["name"] for f in demo.get("/flavors/detail", params={"is_public": "None"}).json()["flavors"]]
    private = admin.get("/flavors/detail", params={"is_public": "false"}).json()["flavors"]
    assert name in [f["name"] for f in private] and "m1.tiny" not in [f["name"] for f in private]
    fault_of(demo.post("/flavors", {"flavor": {"name": unique("nope"), "ram": 1, "vcpus": 1, "disk": 0}}),
             "forbidden", 403)
    fault_of(demo.delete(f"/flavors/{flavor['id']}"), "forbidden", 403)
    assert admin.delete(f"/flavors/{flavor['id']}").status_code == 202
    fault_of(admin.get(f"/flavors/{flavor['id']}"), "itemNotFound", 404)


# -- servers ----------------------------------------------------------------------------------


def test_sdk_boots_a_server_with_the_create_reply_nova_gives(sdk, admin, seeded, servers) -> None:
    name = unique("sdk")
    server = sdk.compute.create_server(name=name, flavor_id="1", image_id=seeded["image"],
                                       networks=[{"uuid": seeded["network"]}], metadata={"k": "v"})
    servers.append(server.id)
    assert server.admin_password and len(server.admin_password) == 12
    server = sdk.compute.wait_for_server(server, interval=0.05, wait=60)
    assert server.status == "ACTIVE"
    assert server.metadata == {"k": "v"}
    (address,) = server.addresses["private"]
    assert address["OS-EXT-IPS:type"] == "fixed" and address["version"] == 4
    assert address["addr"].startswith("10.0.0.")
    (port,) = sdk.network.ports(device_id=server.id)
    assert address["OS-EXT-IPS-MAC:mac_addr"] == port.mac_address  # the info cache names the port's MAC
    assert server.flavor.original_name == "m1.tiny" and server.flavor.ram == 512
    assert server.image.id == seeded["image"]

    raw = admin.post("/servers", {"server": {"name": unique("raw"), "flavorRef": "1", "imageRef": seeded["image"],
                                             "networks": "none", "adminPass": "chosen-pass"}})
    assert raw.status_code == 202
    servers.append(raw.json()["server"]["id"])
    created = raw.json()["server"]
    assert set(created) == {"id", "links", "adminPass", "OS-DCF:diskConfig", "security_groups"}
    assert created["adminPass"] == "chosen-pass" and created["security_groups"] == [{"name": "default"}]
    assert raw.headers["location"] == created["links"][0]["href"]
    assert raw.headers["x-openstack-request-id"].startswith("req-")
    assert admin.wait(created["id"])["addresses"] == {}  # networks "none": no ports, no addresses


def test_ports_fixed_ips_tags_and_auto_networks_at_create(admin, demo, sdk, seeded, servers) -> None:
    port = sdk.network.create_port(network_id=seeded["network"], name=unique("boot-port"))
    try:
        server_id = admin.boot(unique("ports"), seeded, availability_zone="nova", min_count="1", max_count=1,
                               networks=[{"port": port.id, "tag": "by-port"},
                                         {"uuid": seeded["network"], "fixed_ip": "10.0.0.150", "tag": "fixed"}])
        servers.append(server_id)
        server = admin.wait(server_id)
        assert server["status"] == "ACTIVE", server.get("fault")
        addresses = [a["addr"] for a in server["addresses"]["private"]]
        assert addresses[0] == port.fixed_ips[0]["ip_address"] and addresses[1] == "10.0.0.150"
        tags = {i["port_id"]: i["tag"] for i in admin.get(f"/servers/{server_id}/os-interface", "2.70").json()[
            "interfaceAttachments"]}
        made = next(port_id for port_id, tag in tags.items() if tag == "fixed")
        assert tags[port.id] == "by-port"
        assert admin.delete(f"/servers/{server_id}").status_code == 204
        admin.wait_gone(server_id)
        assert sdk.network.get_port(port.id).device_id == ""  # the user's port is released...
        assert sdk.network.find_port(made) is None  # ...and the one compute made is deleted
    finally:
        sdk.network.delete_port(port.id, ignore_missing=True)
    auto = demo.post("/servers", {"server": {"name": unique("auto"), "flavorRef": "1", "imageRef": seeded["image"],
                                             "networks": "auto"}})
    assert auto.status_code == 202
    servers.append(auto.json()["server"]["id"])
    assert list(demo.wait(auto.json()["server"]["id"])["addresses"]) == ["private"]


def test_show_has_every_field_of_2_96_and_admin_only_ones_for_admins(admin, demo, vm, demo_vm) -> None:
    body = admin.get(f"/servers/{vm['id']}").json()["server"]
    assert body["status"] == "ACTIVE" and body["OS-EXT-STS:vm_state"] == "active"
    assert body["OS-EXT-STS:power_state"] == 1 and body["OS-EXT-STS:task_state"] is None
    assert body["OS-EXT-SRV-ATTR:host"].startswith("compute-") and body["host_status"] == "UP"
    assert body["OS-EXT-SRV-ATTR:hypervisor_hostname"] == body["OS-EXT-SRV-ATTR:host"]
    assert body["hostId"] == hashlib.sha224((body["tenant_id"] + body["OS-EXT-SRV-ATTR:host"]).encode()).hexdigest()
    assert body["metadata"] == {"role": "shared"}
    assert body["flavor"] == {"vcpus": 1, "ram": 512, "disk": 1, "ephemeral": 0, "swap": 0,
                              "original_name": "m1.tiny", "extra_specs": {}}
    assert body["image"]["links"] == [{"rel": "bookmark",
                                       "href": f"{admin.live.base_url}/compute/images/{body['image']['id']}"}]
    assert (body["locked"], body["locked_reason"], body["tags"], body["server_groups"]) == (False, None, [], [])
    assert (body["pinned_availability_zone"], body["trusted_image_certificates"], body["description"]) == (
        None, None, None)
    assert body["os-extended-volumes:volumes_attached"] == [] and body["config_drive"] == ""
    assert body["OS-EXT-AZ:availability_zone"] == "nova" and body["progress"] == 0
    assert body["OS-SRV-USG:launched_at"] and body["OS-SRV-USG:terminated_at"] is None
    # Its port is in the project's default group, which nova names from the port.
    assert body["security_groups"] == [{"name": "default"}]
    assert "fault" not in body

    own = demo.get(f"/servers/{demo_vm['id']}").json()["server"]
    assert not [key for key in own if key.startswith("OS-EXT-SRV-ATTR:") and key != "OS-EXT-SRV-ATTR:hostname"]
    assert "host_status" not in own and own["OS-EXT-SRV-ATTR:hostname"] == own["name"].lower()


def test_older_microversions_show_older_bodies(admin, vm) -> None:
    old = admin.get(f"/servers/{vm['id']}", "2.1")
    assert old.headers["x-openstack-nova-api-version"] == "2.1"
    body = old.json()["server"]
    assert body["flavor"] == {"id": "1", "links": [{"rel": "bookmark",
                                                    "href": f"{admin.live.base_url}/compute/flavors/1"}]}
    for newer in ("locked", "description", "tags", "server_groups", "pinned_availability_zone",
                  "OS-EXT-SRV-ATTR:hostname", "host_status"):
        assert newer not in body
    assert "OS-EXT-SRV-ATTR:host" in body  # admins had that one from the start
    assert "server_groups" not in admin.get("/servers/detail", "2.96").json()["servers"][0]  # show only
    unversioned = admin.get(f"/servers/{vm['id']}", None)
    assert unversioned.headers["openstack-api-version"] == "compute 2.1"
    fault_of(admin.get(f"/servers/{vm['id']}", "2.97"), "notAcceptable", 406)


def test_a_name_in_the_path_is_404_so_clients_fall_back_to_the_name_filter(admin, sdk, vm) -> None:
    assert fault_of(admin.get(f"/servers/{vm['name']}"), "itemNotFound", 404) == \
        f"Instance {vm['name']} could not be found."
    (found,) = admin.get("/servers/detail", params={"name": vm["name"]}).json()["servers"]
    assert found["id"] == vm["id"]
    assert sdk.compute.find_server(vm["name"]).id == vm["id"]
    prefix = vm["name"].rsplit("-", 1)[0]
    assert vm["id"] in [s["id"] for s in admin.get("/servers", params={"name": f"^{prefix}-"}).json()["servers"]]
    fault_of(admin.get("/servers", params={"name": "(["}), "badRequest", 400)


def test_listing_filters_by_status_and_pages_with_markers(admin, seeded, servers) -> None:
    prefix = unique("page")
    made = [admin.boot(f"{prefix}-{n}", seeded) for n in range(3)]
    servers.extend(made)
    for server_id in made:
        admin.wait(server_id)
    brief = admin.get("/servers", params={"name": prefix}).json()
    assert [s["id"] for s in brief["servers"]] == made[::-1]  # newest first
    assert set(brief["servers"][0]) == {"id", "name", "links"}
    first = admin.get("/servers/detail", params={"name": prefix, "limit": "2"}).json()
    assert [s["id"] for s in first["servers"]] == [made[2], made[1]]
    (link,) = first["servers_links"]
    assert link["rel"] == "next" and f"marker={made[1]}" in link["href"]
    following = httpx.get(link["href"], headers={"X-Auth-Token": admin.token}).json()["servers"]
    assert [s["id"] for s in following] == [made[0]]
    by_name = admin.get("/servers", params={"name": prefix, "sort_key": "display_name", "sort_dir": "asc"})
    assert [s["id"] for s in by_name.json()["servers"]] == made
    assert admin.get("/servers", params={"name": prefix, "status": "ERROR"}).json()["servers"] == []
    assert len(admin.get("/servers", params={"name": prefix, "status": "active"}).json()["servers"]) == 3
    assert len(admin.get("/servers", params={"name": prefix, "deleted": "False"}).json()["servers"]) == 3
    fault_of(admin.get("/servers", params={"status": "BOGUS"}), "badRequest", 400)
    fault_of(admin.get("/servers", params={"marker": str(uuid.uuid4())}), "badRequest", 400)
    fault_of(admin.get("/servers", params={"sort_key": "bogus"}), "badRequest", 400)
    fault_of(admin.get("/servers", params={"bogus": "1"}), "badRequest", 400)  # unknown from 2.75
    assert admin.get("/servers", "2.74", params={"bogus": "1"}).status_code == 200


def test_delete_is_204_then_404_and_deleted_servers_are_listed_only_when_asked(admin, seeded) -> None:
    server_id = admin.boot(unique("del"), seeded)
    admin.wait(server_id)
    response = admin.delete(f"/servers/{server_id}")
    assert response.status_code == 204 and response.content == b""
    admin.wait_gone(server_id)
    fault_of(admin.delete(f"/servers/{server_id}"), "itemNotFound", 404)
    (gone,) = admin.get("/servers/detail", params={"uuid": server_id, "deleted": "true"}).json()["servers"]
    assert gone["status"] == "DELETED" and gone["OS-SRV-USG:terminated_at"]
    assert admin.get("/servers", params={"uuid": server_id}).json()["servers"] == []


def test_a_build_that_fails_shows_error_with_its_fault(admin, demo, seeded, servers) -> None:
    flavor = admin.post("/flavors", {"flavor": {"name": unique("huge"), "ram": 10**6, "vcpus": 512, "disk": 1}})
    flavor_id = flavor.json()["flavor"]["id"]
    # room in the admin project's quota, so that it is the hosts that run out
    quota = f"/os-quota-sets/{admin.project_id()}"
    before = {key: admin.get(quota).json()["quota_set"][key] for key in ("cores", "ram")}
    assert admin.call("PUT", quota, json={"quota_set": {"cores": -1, "ram": -1}}).status_code == 200
    try:
        server_id = admin.boot(unique("novalidhost"), seeded, flavorRef=flavor_id)
        servers.append(server_id)
        server = admin.wait(server_id)
    finally:
        admin.delete(f"/flavors/{flavor_id}")
        # put back what the module's cloud had (lifted: other modules on this cloud boot many servers)
        admin.call("PUT", quota, json={"quota_set": before})
    assert server["status"] == "ERROR" and server["OS-EXT-STS:vm_state"] == "error"
    assert server["fault"]["code"] == 500 and server["fault"]["message"].startswith("No valid host was found.")
    assert server["fault"]["created"].endswith("Z") and "details" in server["fault"]  # admins see details
    assert "progress" not in server
    (listed,) = admin.get("/servers/detail", params={"uuid": server_id}).json()["servers"]
    assert listed["fault"] == server["fault"]
    (create,) = admin.get(f"/servers/{server_id}/os-instance-actions").json()["instanceActions"]
    assert create["message"] == "Error"
    (event,) = admin.get(f"/servers/{server_id}/os-instance-actions/{create['request_id']}").json()[
        "instanceAction"]["events"]
    assert event["result"] == "Error" and event["details"].startswith("No valid host was found.")


# -- interfaces ---------------------------------------------------------------------------------


def test_sdk_attaches_lists_shows_and_detaches_a_port(sdk, admin, vm, seeded) -> None:
    port = sdk.network.create_port(network_id=seeded["network"], name=unique("port"))
    try:
        attached = sdk.compute.create_server_interface(vm["id"], port_id=port.id)
        assert (attached.port_id, attached.net_id, attached.mac_addr) == (port.id, seeded["network"],
                                                                          port.mac_address)
        assert attached.fixed_ips == port.fixed_ips
        listed = {i.port_id: i for i in sdk.compute.server_interfaces(vm["id"])}
        assert port.id in listed and len(listed) == 2
        shown = admin.get(f"/servers/{vm['id']}/os-interface/{port.id}", "2.70").json()["interfaceAttachment"]
        assert shown["tag"] is None and shown["port_state"] in ("DOWN", "ACTIVE")
        assert "tag" not in admin.get(f"/servers/{vm['id']}/os-interface/{port.id}", "2.69").json()[
            "interfaceAttachment"]
        assert sdk.network.get_port(port.id).device_id == vm["id"]
        macs = {a["OS-EXT-IPS-MAC:mac_addr"] for a in admin.get(f"/servers/{vm['id']}").json()["server"][
            "addresses"]["private"]}
        assert port.mac_address in macs
        response = admin.delete(f"/servers/{vm['id']}/os-interface/{port.id}", "2.70")
        assert response.status_code == 202
        assert port.id not in [i.port_id for i in sdk.compute.server_interfaces(vm["id"])]
        assert sdk.network.get_port(port.id).device_id == ""  # the user's port is released, not deleted
        assert fault_of(admin.delete(f"/servers/{vm['id']}/os-interface/{port.id}"), "itemNotFound",
                        404) == f"Port {port.id} is not attached"
        fault_of(admin.get(f"/servers/{vm['id']}/os-interface/{port.id}"), "itemNotFound", 404)
    finally:
        sdk.network.delete_port(port.id, ignore_missing=True)


def test_attaching_on_a_network_with_a_fixed_ip_and_a_tag(admin, vm, seeded, sdk) -> None:
    body = {"interfaceAttachment": {"net_id": seeded["network"], "fixed_ips": [{"ip_address": "10.0.0.200"}],
                                    "tag": "nic-200"}}
    fault_of(admin.post(f"/servers/{vm['id']}/os-interface", body, "2.48"), "badRequest", 400)  # tags from 2.49
    response = admin.post(f"/servers/{vm['id']}/os-interface", body, "2.70")
    assert response.status_code == 200, response.text
    attachment = response.json()["interfaceAttachment"]
    assert attachment["tag"] == "nic-200" and attachment["net_id"] == seeded["network"]
    assert [ip["ip_address"] for ip in attachment["fixed_ips"]] == ["10.0.0.200"]
    listed = admin.get(f"/servers/{vm['id']}/os-interface", "2.70").json()["interfaceAttachments"]
    assert {"nic-200", None} == {i["tag"] for i in listed}
    assert admin.delete(f"/servers/{vm['id']}/os-interface/{attachment['port_id']}").status_code == 202
    assert sdk.network.find_port(attachment["port_id"]) is None  # compute made it, compute deleted it


# -- instance actions ----------------------------------------------------------------------------


def test_instance_actions_list_newest_first_and_events_by_microversion(admin, demo, demo_vm) -> None:
    actions = demo.get(f"/servers/{demo_vm['id']}/os-instance-actions", "2.84").json()["instanceActions"]
    create = actions[-1]
    assert create["action"] == "create" and create["instance_uuid"] == demo_vm["id"]
    assert set(create) == {"action", "instance_uuid", "request_id", "user_id", "project_id", "start_time",
                           "message", "updated_at"}
    assert "updated_at" not in demo.get(f"/servers/{demo_vm['id']}/os-instance-actions", "2.57").json()[
        "instanceActions"][-1]
    path = f"/servers/{demo_vm['id']}/os-instance-actions/{create['request_id']}"
    assert "events" not in demo.get(path, "2.50").json()["instanceAction"]
    (event,) = demo.get(path, "2.84").json()["instanceAction"]["events"]
    assert set(event) == {"event", "start_time", "finish_time", "result", "hostId"}  # no traceback, host, details
    assert (event["event"], event["result"]) == ("compute_create", "Success")
    (admin_event,) = admin.get(path, "2.84").json()["instanceAction"]["events"]
    assert set(admin_event) == {"event", "start_time", "finish_time", "result", "traceback", "host", "hostId",
                                "details"}
    assert admin_event["details"] is None and admin_event["traceback"] is None
    assert "hostId" not in admin.get(path, "2.61").json()["instanceAction"]["events"][0]
    fault_of(demo.get(f"/servers/{demo_vm['id']}/os-instance-actions/req-nope"), "itemNotFound", 404)
    paged = demo.get(f"/servers/{demo_vm['id']}/os-instance-actions", params={"limit": "1"}).json()
    assert len(paged["instanceActions"]) == 1 and paged["links"][0]["rel"] == "next"


def test_a_deleted_servers_actions_stay_readable_from_2_21(admin, seeded) -> None:
    server_id = admin.boot(unique("gone"), seeded)
    admin.wait(server_id)
    admin.delete(f"/servers/{server_id}")
    admin.wait_gone(server_id)
    actions = admin.get(f"/servers/{server_id}/os-instance-actions", "2.21").json()["instanceActions"]
    assert [a["action"] for a in actions] == ["delete", "create"]
    fault_of(admin.get(f"/servers/{server_id}/os-instance-actions", "2.20"), "itemNotFound", 404)


# -- external events --------------------------------------------------------------------------------


def test_external_events_answer_per_event_and_207_when_any_fails(admin, demo, vm) -> None:
    port_id = str(uuid.uuid4())
    unknown = str(uuid.uuid4())
    ok = admin.post("/os-server-external-events", {"events": [
        {"server_uuid": vm["id"], "name": "network-changed", "tag": port_id}]}, "2.1")
    assert ok.status_code == 200, ok.text
    assert ok.json()["events"] == [{"server_uuid": vm["id"], "name": "network-changed", "tag": port_id,
                                    "code": 200, "status": "completed"}]
    mixed = admin.post("/os-server-external-events", {"events": [
        {"server_uuid": vm["id"], "name": "network-vif-plugged", "status": "completed", "tag": port_id},
        {"server_uuid": unknown, "name": "network-vif-deleted", "tag": port_id}]}, "2.1")
    assert mixed.status_code == 207
    assert [(e["code"], e["status"]) for e in mixed.json()["events"]] == [(200, "completed"), (404, "failed")]
    fault_of(demo.post("/os-server-external-events", {"events": [
        {"server_uuid": vm["id"], "name": "network-changed"}]}), "forbidden", 403)
    assert admin.get(f"/servers/{vm['id']}").json()["server"]["status"] == "ACTIVE"


# -- diagnostics and hypervisors -----------------------------------------------------------------------


def test_diagnostics_list_the_guest_interfaces_in_the_2_48_format(admin, demo, vm, demo_vm, sdk) -> None:
    diagnostics = admin.get(f"/servers/{vm['id']}/diagnostics", "2.48").json()
    (port,) = sdk.network.ports(device_id=vm["id"])
    assert [nic["mac_address"] for nic in diagnostics["nic_details"]] == [port.mac_address]
    assert diagnostics["nic_details"][0]["rx_octets"] is None and diagnostics["num_nics"] == 1
    assert (diagnostics["state"], diagnostics["driver"], diagnostics["config_drive"]) == ("running", "libvirt",
                                                                                          False)
    assert diagnostics["memory_details"] == {"maximum": 512, "used": None} and diagnostics["num_cpus"] == 1
    legacy = admin.get(f"/servers/{vm['id']}/diagnostics", "2.47").json()
    assert f"tap{port.id[:11]}_rx" in legacy
    fault_of(demo.get(f"/servers/{demo_vm['id']}/diagnostics"), "forbidden", 403)
    fault_of(demo.get(f"/servers/{vm['id']}/diagnostics"), "itemNotFound", 404)


def test_bare_metal_servers_have_no_diagnostics_as_with_nova_on_ironic(admin, seeded, servers) -> None:
    server_id = admin.boot(unique("bm"), seeded, flavorRef="3")
    servers.append(server_id)
    server = admin.wait(server_id, timeout=120)
    assert server["status"] == "ACTIVE", server.get("fault")
    assert server["OS-EXT-SRV-ATTR:host"] == "ironic"
    assert fault_of(admin.get(f"/servers/{server_id}/diagnostics"), "notImplemented", 501) == \
        "The requested functionality is not supported."


def test_hypervisors_by_microversion(admin, demo, vm) -> None:
    listed = admin.get("/os-hypervisors", "2.53").json()["hypervisors"]
    assert {h["hypervisor_hostname"] for h in listed} >= {"compute-1", "compute-2"}
    assert all(uuid.UUID(h["id"]) and set(h) == {"id", "hypervisor_hostname", "state", "status"} for h in listed)
    old = admin.get("/os-hypervisors/detail", "2.87").json()["hypervisors"]
    host = next(h for h in old if h["hypervisor_hostname"] == vm["OS-EXT-SRV-ATTR:host"])
    assert host["running_vms"] >= 1 and host["vcpus_used"] >= 1 and "uptime" not in host
    new = admin.get("/os-hypervisors/detail", "2.88", params={"with_servers": "true"}).json()["hypervisors"]
    host = next(h for h in new if h["hypervisor_hostname"] == vm["OS-EXT-SRV-ATTR:host"])
    assert "vcpus" not in host and " up " in host["uptime"] and vm["id"] in [s["uuid"] for s in host["servers"]]
    shown = admin.get(f"/os-hypervisors/{host['id']}", "2.88").json()["hypervisor"]
    assert shown["hypervisor_hostname"] == host["hypervisor_hostname"]
    fault_of(admin.get("/os-hypervisors/not-a-uuid", "2.88"), "badRequest", 400)
    assert isinstance(admin.get("/os-hypervisors", "2.1").json()["hypervisors"][0]["id"], int)
    fault_of(demo.get("/os-hypervisors"), "forbidden", 403)


# -- isolation and policy ----------------------------------------------------------------------------


def test_another_projects_server_is_404_everywhere(demo, demo_sdk, sdk, vm, admin, demo_vm) -> None:
    for method, path in (("GET", f"/servers/{vm['id']}"), ("DELETE", f"/servers/{vm['id']}"),
                         ("GET", f"/servers/{vm['id']}/os-interface"),
                         ("GET", f"/servers/{vm['id']}/os-instance-actions")):
        fault_of(demo.call(method, path), "itemNotFound", 404)
    fault_of(demo.post(f"/servers/{vm['id']}/os-interface", {"interfaceAttachment": {}}), "itemNotFound", 404)
    assert demo_sdk.compute.find_server(vm["name"]) is None
    demo_ids = [s["id"] for s in demo.get("/servers").json()["servers"]]
    assert demo_vm["id"] in demo_ids and vm["id"] not in demo_ids
    fault_of(demo.get("/servers", params={"all_tenants": "1"}), "forbidden", 403)
    fault_of(demo.get("/servers/detail", params={"all_projects": "true"}), "forbidden", 403)
    # a non-admin's project filter is dropped (nova's remove_invalid_options), never obeyed
    assert vm["id"] not in [s["id"] for s in demo.get(
        "/servers", params={"project_id": vm["tenant_id"]}).json()["servers"]]
    everyone = [s["id"] for s in admin.get("/servers", params={"all_tenants": "True"}).json()["servers"]]
    assert {vm["id"], demo_vm["id"]} <= set(everyone)
    assert demo_vm["id"] in [s.id for s in sdk.compute.servers(all_projects=True)]
    assert demo_vm["id"] in [s["id"] for s in admin.get(
        "/servers", params={"project_id": demo_vm["tenant_id"], "all_tenants": ""}).json()["servers"]]
    # without all_tenants nova ignores the project an admin names (LP #1185290): its own are listed
    assert demo_vm["id"] not in [s["id"] for s in admin.get(
        "/servers", params={"tenant_id": demo_vm["tenant_id"]}).json()["servers"]]
    assert demo_vm["id"] not in [s["id"] for s in admin.get("/servers").json()["servers"]]
    assert admin.get(f"/servers/{demo_vm['id']}").status_code == 200  # admins see every project


def test_a_reader_can_look_but_not_touch(reader, demo_vm, seeded) -> None:
    assert reader.get(f"/servers/{demo_vm['id']}").status_code == 200
    assert demo_vm["id"] in [s["id"] for s in reader.get("/servers").json()["servers"]]
    name = unique("by-reader")
    fault_of(reader.post("/servers", {"server": {"name": name, "flavorRef": "1", "imageRef": seeded["image"],
                                                 "networks": "none"}}), "forbidden", 403)
    fault_of(reader.delete(f"/servers/{demo_vm['id']}"), "forbidden", 403)
    fault_of(reader.post(f"/servers/{demo_vm['id']}/os-interface",
                         {"interfaceAttachment": {"net_id": seeded["network"]}}), "forbidden", 403)
    port_id = reader.get(f"/servers/{demo_vm['id']}/os-interface").json()["interfaceAttachments"][0]["port_id"]
    fault_of(reader.delete(f"/servers/{demo_vm['id']}/os-interface/{port_id}"), "forbidden", 403)
    assert reader.get(f"/servers/{demo_vm['id']}").json()["server"]["status"] == "ACTIVE"
    assert reader.get("/servers", params={"name": name}).json()["servers"] == []


# -- bad input: 400, nova's envelope, nothing written ---------------------------------------------------


def _server(seeded: dict[str, str], name: str, **extra: Any) -> dict:
    return {"server": {"name": name, "flavorRef": "1", "imageRef": seeded["image"],
                       "networks": [{"uuid": seeded["network"]}], **extra}}


BAD_SERVERS: list[tuple[str, str, Any]] = [
    ("unknown field", LATEST, lambda s, n: {"server": {**_server(s, n)["server"], "colour": "red"}}),
    ("unknown top-level field", LATEST, lambda s, n: {**_server(s, n), "extra": 1}),
    ("name is a number", LATEST, lambda s, n: {"server": {**_server(s, n)["server"], "name": 42}}),
    ("name with leading space", LATEST, lambda s, n: _server(s, " " + n)),
    ("no name", LATEST, lambda s, n: {"server": {k: v for k, v in _server(s, n)["server"].items()
                                                 if k != "name"}}),
    ("no networks from 2.37", "2.37", lambda s, n: {"server": {k: v for k, v in _server(s, n)["server"].items()
                                                               if k != "networks"}}),
    ("networks auto before 2.37", "2.36", lambda s, n: _server(s, n, networks="auto")),
    ("networks neither auto nor none", LATEST, lambda s, n: _server(s, n, networks="all")),
    ("network uuid not a uuid", LATEST, lambda s, n: _server(s, n, networks=[{"uuid": "private"}])),
    ("port not a uuid", LATEST, lambda s, n: _server(s, n, networks=[{"port": "p1"}])),
    ("unknown network field", LATEST, lambda s, n: _server(s, n, networks=[{"uuid": s["network"], "x": 1}])),
    ("network tag in 2.37", "2.37", lambda s, n: _server(s, n, networks=[{"uuid": s["network"], "tag": "t"}])),
    ("bad fixed ip", LATEST, lambda s, n: _server(s, n, networks=[{"uuid": s["network"], "fixed_ip": "10.0.0"}])),
    ("min_count above max_count", LATEST, lambda s, n: _server(s, n, min_count=3, max_count=2)),
    ("max_count 0", LATEST, lambda s, n: _server(s, n, max_count=0)),
    ("imageRef not a uuid", LATEST, lambda s, n: _server(s, n, imageRef="cirros")),
    ("unknown image", LATEST, lambda s, n: _server(s, n, imageRef=str(uuid.uuid4()))),
    ("unknown flavor", LATEST, lambda s, n: _server(s, n, flavorRef="no-such-flavor")),
    ("unknown network", LATEST, lambda s, n: _server(s, n, networks=[{"uuid": str(uuid.uuid4())}])),
    ("metadata value a number", LATEST, lambda s, n: _server(s, n, metadata={"a": 1})),
    ("metadata not an object", LATEST, lambda s, n: _server(s, n, metadata=["a"])),
    ("description before 2.19", "2.18", lambda s, n: _server(s, n, description="d")),
    ("bdm to a volume", LATEST, lambda s, n: _server(s, n, block_device_mapping_v2=[
        {"source_type": "image", "uuid": s["image"], "destination_type": "volume", "boot_index": 0}])),
    ("bdm with an unknown field", LATEST, lambda s, n: _server(s, n, block_device_mapping_v2=[
        {"source_type": "image", "uuid": s["image"], "destination_type": "local", "bogus": 1}])),
    ("another availability zone", LATEST, lambda s, n: _server(s, n, availability_zone="az-2")),
    ("another security group", LATEST, lambda s, n: _server(s, n, security_groups=[{"name": "web"}])),
    ("user data not base64", LATEST, lambda s, n: _server(s, n, user_data="not base64!")),
]


@pytest.mark.parametrize(("case", "version", "make"), BAD_SERVERS, ids=[case for case, _, _ in BAD_SERVERS])
def test_bad_server_bodies_are_400_and_create_nothing(admin, seeded, case, version, make) -> None:
    name = unique("bad")
    fault_of(admin.post("/servers", make(seeded, name), version), "badRequest", 400)
    assert admin.named(name) == []


def test_malformed_requests_are_400_never_500(admin, seeded) -> None:
    name = unique("raw")
    for content in (b"{not json", b"[]", b'"server"', b'{"server": []}', b""):
        response = admin.call("POST", "/servers", content=content, headers={"Content-Type": "application/json"})
        fault_of(response, "badRequest", 400)
    assert admin.named(name) == []
    ok_bdm = _server(seeded, name, block_device_mapping_v2=[
        {"source_type": "image", "uuid": seeded["image"], "destination_type": "local", "boot_index": 0,
         "delete_on_termination": True}])
    accepted = admin.post("/servers", ok_bdm)  # the CLI's own mapping is accepted
    assert accepted.status_code == 202
    admin.wait(accepted.json()["server"]["id"])
    assert admin.delete(f"/servers/{accepted.json()['server']['id']}").status_code == 204


BAD_OTHERS: list[tuple[str, str, Any]] = [
    ("/servers/{vm}/os-interface", LATEST, {"interfaceAttachment": {"port_id": "not-a-uuid"}}),
    ("/servers/{vm}/os-interface", LATEST, {"interfaceAttachment": {"net_id": "{net}", "port_id": "{port}"}}),
    ("/servers/{vm}/os-interface", LATEST, {"interfaceAttachment": {"fixed_ips": [{"ip_address": "10.0.0.9"}]}}),
    ("/servers/{vm}/os-interface", LATEST, {"interfaceAttachment": {"net_id": "{net}", "colour": "red"}}),
    ("/servers/{vm}/os-interface", LATEST, {"interfaceAttachment": {"net_id": "{net}", "fixed_ips": []}}),
    ("/os-server-external-events", LATEST, {"events": []}),
    ("/os-server-external-events", LATEST, {"nope": []}),
    ("/os-server-external-events", LATEST, {"events": [{"server_uuid": "{vm}", "name": "network-bounced"}]}),
    ("/os-server-external-events", LATEST, {"events": [{"server_uuid": "x", "name": "network-changed"}]}),
    ("/os-server-external-events", LATEST, {"events": [{"server_uuid": "{vm}", "name": "network-changed",
                                                        "status": "done"}]}),
    ("/os-server-external-events", LATEST, {"events": [{"server_uuid": "{vm}", "name": "network-changed",
                                                        "extra": 1}]}),
    ("/flavors", LATEST, {"flavor": {"name": "{name}", "ram": "lots", "vcpus": 1, "disk": 1}}),
    ("/flavors", LATEST, {"flavor": {"name": "{name}", "ram": 1, "disk": 1}}),
    ("/flavors", "2.54", {"flavor": {"name": "{name}", "ram": 1, "vcpus": 1, "disk": 1, "description": "d"}}),
    ("/flavors", LATEST, {"flavor": {"name": "{name}", "ram": 1, "vcpus": 0, "disk": 1}}),
]


@pytest.mark.parametrize(("path", "version", "body"), BAD_OTHERS)
def test_bad_interface_event_and_flavor_bodies_are_400(admin, vm, seeded, path, version, body) -> None:
    name = unique("bad-flavor")
    values = {"{vm}": vm["id"], "{net}": seeded["network"], "{port}": str(uuid.uuid4()), "{name}": name}

    def fill(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        return values.get(value, value) if isinstance(value, str) else value

    ports_before = len(admin.get(f"/servers/{vm['id']}/os-interface").json()["interfaceAttachments"])
    fault_of(admin.post(fill(path), fill(body), version), "badRequest", 400)
    assert len(admin.get(f"/servers/{vm['id']}/os-interface").json()["interfaceAttachments"]) == ports_before
    assert name not in [f["name"] for f in admin.get("/flavors", params={"is_public": "None"}).json()["flavors"]]


def test_bad_query_parameters_are_400(admin) -> None:
    for params in ({"limit": "-1"}, {"limit": "many"}, {"all_tenants": "perhaps"}, {"changes-since": "yesterday"},
                   {"sort_dir": "sideways"}, {"metadata": "x"}):
        fault_of(admin.get("/servers/detail", params=params), "badRequest", 400)
    fault_of(admin.get("/flavors", params={"is_public": "maybe"}), "badRequest", 400)
    fault_of(admin.get("/flavors", params={"minRam": "big"}), "badRequest", 400)


def test_a_name_filter_that_is_no_regex_is_400(demo, demo_vm) -> None:
    # nova matches the name filter as a regular expression; one that does not compile is the
    # caller's mistake, refused before anything is read (api/compute/server_filters.py)
    before = demo.get("/servers").json()["servers"]
    assert demo_vm["id"] in [server["id"] for server in before]
    for path in ("/servers", "/servers/detail"):
        message = fault_of(demo.get(path, params={"name": "("}), "badRequest", 400)
        assert message == "Invalid input for query parameters name. Value: (. Not a valid regular expression"
    assert demo.get("/servers").json()["servers"] == before


# -- seed 004 through the API: diagnostics show what the cache does not ---------------------------------


@pytest.fixture(scope="module")
def racing_clouds(tmp_path_factory) -> Iterator[dict[str, LiveCloud]]:
    """Two more servers whose interface attach sleeps before the driver plug: one emulating nova."""
    pause = "compute.attach_interface.before_driver_attach=sleep:1.5*1"
    clouds: dict[str, LiveCloud] = {}
    try:
        clouds["upstream"] = start(tmp_path_factory.mktemp("upstream"), "--fault", pause,
                                   "--emulate-bug", "zombie-interface-on-attach-race")
        clouds["tether"] = start(tmp_path_factory.mktemp("tether"), "--fault", pause)
        yield clouds
    finally:
        for cloud in clouds.values():
            cloud.stop()


@pytest.mark.parametrize("flavour", ["upstream", "tether"])
def test_a_port_deleted_during_attach_leaves_a_zombie_only_upstream(racing_clouds, flavour) -> None:
    cloud = racing_clouds[flavour]
    sdk = cloud.connect("tether")
    nova = Nova(cloud, sdk.session.get_token())
    image, network = sdk.image.find_image("cirros"), sdk.network.find_network("private")
    server_id = nova.boot("racer", {"image": image.id, "network": network.id})
    nova.wait(server_id)
    port = sdk.network.create_port(network_id=network.id, name="doomed")
    outcome: dict[str, httpx.Response] = {}

    def attach() -> None:
        outcome["attach"] = nova.post(f"/servers/{server_id}/os-interface", {"interfaceAttachment": {
            "port_id": port.id}}, "2.70")

    attacher = threading.Thread(target=attach)
    attacher.start()
    time.sleep(0.5)  # the attach is asleep before plugging: now the port goes
    sdk.network.delete_port(port.id)
    attacher.join(30)
    # as in seed 004's report: "Port id ... could not be found. (HTTP 404)"
    assert fault_of(outcome["attach"], "itemNotFound", 404) == f"Port id {port.id} could not be found."
    time.sleep(0.3)  # let the port-deleted event run
    listed = [i["port_id"] for i in nova.get(f"/servers/{server_id}/os-interface").json()["interfaceAttachments"]]
    cached = {a["OS-EXT-IPS-MAC:mac_addr"] for a in nova.get(f"/servers/{server_id}").json()["server"][
        "addresses"]["private"]}
    nics = [nic["mac_address"] for nic in nova.get(f"/servers/{server_id}/diagnostics").json()["nic_details"]]
    assert port.id not in listed and port.mac_address not in cached  # the cache has forgotten the port...
    if flavour == "upstream":
        assert port.mac_address in nics  # ...but the guest still has its device: the zombie
    else:
        assert port.mac_address not in nics and len(nics) == len(cached)
    sdk.close()


# -- the real CLI ------------------------------------------------------------------------------------


def test_the_openstack_cli_drives_a_server_through_its_life(live_cloud, sdk, seeded) -> None:
    name = unique("cli")
    port = sdk.network.create_port(network_id=seeded["network"], name=unique("cli-port"))
    try:
        created = live_cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                                 "net-id=private", "--wait", name, "-f", "value", "-c", "id", "-c", "status")
        server_id, status = created.stdout.split()
        assert status == "ACTIVE" and uuid.UUID(server_id)
        assert live_cloud.cli("server", "show", name, "-f", "value", "-c", "status").stdout.strip() == "ACTIVE"
        listed = live_cloud.cli("server", "list", "--name", name, "-f", "value", "-c", "ID", "-c", "Status")
        assert listed.stdout.split() == [server_id, "ACTIVE"]
        live_cloud.cli("server", "add", "port", name, port.name)
        assert sdk.network.get_port(port.id).device_id == server_id
        events = live_cloud.cli("server", "event", "list", name, "-f", "value", "-c", "Action")
        assert events.stdout.split() == ["attach_interface", "create"]
        live_cloud.cli("server", "remove", "port", name, port.name)
        assert sdk.network.get_port(port.id).device_id == ""
        live_cloud.cli("server", "delete", "--wait", name)
        assert sdk.compute.find_server(name) is None
    finally:
        sdk.network.delete_port(port.id, ignore_missing=True)
        server = sdk.compute.find_server(name)
        if server is not None:
            sdk.compute.delete_server(server)
