"""Keypairs, quotas and limits, availability zones, services, aggregates, server groups and flavor access,
through the real `openstack` CLI and openstacksdk against a `tether serve` of this module's own (its quotas
would otherwise limit the boots of other modules sharing a server).

Each admin-only call is also tried by the seeded demo user, who gets nova's 403.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import openstack.exceptions
import pytest

from tests.live import LiveCloud, start

LATEST = "2.96"


def unique(prefix: str) -> str:
    return f"res-{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    live = start(tmp_path_factory.mktemp("resources"))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def admin(cloud: LiveCloud):
    connection = cloud.connect("tether")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def demo(cloud: LiveCloud):
    connection = cloud.connect("tether-demo")
    yield connection
    connection.close()


def cli_json(cloud: LiveCloud, *args: str, as_demo: bool = False) -> object:
    result = cloud.cli(*args, "-f", "json", cloud="tether-demo" if as_demo else "tether")
    return json.loads(result.stdout)


def refused(cloud: LiveCloud, *args: str, as_demo: bool = True) -> str:
    result = cloud.cli(*args, cloud="tether-demo" if as_demo else "tether", check=False)
    assert result.returncode != 0, result.stdout
    return result.stderr


def raw(connection, method: str, path: str, version: str = LATEST, **kwargs) -> httpx.Response:
    """A call to /compute/v2.1 as the connection's user, at a chosen microversion."""
    headers = {"X-Auth-Token": connection.auth_token, "OpenStack-API-Version": f"compute {version}"}
    endpoint = connection.compute.get_endpoint().rstrip("/")
    return httpx.request(method, f"{endpoint}{path}", headers=headers, timeout=60, **kwargs)


def fault(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    (body,) = response.json().values()
    assert body["code"] == status
    return body["message"]


def wait_active(connection, server_id: str) -> None:
    connection.compute.wait_for_server(connection.compute.get_server(server_id), interval=0.05, wait=60)


# -- keypairs -------------------------------------------------------------------------------------


def test_keypair_create_list_show_delete_through_the_cli(cloud: LiveCloud, tmp_path: Path) -> None:
    name = unique("kp")
    private_key = cloud.cli("keypair", "create", name, cloud="tether-demo").stdout
    assert "PRIVATE KEY" in private_key
    listed = {item["Name"]: item for item in cli_json(cloud, "keypair", "list", as_demo=True)}
    assert listed[name]["Type"] == "ssh"
    shown = cli_json(cloud, "keypair", "show", name, as_demo=True)
    assert shown["fingerprint"] == listed[name]["Fingerprint"]
    # user-scoped: the admin does not see the demo user's key
    assert name not in {item["Name"] for item in cli_json(cloud, "keypair", "list")}
    assert f"No Keypair found for {name}" in refused(cloud, "keypair", "show", name, as_demo=False)
    cloud.cli("keypair", "delete", name, cloud="tether-demo")
    assert name not in {item["Name"] for item in cli_json(cloud, "keypair", "list", as_demo=True)}


def test_an_imported_public_key_keeps_its_text_and_gets_nova_s_md5_fingerprint(cloud: LiveCloud,
                                                                                tmp_path: Path) -> None:
    key = tmp_path / "id"
    subprocess.run(["ssh-keygen", "-t", "rsa", "-b", "2048", "-f", str(key), "-N", "", "-q"], check=True)
    expected = subprocess.run(["ssh-keygen", "-l", "-E", "md5", "-f", f"{key}.pub"], check=True,
                              capture_output=True, text=True).stdout.split()[1].removeprefix("MD5:")
    name = unique("imported")
    created = cli_json(cloud, "keypair", "create", "--public-key", f"{key}.pub", name)
    assert created["fingerprint"] == expected
    (tmp_path / "bad.pub").write_text("ssh-rsa not-a-key\n")
    assert "Keypair data is invalid: failed to generate fingerprint" in refused(
        cloud, "keypair", "create", "--public-key", str(tmp_path / "bad.pub"), unique("bad"), as_demo=False)
    assert f"Key pair '{name}' already exists." in refused(
        cloud, "keypair", "create", "--public-key", f"{key}.pub", name, as_demo=False)


def test_nova_generates_a_key_before_2_92_and_requires_one_from_it(admin) -> None:
    name = unique("gen")
    response = raw(admin, "POST", "/os-keypairs", "2.91", json={"keypair": {"name": name}})
    assert response.status_code == 201, response.text
    body = response.json()["keypair"]
    assert body["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert body["public_key"].startswith("ssh-rsa ") and body["public_key"].endswith(" Generated-by-Nova")
    assert "'public_key' is a required property" in fault(
        raw(admin, "POST", "/os-keypairs", "2.92", json={"keypair": {"name": unique("gen")}}), 400)
    x509 = raw(admin, "POST", "/os-keypairs", "2.91", json={"keypair": {"name": unique("x"), "type": "x509"}})
    assert x509.status_code == 201 and x509.json()["keypair"]["public_key"].startswith("-----BEGIN CERTIFICATE")
    assert raw(admin, "DELETE", f"/os-keypairs/{name}", "2.1").status_code == 202
    assert fault(raw(admin, "DELETE", f"/os-keypairs/{name}"), 404).startswith(f"Keypair {name} not found")


def test_keypairs_page_by_name_from_2_35_and_admins_reach_other_users_keys(admin, demo) -> None:
    names = sorted(unique(f"page{i}") for i in range(3))
    for name in names:
        assert raw(demo, "POST", "/os-keypairs", "2.91", json={"keypair": {"name": name}}).status_code == 201
    mine = [item["keypair"]["name"] for item in raw(demo, "GET", "/os-keypairs").json()["keypairs"]]
    first = raw(demo, "GET", "/os-keypairs", params={"limit": 1, "marker": names[0]}).json()
    assert [item["keypair"]["name"] for item in first["keypairs"]] == [mine[mine.index(names[0]) + 1]]
    assert "keypairs_links" in first
    demo_user = demo.current_user_id
    theirs = raw(admin, "GET", "/os-keypairs", params={"user_id": demo_user}).json()["keypairs"]
    assert set(names) <= {item["keypair"]["name"] for item in theirs}
    assert "os-keypairs:index" in fault(raw(demo, "GET", "/os-keypairs",
                                            params={"user_id": admin.current_user_id}), 403)
    assert raw(admin, "DELETE", f"/os-keypairs/{names[0]}", params={"user_id": demo_user}).status_code == 204


def test_server_create_takes_the_users_key_and_shows_its_name(cloud: LiveCloud, demo) -> None:
    name = unique("boot-key")
    cloud.cli("keypair", "create", name, cloud="tether-demo")
    server = cli_json(cloud, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                      "net-id=private", "--key-name", name, "--wait", unique("vm"), as_demo=True)
    assert server["key_name"] == name
    demo.compute.delete_server(server["id"])
    image = demo.image.find_image("cirros")
    network = demo.network.find_network("private")
    with pytest.raises(openstack.exceptions.BadRequestException, match=r"Invalid key_name provided\."):
        demo.compute.create_server(name=unique("vm"), flavor_id="1", image_id=image.id,
                                   networks=[{"uuid": network.id}], key_name=unique("nokey"))


# -- quotas and limits ---------------------------------------------------------------------------


@pytest.fixture
def demo_quota(admin, demo) -> Iterator[str]:
    """The demo project, its quota set back to the defaults afterwards."""
    project = demo.current_project_id
    yield project
    admin.compute.revert_quota_set(project)


def boot(connection, name: str, flavor: str = "1") -> str:
    image = connection.image.find_image("cirros")
    network = connection.network.find_network("private")
    return connection.compute.create_server(name=name, flavor_id=flavor, image_id=image.id,
                                            networks=[{"uuid": network.id}]).id


def live_servers(connection) -> list:
    return list(connection.compute.servers())


def test_quota_show_and_limits_show_the_project_s_limits_and_use(cloud: LiveCloud, demo, demo_quota) -> None:
    quota = {row["Resource"]: row["Limit"] for row in cli_json(cloud, "quota", "show", "--compute", as_demo=True)}
    assert (quota["instances"], quota["cores"], quota["ram"], quota["key-pairs"]) == (10, 20, 51200, 100)
    server = boot(demo, unique("lim"))
    limits = {row["Name"]: row["Value"]
              for row in cli_json(cloud, "limits", "show", "--absolute", as_demo=True)}
    count = len(live_servers(demo))
    assert limits["max_total_instances"] == 10 and limits["total_instances_used"] == count
    assert limits["total_ram_used"] == 512 * count
    demo.compute.delete_server(server)


def test_a_boot_beyond_the_instances_quota_is_refused_with_nova_s_403(admin, demo, demo_quota) -> None:
    used = len(live_servers(demo))
    admin.compute.update_quota_set(demo_quota, instances=used + 1)
    first = boot(demo, unique("q"))
    with pytest.raises(openstack.exceptions.ForbiddenException) as refusal:
        boot(demo, unique("q"))
    assert f"Quota exceeded for instances: Requested 1, but already used {used + 1} of {used + 1} instances" \
        in str(refusal.value)
    demo.compute.delete_server(first)


def test_cores_and_ram_quotas_count_each_flavor(admin, demo, demo_quota) -> None:
    used_cores = sum(1 for _ in live_servers(demo))  # every flavor here has one vcpu
    admin.compute.update_quota_set(demo_quota, cores=used_cores)
    with pytest.raises(openstack.exceptions.ForbiddenException,
                       match=f"Quota exceeded for cores: Requested 1, but already used {used_cores} of "
                             f"{used_cores} cores"):
        boot(demo, unique("c"))
    admin.compute.update_quota_set(demo_quota, cores=-1, ram=1024)
    used_ram = 512 * len(live_servers(demo))
    if used_ram + 2048 > 1024:
        with pytest.raises(openstack.exceptions.ForbiddenException, match="Quota exceeded for ram: Requested 2048"):
            boot(demo, unique("r"), flavor="2")


def test_racing_boots_for_the_last_instance_never_both_win(cloud: LiveCloud, admin, demo, demo_quota) -> None:
    from concurrent.futures import ThreadPoolExecutor

    used = len(live_servers(demo))
    admin.compute.update_quota_set(demo_quota, instances=used + 1)
    clients = [cloud.connect("tether-demo") for _ in range(4)]

    def attempt(client) -> str | None:
        try:
            return boot(client, unique("race"))
        except openstack.exceptions.ForbiddenException:
            return None

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(attempt, clients))
    won = [server for server in results if server]
    assert len(won) == 1, results
    assert len(live_servers(demo)) == used + 1
    demo.compute.delete_server(won[0])


def test_quota_update_is_for_admins_and_bounded_by_use(admin, demo, demo_quota) -> None:
    assert "os-quota-sets:update" in fault(raw(demo, "PUT", f"/os-quota-sets/{demo_quota}",
                                               json={"quota_set": {"instances": 50}}), 403)
    assert "os-quota-sets:delete" in fault(raw(demo, "DELETE", f"/os-quota-sets/{demo_quota}"), 403)
    assert "os-quota-sets:show" in fault(raw(demo, "GET", f"/os-quota-sets/{admin.current_project_id}"), 403)
    server = boot(demo, unique("min"))
    message = fault(raw(admin, "PUT", f"/os-quota-sets/{demo_quota}", json={"quota_set": {"instances": 0}}), 400)
    assert message.startswith("Quota limit 0 for instances must be greater than or equal to already used")
    forced = raw(admin, "PUT", f"/os-quota-sets/{demo_quota}", json={"quota_set": {"instances": 0, "force": True}})
    assert forced.status_code == 200 and forced.json()["quota_set"]["instances"] == 0
    assert "floating_ips" in fault(raw(admin, "PUT", f"/os-quota-sets/{demo_quota}",
                                       json={"quota_set": {"floating_ips": 3}}), 400)
    detail = raw(demo, "GET", f"/os-quota-sets/{demo_quota}/detail").json()["quota_set"]
    assert detail["instances"]["limit"] == 0 and detail["instances"]["in_use"] >= 1
    user = raw(admin, "PUT", f"/os-quota-sets/{demo_quota}", params={"user_id": demo.current_user_id},
               json={"quota_set": {"key_pairs": 50}})
    assert user.status_code == 200 and user.json()["quota_set"]["key_pairs"] == 50
    assert raw(admin, "DELETE", f"/os-quota-sets/{demo_quota}").status_code == 202
    assert raw(demo, "GET", f"/os-quota-sets/{demo_quota}").json()["quota_set"]["instances"] == 10
    demo.compute.delete_server(server)


def test_keypairs_are_counted_against_the_user_s_quota(admin, demo, demo_quota) -> None:
    have = len(list(demo.compute.keypairs()))
    admin.compute.update_quota_set(demo_quota, key_pairs=have)
    message = fault(raw(demo, "POST", "/os-keypairs", "2.91", json={"keypair": {"name": unique("over")}}), 403)
    assert message == "Quota exceeded, too many key pairs."


# -- availability zones, services, aggregates, hypervisors -----------------------------------------


def test_zones_services_aggregates_and_hypervisors_through_the_cli(cloud: LiveCloud) -> None:
    zones = cli_json(cloud, "availability", "zone", "list", as_demo=True)
    assert {"Zone Name": "nova", "Zone Status": "available"} in zones
    services = cli_json(cloud, "compute", "service", "list")
    assert {(service["Binary"], service["Host"]) for service in services} >= {("nova-compute", "compute-1")}
    name, zone = unique("agg"), unique("az")
    created = cli_json(cloud, "aggregate", "create", "--zone", zone, name)
    assert created["availability_zone"] == zone
    added = cli_json(cloud, "aggregate", "add", "host", name, "compute-1")
    assert added["hosts"] == ["compute-1"]
    assert name in {row["Name"] for row in cli_json(cloud, "aggregate", "list")}
    assert zone in {row["Zone Name"] for row in cli_json(cloud, "availability", "zone", "list", as_demo=True)}
    assert {row["Zone"] for row in cli_json(cloud, "compute", "service", "list", "--host", "compute-1")} == {zone}
    shown = cli_json(cloud, "hypervisor", "show", "compute-1")
    assert name in shown["aggregates"] and shown["state"] == "up"
    stats = cli_json(cloud, "hypervisor", "stats", "show")
    assert stats["count"] >= 2 and stats["vcpus"] >= 128
    cloud.cli("aggregate", "remove", "host", name, "compute-1")
    cloud.cli("aggregate", "delete", name)
    assert name not in {row["Name"] for row in cli_json(cloud, "aggregate", "list")}


def test_the_demo_user_gets_nova_s_403_on_each_admin_call(cloud: LiveCloud, admin, demo) -> None:
    for args in (("compute", "service", "list"), ("aggregate", "list"), ("aggregate", "create", unique("agg")),
                 ("hypervisor", "list"),
                 ("compute", "service", "set", "--disable", "compute-1", "nova-compute")):
        assert "Policy doesn't allow" in refused(cloud, *args), args
    # the CLI reads no error from `hypervisor stats show` (nova's 403 crashes it too): the API says it
    assert "os-hypervisors:list" in fault(raw(demo, "GET", "/os-hypervisors/statistics", "2.87"), 403)
    # and `availability zone list --long` falls back to the plain list on nova's 403
    assert "os-availability-zone:detail" in fault(raw(demo, "GET", "/os-availability-zone/detail"), 403)
    assert "os-quota-sets:update" in fault(raw(demo, "PUT", f"/os-quota-sets/{demo.current_project_id}",
                                               json={"quota_set": {"cores": 99}}), 403)


def test_a_disabled_compute_service_takes_no_new_servers(cloud: LiveCloud, admin) -> None:
    services = {row["Host"]: row["ID"] for row in cli_json(cloud, "compute", "service", "list")}
    try:
        for host in services:
            cloud.cli("compute", "service", "set", "--disable", "--disable-reason", "maintenance", host,
                      "nova-compute")
        listed = cli_json(cloud, "compute", "service", "list", "--long")
        assert {row["Disabled Reason"] for row in listed} == {"maintenance"}
        assert {row["Zone Status"] for row in cli_json(cloud, "availability", "zone", "list")} == {"not available"}
        server = boot(admin, unique("nohost"))
        found = admin.compute.wait_for_server(admin.compute.get_server(server), status="ERROR", interval=0.05,
                                              wait=60)
        assert "No valid host was found" in found.fault["message"]
        admin.compute.delete_server(server)
    finally:
        for host in services:
            cloud.cli("compute", "service", "set", "--enable", host, "nova-compute")
    down = raw(admin, "PUT", f"/os-services/{services['compute-1']}", json={"forced_down": True})
    assert down.status_code == 200 and down.json()["service"]["state"] == "down"
    up = raw(admin, "PUT", f"/os-services/{services['compute-1']}", json={"forced_down": False})
    assert up.json()["service"]["state"] == "up"
    assert fault(raw(admin, "PUT", f"/os-services/{services['compute-1']}", json={}), 400) == \
        "No updates were requested. Fields 'status' or 'forced_down' should be specified."


def test_aggregate_errors_are_nova_s(admin) -> None:
    name = unique("agg")
    created = raw(admin, "POST", "/os-aggregates", json={"aggregate": {"name": name}}).json()["aggregate"]
    assert fault(raw(admin, "POST", "/os-aggregates", json={"aggregate": {"name": name}}), 409) == \
        f"Aggregate {name} already exists."
    action = f"/os-aggregates/{created['id']}/action"
    assert fault(raw(admin, "POST", action, json={"add_host": {"host": "nowhere"}}), 404) == \
        "Compute host nowhere could not be found."
    assert raw(admin, "POST", action, json={"add_host": {"host": "compute-2"}}).status_code == 200
    assert fault(raw(admin, "POST", action, json={"add_host": {"host": "compute-2"}}), 409) == \
        f"Aggregate {created['id']} already has host compute-2."
    assert "not empty" in fault(raw(admin, "DELETE", f"/os-aggregates/{created['id']}"), 400)
    meta = raw(admin, "POST", action, json={"set_metadata": {"metadata": {"ssd": "true"}}}).json()["aggregate"]
    assert meta["metadata"] == {"ssd": "true"}
    cleared = raw(admin, "POST", action, json={"set_metadata": {"metadata": {"ssd": None}}}).json()["aggregate"]
    assert cleared["metadata"] == {}
    raw(admin, "POST", action, json={"remove_host": {"host": "compute-2"}})
    assert raw(admin, "DELETE", f"/os-aggregates/{created['id']}").status_code == 200


# -- server groups ----------------------------------------------------------------------------------


def hosts_of(connection, server_ids: list[str]) -> list[str]:
    return [connection.compute.get_server(server).hypervisor_hostname for server in server_ids]


def test_server_group_create_list_show_delete_through_the_cli(cloud: LiveCloud) -> None:
    name = unique("grp")
    created = cli_json(cloud, "server", "group", "create", "--policy", "soft-anti-affinity", name, as_demo=True)
    assert created["policy"] == "soft-anti-affinity" and created["members"] == []
    assert name in {row["Name"] for row in cli_json(cloud, "server", "group", "list", as_demo=True)}
    shown = cli_json(cloud, "server", "group", "show", name, as_demo=True)
    assert shown["id"] == created["id"]
    cloud.cli("server", "group", "delete", name, cloud="tether-demo")
    assert name not in {row["Name"] for row in cli_json(cloud, "server", "group", "list", as_demo=True)}


def test_anti_affinity_members_land_on_distinct_hosts_and_a_third_finds_no_valid_host(cloud: LiveCloud,
                                                                                       admin) -> None:
    group = cli_json(cloud, "server", "group", "create", "--policy", "anti-affinity", unique("anti"))
    servers = []
    for _ in range(2):
        servers.append(cli_json(cloud, "server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                                "net-id=private", "--hint", f"group={group['id']}", "--wait",
                                unique("anti"))["id"])
    assert len(set(hosts_of(admin, servers))) == 2
    third = boot_in_group(admin, group["id"])
    failed = admin.compute.wait_for_server(admin.compute.get_server(third), status="ERROR", interval=0.05,
                                           wait=60)
    assert failed.fault["message"].startswith("No valid host was found.")
    shown = raw(admin, "GET", f"/os-server-groups/{group['id']}").json()["server_group"]
    assert set(shown["members"]) == {*servers, third}
    assert raw(admin, "GET", f"/servers/{servers[0]}").json()["server"]["server_groups"] == [group["id"]]
    # nova's update answers with the server as a show does, its groups included
    updated = raw(admin, "PUT", f"/servers/{servers[0]}", json={"server": {"description": "grouped"}})
    assert updated.json()["server"]["server_groups"] == [group["id"]], updated.text
    assert "server_groups" not in raw(admin, "PUT", f"/servers/{servers[0]}", "2.70",
                                      json={"server": {"description": "grouped"}}).json()["server"]
    for server in [*servers, third]:
        admin.compute.delete_server(server)


def boot_in_group(connection, group_id: str) -> str:
    image = connection.image.find_image("cirros")
    network = connection.network.find_network("private")
    return connection.compute.create_server(name=unique("grp"), flavor_id="1", image_id=image.id,
                                            networks=[{"uuid": network.id}],
                                            scheduler_hints={"group": group_id}).id


def test_affinity_keeps_members_together_and_the_group_quota_counts_them(admin, demo, demo_quota) -> None:
    group = raw(demo, "POST", "/os-server-groups", json={"server_group": {"name": unique("aff"),
                                                                          "policy": "affinity"}})
    assert group.status_code == 200, group.text
    group_id = group.json()["server_group"]["id"]
    servers = [boot_in_group(demo, group_id) for _ in range(2)]
    for server in servers:
        wait_active(demo, server)
    assert len(set(hosts_of(admin, servers))) == 1
    admin.compute.update_quota_set(demo_quota, server_group_members=2)
    image, network = demo.image.find_image("cirros"), demo.network.find_network("private")
    with pytest.raises(openstack.exceptions.ForbiddenException, match="Quota exceeded, too many servers in group"):
        boot_in_group(demo, group_id)
    assert len([s for s in demo.compute.servers() if s.name.startswith("res-grp")]) >= 2 and image and network
    for server in servers:
        demo.compute.delete_server(server)


def test_server_group_bodies_and_errors_follow_the_microversion(admin, demo, demo_quota) -> None:
    old = raw(demo, "POST", "/os-server-groups", "2.1",
              json={"server_group": {"name": unique("old"), "policies": ["anti-affinity"]}})
    assert old.status_code == 200 and set(old.json()["server_group"]) == {"id", "name", "policies", "members",
                                                                          "metadata"}
    assert "soft-affinity" in fault(raw(demo, "POST", "/os-server-groups", "2.14",
                                        json={"server_group": {"name": "x", "policies": ["soft-affinity"]}}), 400)
    assert fault(raw(demo, "POST", "/os-server-groups", json={"server_group": {
        "name": "x", "policy": "affinity", "rules": {"max_server_per_host": 2}}}), 400) == \
        "Only anti-affinity policy supports rules."
    ruled = raw(demo, "POST", "/os-server-groups", json={"server_group": {
        "name": unique("rules"), "policy": "anti-affinity", "rules": {"max_server_per_host": 2}}})
    assert ruled.json()["server_group"]["rules"] == {"max_server_per_host": 2}
    missing = str(uuid.uuid4())
    assert fault(raw(demo, "GET", f"/os-server-groups/{missing}"), 404) == \
        f"Instance group {missing} could not be found."
    image, network = demo.image.find_image("cirros"), demo.network.find_network("private")
    refusal = raw(demo, "POST", "/servers", json={
        "server": {"name": "x", "flavorRef": "1", "imageRef": image.id, "networks": [{"uuid": network.id}]},
        "os:scheduler_hints": {"group": missing}})
    assert fault(refusal, 400) == f"Instance group {missing} could not be found."
    count = len(raw(demo, "GET", "/os-server-groups").json()["server_groups"])
    admin.compute.update_quota_set(demo_quota, server_groups=count)
    assert fault(raw(demo, "POST", "/os-server-groups", json={"server_group": {
        "name": unique("over"), "policy": "affinity"}}), 403) == "Quota exceeded, too many server groups."
    for group in raw(demo, "GET", "/os-server-groups").json()["server_groups"]:
        assert raw(demo, "DELETE", f"/os-server-groups/{group['id']}").status_code == 204


# -- flavors: access, extra specs, description -------------------------------------------------------


def test_a_private_flavor_is_seen_only_by_the_projects_it_is_shared_with(cloud: LiveCloud, admin, demo) -> None:
    name = unique("private")
    created = cli_json(cloud, "flavor", "create", "--private", "--ram", "256", "--vcpus", "1", "--disk", "1", name)
    assert created["os-flavor-access:is_public"] is False
    assert name not in {row["Name"] for row in cli_json(cloud, "flavor", "list", as_demo=True)}
    assert "No Flavor found" in refused(cloud, "flavor", "show", name)
    # `flavor set --project` resolves the project through keystone's /v3/projects first: the SDK, as it
    # sends the same POST /flavors/{id}/action, until that API is there
    admin.compute.flavor_add_tenant_access(created["id"], demo.current_project_id)
    assert name in {row["Name"] for row in cli_json(cloud, "flavor", "list", as_demo=True)}
    access = raw(admin, "GET", f"/flavors/{created['id']}/os-flavor-access").json()["flavor_access"]
    assert access == [{"flavor_id": created["id"], "tenant_id": demo.current_project_id}]
    with pytest.raises(openstack.exceptions.ForbiddenException, match="add_tenant_access"):
        demo.compute.flavor_add_tenant_access(created["id"], demo.current_project_id)
    duplicate = raw(admin, "POST", f"/flavors/{created['id']}/action",
                    json={"addTenantAccess": {"tenant": demo.current_project_id}})
    assert fault(duplicate, 409).startswith("Flavor access already exists for flavor")
    assert fault(raw(admin, "POST", "/flavors/1/action", json={"addTenantAccess": {"tenant": "x"}}), 409) == \
        "Can not add access to a public flavor."
    admin.compute.flavor_remove_tenant_access(created["id"], demo.current_project_id)
    assert name not in {row["Name"] for row in cli_json(cloud, "flavor", "list", as_demo=True)}
    cloud.cli("flavor", "delete", name)


def test_extra_specs_are_set_and_unset_by_admins_and_read_by_all(cloud: LiveCloud, admin, demo) -> None:
    name = unique("specs")
    flavor = cli_json(cloud, "flavor", "create", "--ram", "256", "--vcpus", "1", "--disk", "1", "--property",
                      "hw:cpu_policy=dedicated", name)
    cloud.cli("flavor", "set", "--property", "quota:disk_read_bytes_sec=1000", name)
    specs = raw(demo, "GET", f"/flavors/{flavor['id']}/os-extra_specs").json()["extra_specs"]
    assert specs == {"hw:cpu_policy": "dedicated", "quota:disk_read_bytes_sec": "1000"}
    assert "Policy doesn't allow" in refused(cloud, "flavor", "set", "--property", "a=b", name)
    assert "os-flavor-extra-specs:delete" in fault(
        raw(demo, "DELETE", f"/flavors/{flavor['id']}/os-extra_specs/hw:cpu_policy"), 403)
    assert fault(raw(admin, "PUT", f"/flavors/{flavor['id']}/os-extra_specs/a", json={"b": "1"}), 400) == \
        "Request body and URI mismatch"
    cloud.cli("flavor", "unset", "--property", "hw:cpu_policy", name)
    assert fault(raw(admin, "DELETE", f"/flavors/{flavor['id']}/os-extra_specs/hw:cpu_policy"), 404) == \
        f"Flavor {flavor['id']} has no extra specs with key hw:cpu_policy."
    described = raw(admin, "PUT", f"/flavors/{flavor['id']}", json={"flavor": {"description": "small"}})
    assert described.json()["flavor"]["description"] == "small"
    assert raw(admin, "PUT", f"/flavors/{flavor['id']}", "2.54",
               json={"flavor": {"description": "x"}}).status_code == 404
    cloud.cli("flavor", "delete", name)


def test_a_flavor_given_a_custom_resource_class_boots_bare_metal(cloud: LiveCloud, admin) -> None:
    name = unique("bm")
    cli_json(cloud, "flavor", "create", "--ram", "4096", "--vcpus", "1", "--disk", "40", "--property",
             "resources:CUSTOM_BAREMETAL=1", "--property", "resources:VCPU=0", name)
    server = cli_json(cloud, "server", "create", "--flavor", name, "--image", "cirros", "--nic", "net-id=private",
                      "--wait", unique("bm"))
    shown = admin.compute.get_server(server["id"])
    assert shown.hypervisor_hostname in {node.id for node in admin.baremetal.nodes()}
    admin.compute.delete_server(server["id"])
    admin.compute.wait_for_delete(shown, interval=0.1, wait=60)


def test_server_metadata_beyond_the_metadata_items_quota_is_refused(admin, demo, demo_quota) -> None:
    admin.compute.update_quota_set(demo_quota, metadata_items=2)
    image, network = demo.image.find_image("cirros"), demo.network.find_network("private")
    response = raw(demo, "POST", "/servers", json={"server": {
        "name": unique("meta"), "flavorRef": "1", "imageRef": image.id, "networks": [{"uuid": network.id}],
        "metadata": {"a": "1", "b": "2", "c": "3"}}})
    assert fault(response, 403) == "Maximum number of metadata items exceeds 2"


# -- multi-create ----------------------------------------------------------------------------------


def test_server_create_min_2_max_3_boots_three_named_as_nova_names_them(cloud: LiveCloud, admin) -> None:
    name = unique("multi")
    cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "net-id=private",
              "--min", "2", "--max", "3", "--wait", name)
    servers = sorted((s for s in admin.compute.servers(details=True) if s.name.startswith(name)),
                     key=lambda s: s.name)
    assert [s.name for s in servers] == [f"{name}-1", f"{name}-2", f"{name}-3"]
    assert {s.status for s in servers} == {"ACTIVE"}
    detail = [raw(admin, "GET", f"/servers/{s.id}").json()["server"] for s in servers]
    assert [d["OS-EXT-SRV-ATTR:launch_index"] for d in detail] == [0, 1, 2]
    assert len({d["OS-EXT-SRV-ATTR:reservation_id"] for d in detail}) == 1
    for server in servers:
        admin.compute.delete_server(server)


def test_multi_create_takes_what_the_quota_allows_between_min_and_max(admin, demo, demo_quota) -> None:
    used = len(live_servers(demo))
    admin.compute.update_quota_set(demo_quota, instances=used + 2)
    image, network = demo.image.find_image("cirros"), demo.network.find_network("private")
    server = {"name": unique("few"), "flavorRef": "1", "imageRef": image.id, "networks": [{"uuid": network.id}]}
    over = raw(demo, "POST", "/servers", json={"server": {**server, "min_count": 3, "max_count": 4}})
    assert fault(over, 403) == (f"Quota exceeded for instances: Requested 3-4, but already used {used} of "
                                f"{used + 2} instances")
    taken = raw(demo, "POST", "/servers", json={"server": {**server, "min_count": 1, "max_count": 5,
                                                           "return_reservation_id": True}})
    assert taken.status_code == 202 and set(taken.json()) == {"reservation_id"}
    mine = [s for s in demo.compute.servers() if s.name.startswith(server["name"])]
    assert sorted(s.name for s in mine) == [f"{server['name']}-1", f"{server['name']}-2"]
    port = demo.network.create_port(network_id=network.id)
    shared = raw(demo, "POST", "/servers", json={"server": {**server, "networks": [{"port": port.id}],
                                                            "max_count": 2}})
    assert "single configured port ID" in fault(shared, 400)
    for item in mine:
        demo.compute.delete_server(item)
    demo.network.delete_port(port)
