"""nova's proxies to neutron before 2.36 (security groups and their rules, floating IPs and pools) and the
server actions that put a server's ports in a group or give it a floating IP: on the live server, in raw
HTTP as Tempest and the old novaclient call them, and checked against neutron's view through openstacksdk."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.test_api_compute import Nova, fault_of, issue_token
from tests.test_compute_guest_data import boot

OLD = "2.35"


def unique(prefix: str) -> str:
    return f"np-{prefix}-{uuid.uuid4().hex[:8]}"


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


def new_group(nova: Nova, name: str | None = None) -> dict:
    response = nova.post("/os-security-groups", {"security_group": {"name": name or unique("sg"),
                                                                    "description": "d"}}, OLD)
    assert response.status_code == 200, response.text
    return response.json()["security_group"]


def test_security_groups_in_novas_shape_until_2_35(demo, sdk) -> None:
    group = new_group(demo)
    assert group["rules"] == [] and group["description"] == "d"  # neutron's egress rules are not nova's
    assert group["tenant_id"] == demo.project_id()
    assert demo.get(f"/os-security-groups/{group['id']}", OLD).json()["security_group"] == group
    listed = demo.get("/os-security-groups", OLD).json()["security_groups"]
    assert group in listed and any(g["name"] == "default" for g in listed)
    assert [(g["tenant_id"], g["name"]) for g in listed] == sorted((g["tenant_id"], g["name"]) for g in listed)
    renamed = demo.call("PUT", f"/os-security-groups/{group['id']}", OLD,
                        json={"security_group": {"name": "renamed", "description": "new"}})
    assert renamed.status_code == 200, renamed.text
    assert sdk.network.get_security_group(group["id"]).name == "renamed"
    assert demo.get("/os-security-groups", "2.36").status_code == 404
    too_long = demo.post("/os-security-groups", {"security_group": {"name": "x" * 256, "description": ""}}, OLD)
    assert "is too long" in fault_of(too_long, "badRequest", 400)
    assert fault_of(demo.get("/os-security-groups/not-a-uuid", OLD), "badRequest", 400) == \
        "Security group id should be uuid"
    assert fault_of(demo.get(f"/os-security-groups/{uuid.uuid4()}", OLD), "itemNotFound", 404)
    default = next(g for g in listed if g["name"] == "default")
    assert fault_of(demo.delete(f"/os-security-groups/{default['id']}", OLD), "badRequest", 400)
    assert demo.delete(f"/os-security-groups/{group['id']}", OLD).status_code == 202
    assert demo.get(f"/os-security-groups/{group['id']}", OLD).status_code == 404


def test_security_group_rules_as_nova_converts_them(demo, sdk) -> None:
    parent, peer = new_group(demo), new_group(demo)
    made = demo.post("/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": parent["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.1.0.0/16"}}, OLD)
    assert made.status_code == 200, made.text
    rule = made.json()["security_group_rule"]
    assert rule == {"id": rule["id"], "parent_group_id": parent["id"], "ip_protocol": "tcp", "from_port": 22,
                    "to_port": 22, "group": {}, "ip_range": {"cidr": "10.1.0.0/16"}}
    upstream = sdk.network.get_security_group_rule(rule["id"])
    assert (upstream.direction, upstream.ether_type, upstream.port_range_min) == ("ingress", "IPv4", 22)
    by_group = demo.post("/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": parent["id"], "ip_protocol": "icmp", "group_id": peer["id"]}}, OLD)
    assert by_group.status_code == 200, by_group.text
    assert by_group.json()["security_group_rule"]["group"] == {"name": peer["name"], "tenant_id": peer["tenant_id"]}
    assert (by_group.json()["security_group_rule"]["from_port"], by_group.json()["security_group_rule"]["to_port"]) \
        == (-1, -1)
    shown = demo.get(f"/os-security-groups/{parent['id']}", OLD).json()["security_group"]
    assert {r["id"] for r in shown["rules"]} == {rule["id"], by_group.json()["security_group_rule"]["id"]}
    again = demo.post("/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": parent["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22,
        "cidr": "10.1.0.0/16"}}, OLD)
    assert fault_of(again, "badRequest", 400) == f"This rule already exists in group {parent['id']}"
    for bad in ({"ip_protocol": "abc", "from_port": 1, "to_port": 2}, {"ip_protocol": "tcp", "from_port": 30,
                                                                         "to_port": 20},
                {"ip_protocol": "tcp", "from_port": "x", "to_port": 2}, {"ip_protocol": "tcp", "from_port": 0,
                                                                           "to_port": 70000}):
        refused = demo.post("/os-security-group-rules",
                            {"security_group_rule": {"parent_group_id": parent["id"], **bad}}, OLD)
        fault_of(refused, "badRequest", 400)
    missing = demo.post("/os-security-group-rules", {"security_group_rule": {
        "parent_group_id": str(uuid.uuid4()), "ip_protocol": "tcp", "from_port": 1, "to_port": 2}}, OLD)
    fault_of(missing, "itemNotFound", 404)
    assert demo.delete(f"/os-security-group-rules/{rule['id']}", OLD).status_code == 202
    assert fault_of(demo.delete(f"/os-security-group-rules/{uuid.uuid4()}", OLD), "itemNotFound", 404)
    # deleting the peer takes the rules that name it, as neutron does
    assert demo.delete(f"/os-security-groups/{peer['id']}", OLD).status_code == 202
    assert demo.get(f"/os-security-groups/{parent['id']}", OLD).json()["security_group"]["rules"] == []
    demo.delete(f"/os-security-groups/{parent['id']}", OLD)


def test_add_and_remove_a_servers_security_group(demo, made, seeded, sdk) -> None:
    server_id = boot(demo, made, seeded)
    demo.wait(server_id)
    group = new_group(demo)
    assert demo.post(f"/servers/{server_id}/action", {"addSecurityGroup": {"name": group["name"]}}).status_code \
        == 202
    port, = sdk.network.ports(device_id=server_id)
    assert group["id"] in port.security_group_ids
    names = [g["name"] for g in demo.get(f"/servers/{server_id}/os-security-groups").json()["security_groups"]]
    assert names == sorted(["default", group["name"]])
    assert demo.get(f"/servers/{server_id}").json()["server"]["security_groups"] == \
        [{"name": "default"}, {"name": group["name"]}]
    in_use = demo.delete(f"/os-security-groups/{group['id']}", OLD)
    assert "in use" in fault_of(in_use, "badRequest", 400)
    assert demo.post(f"/servers/{server_id}/action",
                     {"removeSecurityGroup": {"name": group["name"]}}).status_code == 202
    again = demo.post(f"/servers/{server_id}/action", {"removeSecurityGroup": {"name": group["name"]}})
    assert fault_of(again, "itemNotFound", 404) == \
        f"Security group {group['name']} not associated with the instance {server_id}"
    unknown = demo.post(f"/servers/{server_id}/action", {"addSecurityGroup": {"name": unique("none")}})
    assert "is not found for project" in fault_of(unknown, "itemNotFound", 404)
    empty = demo.post(f"/servers/{server_id}/action", {"addSecurityGroup": {"name": " "}})
    assert fault_of(empty, "badRequest", 400) == "Security group name cannot be empty"
    gone = demo.post(f"/servers/{uuid.uuid4()}/action", {"addSecurityGroup": {"name": group["name"]}})
    fault_of(gone, "itemNotFound", 404)
    assert demo.delete(f"/os-security-groups/{group['id']}", OLD).status_code == 202


def test_floating_ips_from_the_public_pool(demo, made, seeded, sdk) -> None:
    assert {"name": "public"} in demo.get("/os-floating-ip-pools", OLD).json()["floating_ip_pools"]
    made_ip = demo.post("/os-floating-ips", {"pool": "public"}, OLD)
    assert made_ip.status_code == 200, made_ip.text
    fip = made_ip.json()["floating_ip"]
    assert fip["pool"] == "public" and fip["instance_id"] is None and fip["fixed_ip"] is None
    assert sdk.network.get_ip(fip["id"]).floating_ip_address == fip["ip"]
    assert demo.get(f"/os-floating-ips/{fip['id']}", OLD).json()["floating_ip"] == fip
    assert fip in demo.get("/os-floating-ips", OLD).json()["floating_ips"]
    # no pool named: nova's default_floating_pool, "nova", which this cloud does not have
    assert fault_of(demo.post("/os-floating-ips", {}, OLD), "itemNotFound", 404) == "Floating IP pool not found."
    assert fault_of(demo.post("/os-floating-ips", {"pool": "nowhere"}, OLD), "itemNotFound", 404)
    assert demo.get("/os-floating-ips", "2.36").status_code == 404
    server_id = boot(demo, made, seeded)
    demo.wait(server_id)
    # the private network has no router to the public one: neutron refuses, nova says why in a 400
    refused = demo.post(f"/servers/{server_id}/action", {"addFloatingIp": {"address": fip["ip"]}}, OLD)
    assert "Unable to associate floating IP" in fault_of(refused, "badRequest", 400)
    unknown = demo.post(f"/servers/{server_id}/action", {"addFloatingIp": {"address": "10.99.99.99"}}, OLD)
    assert fault_of(unknown, "itemNotFound", 404) == "floating IP not found"
    not_here = demo.post(f"/servers/{server_id}/action", {"removeFloatingIp": {"address": fip["ip"]}}, OLD)
    assert fault_of(not_here, "conflictingRequest", 409) == \
        f"Floating IP {fip['ip']} is not associated with instance {server_id}."
    later = demo.post(f"/servers/{server_id}/action", {"addFloatingIp": {"address": fip["ip"]}}, "2.44")
    assert later.status_code == 404
    assert demo.delete(f"/os-floating-ips/{fip['id']}", OLD).status_code == 202
    assert fault_of(demo.get(f"/os-floating-ips/{fip['id']}", OLD), "itemNotFound", 404) == \
        f"Floating IP not found for ID {fip['id']}"


def test_a_floating_ip_follows_a_server_behind_a_router(admin, demo, made, seeded, sdk) -> None:
    router = sdk.network.create_router(name=unique("r"), external_gateway_info={
        "network_id": sdk.network.find_network("public").id})
    subnet = sdk.network.find_subnet("private-subnet")
    sdk.network.add_interface_to_router(router, subnet_id=subnet.id)
    try:
        server_id = boot(admin, made, seeded)
        admin.wait(server_id)
        fip = admin.post("/os-floating-ips", {"pool": "public"}, OLD).json()["floating_ip"]
        added = admin.post(f"/servers/{server_id}/action", {"addFloatingIp": {"address": fip["ip"]}}, OLD)
        assert added.status_code == 202, added.text
        shown = admin.get(f"/os-floating-ips/{fip['id']}", OLD).json()["floating_ip"]
        port, = sdk.network.ports(device_id=server_id)
        assert shown["instance_id"] == server_id and shown["fixed_ip"] == port.fixed_ips[0]["ip_address"]
        assert admin.post(f"/servers/{server_id}/action",
                          {"removeFloatingIp": {"address": fip["ip"]}}, OLD).status_code == 202
        assert admin.get(f"/os-floating-ips/{fip['id']}", OLD).json()["floating_ip"]["instance_id"] is None
        assert admin.delete(f"/os-floating-ips/{fip['id']}", OLD).status_code == 202
    finally:
        sdk.network.remove_interface_from_router(router, subnet_id=subnet.id)
        sdk.network.delete_router(router)
