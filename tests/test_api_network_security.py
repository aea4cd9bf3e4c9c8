"""Security groups, port security, address pairs, DHCP options, host routes, tags and bare-metal port status,
driven as users and Ironic drive them: the openstack CLI, openstacksdk and raw HTTP."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.test_api_network import Neutron, unique


@pytest.fixture(scope="module")
def admin_http(live_cloud):
    neutron = Neutron(live_cloud, "admin")
    yield neutron
    neutron.client.close()


@pytest.fixture(scope="module")
def private(sdk):
    return sdk.network.find_network("private")


def _cli_json(live_cloud, *args: str) -> object:
    return json.loads(live_cloud.cli(*args, "-f", "json").stdout)


# -- security groups -------------------------------------------------------------------------


def test_the_cli_lists_the_projects_default_group_with_neutrons_default_rules(live_cloud, sdk) -> None:
    groups = _cli_json(live_cloud, "security", "group", "list", "--project", sdk.current_project_id)
    default = [group for group in groups if group["Name"] == "default"]
    assert len(default) == 1
    rules = sdk.network.security_group_rules(security_group_id=default[0]["ID"])
    shape = sorted((r.direction, r.ether_type, r.remote_group_id) for r in rules)
    assert shape == [("egress", "IPv4", None), ("egress", "IPv6", None),
                     ("ingress", "IPv4", default[0]["ID"]), ("ingress", "IPv6", default[0]["ID"])]


def test_a_group_and_its_rules_through_the_cli_and_ironics_lookup_by_id(live_cloud, sdk, admin_http) -> None:
    name = unique("sg")
    group = _cli_json(live_cloud, "security", "group", "create", name, "--description", "web")
    try:
        # a new group gets egress for both ethertypes, nothing inbound
        assert {(r["direction"], r["ethertype"]) for r in group["rules"]} == {("egress", "IPv4"), ("egress", "IPv6")}
        rule = _cli_json(live_cloud, "security", "group", "rule", "create", "--protocol", "tcp",
                         "--dst-port", "22:23", "--remote-ip", "10.0.0.0/8", name)
        assert (rule["port_range_min"], rule["port_range_max"], rule["protocol"], rule["remote_ip_prefix"]) == \
            (22, 23, "tcp", "10.0.0.0/8")
        listed = live_cloud.cli("security", "group", "rule", "list", name, "-f", "value", "-c", "ID").stdout.split()
        assert rule["id"] in listed and len(listed) == 3
        # ironic: GET /v2.0/security-groups?id=...
        found = admin_http.request("GET", "/security-groups", id=group["id"]).json()["security_groups"]
        assert [g["id"] for g in found] == [group["id"]] and len(found[0]["security_group_rules"]) == 3
        again = admin_http.request("POST", "/security-group-rules", {"security_group_rule": {
            "security_group_id": group["id"], "direction": "ingress", "protocol": "tcp", "port_range_min": 22,
            "port_range_max": 23, "remote_ip_prefix": "10.0.0.0/8"}})
        assert admin_http.error(again, 409, "SecurityGroupRuleExists") == \
            f"Security group rule already exists. Rule id is {rule['id']}."
    finally:
        live_cloud.cli("security", "group", "delete", name)
    assert sdk.network.find_security_group(name) is None


def test_bad_rules_get_neutrons_words_and_change_nothing(admin_http, sdk) -> None:
    group = sdk.network.create_security_group(name=unique("bad"))
    try:
        before = len(list(sdk.network.security_group_rules(security_group_id=group.id)))
        base = {"security_group_id": group.id, "direction": "ingress"}
        cases = [
            ({"protocol": "tcp", "port_range_min": 30, "port_range_max": 20}, "SecurityGroupInvalidPortRange",
             "For TCP/UDP protocols, port_range_min must be <= port_range_max"),
            ({"protocol": "bogus"}, "SecurityGroupRuleInvalidProtocol", None),
            ({"port_range_min": 22, "port_range_max": 22}, "SecurityGroupProtocolRequiredWithPorts",
             "Must also specify protocol if port range is given."),
            ({"ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"}, "SecurityGroupRuleParameterConflict",
             "Conflicting value ethertype IPv6 for CIDR 10.0.0.0/8"),
            ({"protocol": "icmp", "port_range_min": 300}, "SecurityGroupInvalidIcmpValue",
             "Invalid value for ICMP type (port_range_min) 300. It must be 0 to 255."),
            ({"ethertype": "IPv5"}, "SecurityGroupRuleInvalidEtherType",
             "Security group rule for ethertype 'IPv5' not supported. Allowed values are ['IPv4', 'IPv6']."),
            ({"remote_ip_prefix": "10.0.0.0/8", "remote_group_id": group.id}, "SecurityGroupMultipleRemoteEntites",
             None),
        ]
        for extra, kind, message in cases:
            response = admin_http.request("POST", "/security-group-rules", {"security_group_rule": {**base, **extra}})
            got = admin_http.error(response, 400, kind)
            assert message is None or got == message, (extra, got)
        missing = str(uuid.uuid4())
        response = admin_http.request("POST", "/security-group-rules", {"security_group_rule": {
            **base, "remote_group_id": missing}})
        assert admin_http.error(response, 404, "SecurityGroupNotFound") == f"Security group {missing} does not exist"
        assert len(list(sdk.network.security_group_rules(security_group_id=group.id))) == before
        named_default = admin_http.request("POST", "/security-groups", {"security_group": {"name": "default"}})
        admin_http.error(named_default, 409, "SecurityGroupDefaultAlreadyExists")
    finally:
        sdk.network.delete_security_group(group)


def test_a_group_on_a_port_is_in_use_until_the_port_goes(live_cloud, sdk, admin_http) -> None:
    group = sdk.network.create_security_group(name=unique("inuse"))
    port_name = unique("sgport")
    port = _cli_json(live_cloud, "port", "create", "--network", "private", "--security-group", group.name, port_name)
    try:
        assert port["security_group_ids"] == [group.id]
        response = admin_http.request("DELETE", f"/security-groups/{group.id}")
        assert admin_http.error(response, 409, "SecurityGroupInUse") == f"Security Group {group.id} in use."
        shown = admin_http.request("GET", "/ports", security_groups=group.id).json()["ports"]
        assert [p["id"] for p in shown] == [port["id"]]
    finally:
        live_cloud.cli("port", "delete", port_name)
    sdk.network.delete_security_group(group)


# -- port security, address pairs, DHCP options ---------------------------------------------------


def test_port_security_and_allowed_address_pairs_through_the_cli(live_cloud, sdk, admin_http) -> None:
    open_name, paired_name = unique("open"), unique("paired")
    opened = _cli_json(live_cloud, "port", "create", "--network", "private", "--disable-port-security", open_name)
    paired = _cli_json(live_cloud, "port", "create", "--network", "private", "--allowed-address",
                       "ip-address=10.0.0.200", paired_name)
    try:
        assert opened["port_security_enabled"] is False and opened["security_group_ids"] == []
        assert paired["allowed_address_pairs"] == [{"ip_address": "10.0.0.200", "mac_address": paired["mac_address"]}]
        # neutron refuses pairs, or groups, on a port without port security, and keeps the port as it was
        response = admin_http.request("PUT", f"/ports/{opened['id']}", {"port": {
            "allowed_address_pairs": [{"ip_address": "10.0.0.9"}]}})
        admin_http.error(response, 409, "AddressPairAndPortSecurityRequired")
        response = admin_http.request("PUT", f"/ports/{paired['id']}", {"port": {"port_security_enabled": False}})
        admin_http.error(response, 409, "PortSecurityPortHasSecurityGroup")
        assert sdk.network.get_port(paired["id"]).is_port_security_enabled is True
        response = admin_http.request("PUT", f"/ports/{paired['id']}", {"port": {
            "allowed_address_pairs": [{"mac_address": "fa:16:3e:00:00:01"}]}})
        admin_http.error(response, 400, "AllowedAddressPairsMissingIP")
    finally:
        live_cloud.cli("port", "delete", open_name, paired_name)


def test_extra_dhcp_opts_are_set_merged_and_deleted_as_ironic_does(sdk, admin_http, private) -> None:
    port = sdk.network.create_port(network_id=private.id, name=unique("pxe"))
    try:
        pxe = [{"opt_name": "bootfile-name", "opt_value": "pxelinux.0"},
               {"opt_name": "tftp-server", "opt_value": "10.0.0.1"}]
        body = admin_http.request("PUT", f"/ports/{port.id}", {"port": {"extra_dhcp_opts": pxe}}).json()["port"]
        assert body["extra_dhcp_opts"] == [{**opt, "ip_version": 4} for opt in pxe]
        changed = admin_http.request("PUT", f"/ports/{port.id}", {"port": {"extra_dhcp_opts": [
            {"opt_name": "bootfile-name", "opt_value": "ipxe.efi"}, {"opt_name": "tftp-server", "opt_value": None},
            {"opt_name": "server-ip-address", "opt_value": "10.0.0.1", "ip_version": 6}]}}).json()["port"]
        assert sorted((o["opt_name"], o["opt_value"], o["ip_version"]) for o in changed["extra_dhcp_opts"]) == \
            [("bootfile-name", "ipxe.efi", 4), ("server-ip-address", "10.0.0.1", 6)]
        bad = admin_http.request("PUT", f"/ports/{port.id}", {"port": {"extra_dhcp_opts": [{"opt_name": ""}]}})
        assert admin_http.error(bad, 400, "InvalidInput").startswith(
            "Invalid input for operation: No valid key specs matched for")
        assert len(sdk.network.get_port(port.id).extra_dhcp_opts) == 2
    finally:
        sdk.network.delete_port(port)


def test_a_bare_metal_port_is_active_once_bound_with_its_switch_port_and_down_when_unbound(
        sdk, admin_http, private) -> None:
    port = sdk.network.create_port(network_id=private.id, name=unique("bm"))
    try:
        links = [{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/9", "switch_info": "tor-1"}]
        bound = admin_http.request("PUT", f"/ports/{port.id}", {"port": {
            "binding:host_id": "node-x", "binding:vnic_type": "baremetal",
            "binding:profile": {"local_link_information": links}}}).json()["port"]
        assert bound["status"] == "ACTIVE" and bound["binding:vif_type"] == "other"
        unbound = admin_http.request("PUT", f"/ports/{port.id}", {"port": {
            "binding:host_id": "", "binding:profile": {}}}).json()["port"]
        assert unbound["status"] == "DOWN"
        # a VM port bound to a hypervisor stays DOWN until the agent there sees its device
        vm = admin_http.request("PUT", f"/ports/{port.id}", {"port": {
            "binding:host_id": "compute-1", "binding:vnic_type": "normal"}}).json()["port"]
        assert vm["status"] == "DOWN"
    finally:
        sdk.network.delete_port(port)


# -- host routes and tags -----------------------------------------------------------------------------


def test_host_routes_through_the_cli(live_cloud, sdk, admin_http) -> None:
    net = sdk.network.create_network(name=unique("routes"))
    try:
        subnet = _cli_json(live_cloud, "subnet", "create", "--network", net.id, "--subnet-range", "192.168.50.0/24",
                           "--host-route", "destination=10.20.0.0/16,gateway=192.168.50.254", unique("sub"))
        assert subnet["host_routes"] == [{"destination": "10.20.0.0/16", "nexthop": "192.168.50.254"}]
        bad = admin_http.request("PUT", f"/subnets/{subnet['id']}", {"subnet": {
            "host_routes": [{"destination": "10.20.0.1/16", "nexthop": "192.168.50.254"}]}})
        assert admin_http.error(bad, 400, "HTTPBadRequest") == ("Invalid input for host_routes. Reason: "
                                                                "'10.20.0.1/16' is not a recognized CIDR, "
                                                                "'10.20.0.0/16' is recommended.")
        assert sdk.network.get_subnet(subnet["id"]).host_routes == subnet["host_routes"]
    finally:
        sdk.network.delete_network(net)


def test_tags_on_a_network_and_the_tag_filters(live_cloud, sdk) -> None:
    name = unique("tagged")
    live_cloud.cli("network", "create", "--tag", "red", "--tag", "blue", name)
    try:
        shown = _cli_json(live_cloud, "network", "show", name)
        assert sorted(shown["tags"]) == ["blue", "red"]
        tagged = live_cloud.cli("network", "list", "--tags", "red,blue", "-f", "value", "-c", "Name").stdout.split()
        assert name in tagged and "private" not in tagged
        untagged = live_cloud.cli("network", "list", "--not-tags", "red", "-f", "value", "-c", "Name").stdout.split()
        assert name not in untagged and "private" in untagged
        live_cloud.cli("network", "unset", "--tag", "red", name)
        assert _cli_json(live_cloud, "network", "show", name)["tags"] == ["blue"]
    finally:
        live_cloud.cli("network", "delete", name)


# -- compute hands its groups to the ports it makes ------------------------------------------------


def test_server_create_with_a_security_group_gives_its_port_that_group(live_cloud, sdk) -> None:
    group = sdk.network.create_security_group(name=unique("web"))
    name = unique("vm")
    try:
        live_cloud.cli("server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--network", "private",
                       "--security-group", group.name, "--wait", name, timeout=180)
        server = sdk.compute.find_server(name)
        (port,) = list(sdk.network.ports(device_id=server.id))
        assert port.security_group_ids == [group.id]
        # nova shows the groups of the server's ports, read from neutron
        assert sdk.compute.get_server(server.id).security_groups == [{"name": group.name}]
        bad = live_cloud.cli("server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--network", "private",
                             "--security-group", "no-such-group", unique("vm"), check=False)
        # the CLI looks the group up in neutron first, as it does against a real cloud
        assert bad.returncode != 0 and "No SecurityGroup found for no-such-group" in bad.stderr
        response = sdk.compute.post("/servers", json={"server": {
            "name": unique("vm"), "imageRef": sdk.image.find_image("cirros").id, "flavorRef": "1",
            "networks": [{"uuid": sdk.network.find_network("private").id}],
            "security_groups": [{"name": "no-such-group"}]}})
        assert response.status_code == 400 and "Security group no-such-group not found." in response.text
    finally:
        live_cloud.cli("server", "delete", "--wait", name, timeout=180, check=False)
        sdk.network.delete_security_group(group)


def test_a_default_group_an_admin_deleted_is_made_again_for_the_projects_next_port(sdk, admin_http) -> None:
    project = sdk.identity.create_project(name=unique("sgproject"), domain_id="default")
    network = sdk.network.create_network(name=unique("sgnet"), project_id=project.id)
    sdk.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.77.0.0/24", project_id=project.id)
    try:
        first = sdk.network.create_port(network_id=network.id, project_id=project.id)
        (default,) = first.security_group_ids
        assert sdk.network.get_security_group(default).name == "default"
        sdk.network.delete_port(first)
        assert admin_http.request("DELETE", f"/security-groups/{default}").status_code == 204

        # neutron makes the project's default group again on its next port, rules and all
        second = sdk.network.create_port(network_id=network.id, project_id=project.id)
        (again,) = second.security_group_ids
        remade = sdk.network.get_security_group(again)
        assert (remade.name, remade.project_id) == ("default", project.id)
        assert len(list(sdk.network.security_group_rules(security_group_id=again))) == 4
        sdk.network.delete_port(second)
    finally:
        sdk.network.delete_network(network)
        sdk.identity.delete_project(project)
