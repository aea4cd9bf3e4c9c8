"""Neutron's API on the live server, driven by openstacksdk, the openstack CLI and raw HTTP."""

from __future__ import annotations

import random
import re
import uuid
from typing import Any

import httpx
import openstack.exceptions
import pytest

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
ADMIN_ONLY_PORT = ("binding:host_id", "binding:profile", "binding:vif_type", "binding:vif_details")
PROVIDER = ("provider:network_type", "provider:physical_network", "provider:segmentation_id")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def login(live_cloud, user: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"name": "Default"}, "password": user}}},
        "scope": {"project": {"name": user, "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json=body)
    assert response.status_code == 201
    return response.headers["X-Subject-Token"]


class Neutron:
    """Raw HTTP to /network/v2.0 as one user."""

    def __init__(self, live_cloud, user: str) -> None:
        self.client = httpx.Client(base_url=f"{live_cloud.base_url}/network/v2.0",
                                   headers={"X-Auth-Token": login(live_cloud, user)})

    def request(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return self.client.request(method, path, json=body, params=params)

    def error(self, response: httpx.Response, status: int, kind: str) -> str:
        assert response.status_code == status, response.text
        fault = response.json()["NeutronError"]
        assert fault["type"] == kind, fault
        assert fault["detail"] == ""
        return fault["message"]


@pytest.fixture(scope="module")
def admin_http(live_cloud):
    neutron = Neutron(live_cloud, "admin")
    yield neutron
    neutron.client.close()


@pytest.fixture(scope="module")
def demo_http(live_cloud):
    neutron = Neutron(live_cloud, "demo")
    yield neutron
    neutron.client.close()


@pytest.fixture(scope="module")
def demo(live_cloud):
    connection = live_cloud.connect("tether-demo")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def private(sdk):
    """The demo cloud's shared network, and its subnet."""
    network = sdk.network.find_network("private")
    assert network is not None
    return network


@pytest.fixture
def scratch_net(sdk):
    """A network of the admin's own, with one /24 subnet, gone after the test."""
    network = sdk.network.create_network(name=unique("net"))
    subnet = sdk.network.create_subnet(network_id=network.id, ip_version=4, cidr="192.168.50.0/24",
                                       name=unique("sub"))
    yield network, subnet
    for port in sdk.network.ports(network_id=network.id):
        sdk.network.delete_port(port)
    sdk.network.delete_network(network)


# -- ports through openstacksdk ---------------------------------------------------------


def test_a_port_round_trips_through_the_sdk_in_neutrons_wire_format(sdk, admin_http, private) -> None:
    name = unique("port")
    port = sdk.network.create_port(network_id=private.id, name=name, binding_vnic_type="normal")
    try:
        assert port.status == "DOWN" and port.network_id == private.id
        assert port.fixed_ips and port.fixed_ips[0]["subnet_id"] in private.subnet_ids
        assert re.match(r"^fa:16:3e(:[0-9a-f]{2}){3}$", port.mac_address)
        raw = admin_http.request("GET", f"/ports/{port.id}").json()["port"]
        assert raw["tenant_id"] == raw["project_id"] == sdk.current_project_id
        for attribute in ("binding:host_id", "binding:vnic_type", "binding:profile", "binding:vif_type",
                          "binding:vif_details", "security_groups", "allowed_address_pairs", "extra_dhcp_opts",
                          "port_security_enabled", "tags", "fixed_ips", "device_id", "device_owner"):
            assert attribute in raw, attribute
        default = sdk.network.find_security_group("default", project_id=sdk.current_project_id)
        assert raw["binding:vif_type"] == "unbound" and raw["security_groups"] == [default.id] and raw["tags"] == []
        assert raw["port_security_enabled"] is True and raw["extra_dhcp_opts"] == []
        assert set(raw["fixed_ips"][0]) == {"subnet_id", "ip_address"}
        assert TIMESTAMP.match(raw["created_at"]) and TIMESTAMP.match(raw["updated_at"])

        bound = sdk.network.update_port(port, name=f"{name}-b", binding_host_id="compute-1",
                                        binding_profile={"local_link_information": []})
        assert bound.name == f"{name}-b" and bound.binding_host_id == "compute-1"
        assert bound.binding_vif_type == "ovs"
        assert sdk.network.get_port(port.id).binding_profile == {"local_link_information": []}
    finally:
        sdk.network.delete_port(port)
    with pytest.raises(openstack.exceptions.NotFoundException):
        sdk.network.get_port(port.id)
    assert sdk.network.find_port(f"{name}-b") is None


def test_bulk_create_makes_every_port_or_none(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    names = [unique("bulk") for _ in range(3)]
    created = list(sdk.network.create_ports([{"network_id": network.id, "name": name} for name in names]))
    assert sorted(port.name for port in created) == sorted(names)
    assert len({port.fixed_ips[0]["ip_address"] for port in created}) == 3

    doomed = unique("doomed")
    response = admin_http.request("POST", "/ports", {"ports": [
        {"network_id": network.id, "name": doomed},
        {"network_id": network.id, "name": doomed, "fixed_ips": [{"ip_address": "10.250.0.5"}]},
    ]})
    assert "not a valid IP" in admin_http.error(response, 400, "InvalidIpForNetwork")
    assert list(sdk.network.ports(name=doomed)) == []


def test_list_filters_are_equality_and_a_repeated_filter_means_any_of(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    owner = unique("owner")
    a, b, c = (sdk.network.create_port(network_id=network.id, name=unique("f"), device_owner=owner if i else "")
               for i in range(3))
    assert {p.id for p in sdk.network.ports(name=[a.name, c.name])} == {a.id, c.id}
    assert {p.id for p in sdk.network.ports(network_id=network.id, device_owner=owner)} == {b.id, c.id}
    # an empty value matches an empty attribute (empty-string-filtering)
    empty = admin_http.request("GET", "/ports", network_id=network.id, device_owner="").json()["ports"]
    assert [p["id"] for p in empty] == [a.id]
    address = b.fixed_ips[0]["ip_address"]
    by_ip = admin_http.request("GET", "/ports", fixed_ips=f"ip_address={address}").json()["ports"]
    assert [p["id"] for p in by_ip] == [b.id]
    assert admin_http.request("GET", "/ports", network_id=network.id, admin_state_up="false").json()["ports"] == []
    assert len(admin_http.request("GET", "/ports", network_id=network.id, admin_state_up="True").json()["ports"]) == 3

    chosen = admin_http.client.get("/ports", params=[("network_id", network.id), ("fields", "id"),
                                                     ("fields", "mac_address")]).json()["ports"]
    assert len(chosen) == 3 and all(set(p) == {"id", "mac_address"} for p in chosen)
    one = admin_http.client.get(f"/ports/{a.id}", params=[("fields", "name")]).json()["port"]
    assert one == {"name": a.name}

    message = admin_http.error(admin_http.request("GET", "/ports", colour="red"), 400, "HTTPBadRequest")
    assert message == "['colour'] is invalid attribute for filtering"
    admin_http.error(admin_http.request("GET", "/ports", admin_state_up="maybe"), 400, "InvalidInput")


def test_sorting_and_pagination_follow_neutrons_links(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    names = sorted(unique(f"page{i}") for i in range(5))
    for name in names:
        sdk.network.create_port(network_id=network.id, name=name)
    first = admin_http.request("GET", "/ports", network_id=network.id, limit=2, sort_key="name",
                               sort_dir="desc").json()
    assert [p["name"] for p in first["ports"]] == names[::-1][:2]
    (following,) = [link["href"] for link in first["ports_links"] if link["rel"] == "next"]
    second = admin_http.client.get(following).json()
    assert [p["name"] for p in second["ports"]] == names[::-1][2:4]
    # the SDK follows the links to the end
    paged = [p.name for p in sdk.network.ports(network_id=network.id, limit=2, sort_key="name", sort_dir="asc")]
    assert paged == names
    message = admin_http.error(admin_http.request("GET", "/ports", sort_key="name"), 400, "HTTPBadRequest")
    assert message == "The number of sort_keys and sort_dirs must be same"
    admin_http.error(admin_http.request("GET", "/ports", limit=-1), 400, "BadRequest")
    admin_http.error(admin_http.request("GET", "/ports", limit=1, marker=str(uuid.uuid4())), 404, "PortNotFound")


def test_changed_since_keeps_what_changed_at_or_after_the_moment(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    port = sdk.network.create_port(network_id=network.id, name=unique("since"))
    listed = admin_http.request("GET", "/ports", network_id=network.id, changed_since=port.updated_at).json()
    assert [p["id"] for p in listed["ports"]] == [port.id]
    later = admin_http.request("GET", "/ports", network_id=network.id, changed_since="2999-01-01T00:00:00Z").json()
    assert later["ports"] == []
    admin_http.error(admin_http.request("GET", "/ports", changed_since="yesterday"), 400, "InvalidInput")


# -- errors in neutron's words ------------------------------------------------------------


def test_bad_port_bodies_are_refused_as_neutron_refuses_them(admin_http, private) -> None:
    net = private.id
    cases = [
        ({"port": {"network_id": net, "colour": "red"}}, "HTTPBadRequest", "Unrecognized attribute(s) 'colour'"),
        ({"port": {"network_id": net, "admin_state_up": "maybe"}}, "InvalidInput",
         "Invalid input for operation: 'maybe' cannot be converted to boolean."),
        ({"port": {"network_id": net, "name": 7}}, "HTTPBadRequest",
         "Invalid input for name. Reason: '7' is not a valid string."),
        ({"port": {"network_id": "private"}}, "HTTPBadRequest",
         "Invalid input for network_id. Reason: 'private' is not a valid UUID."),
        ({"port": {"name": "x"}}, "HTTPBadRequest",
         "Failed to parse request. Required attribute 'network_id' not specified"),
        ({"port": {"network_id": net, "status": "ACTIVE"}}, "HTTPBadRequest", "Attribute 'status' not allowed in POST"),
        ({"port": {"network_id": net, "mac_address": "zz:zz"}}, "HTTPBadRequest",
         "Invalid input for mac_address. Reason: 'zz:zz' is not a valid MAC address."),
        ({"port": {"network_id": net, "tenant_id": "a", "project_id": "b"}}, "HTTPBadRequest",
         "'project_id' and 'tenant_id' do not match"),
        ({"port": {"network_id": net, "security_groups": ["default"]}}, "HTTPBadRequest",
         "Invalid input for security_groups. Reason: 'default' is not a valid UUID."),
        ({"port": "nope"}, "HTTPBadRequest", "Object 'port' contains invalid data"),
        ({"network": {}}, "HTTPBadRequest", "Unable to find 'port' in request body"),
    ]
    for body, kind, message in cases:
        assert admin_http.error(admin_http.request("POST", "/ports", body), 400, kind) == message, body
    malformed = admin_http.client.post("/ports", content=b"{nope", headers={"content-type": "application/json"})
    assert admin_http.error(malformed, 400, "MalformedRequestBody").startswith("Malformed request body")

    missing = str(uuid.uuid4())
    for method, body in (("GET", None), ("PUT", {"port": {"name": "x"}}), ("DELETE", None)):
        message = admin_http.error(admin_http.request(method, f"/ports/{missing}", body), 404, "PortNotFound")
        assert message == f"Port {missing} could not be found."
    assert admin_http.error(admin_http.request("GET", "/networks/nope"), 404, "NetworkNotFound") == \
        "Network nope could not be found."
    admin_http.error(admin_http.request("GET", "/subnets/nope"), 404, "SubnetNotFound")
    port = admin_http.request("POST", "/ports", {"port": {"network_id": net}}).json()["port"]
    try:
        read_only = admin_http.request("PUT", f"/ports/{port['id']}", {"port": {"network_id": net}})
        assert admin_http.error(read_only, 400, "HTTPBadRequest") == "Cannot update read-only attribute network_id"
    finally:
        admin_http.request("DELETE", f"/ports/{port['id']}")


def test_a_taken_mac_is_409_in_neutrons_exact_words(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    port = sdk.network.create_port(network_id=network.id, name=unique("mac"))
    response = admin_http.request("POST", "/ports", {"port": {"network_id": network.id,
                                                              "mac_address": port.mac_address.upper()}})
    assert admin_http.error(response, 409, "MacAddressInUse") == (
        f"Unable to complete operation for network {network.id}. The mac address {port.mac_address} is in use.")


def test_a_null_mac_regenerates_and_a_bound_port_keeps_its_mac(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    port = sdk.network.create_port(network_id=network.id, name=unique("regen"))
    fresh = admin_http.request("PUT", f"/ports/{port.id}", {"port": {"mac_address": None}}).json()["port"]
    assert fresh["mac_address"] != port.mac_address
    admin_http.request("PUT", f"/ports/{port.id}", {"port": {"binding:host_id": "compute-2"}})
    response = admin_http.request("PUT", f"/ports/{port.id}", {"port": {"mac_address": "fa:16:3e:aa:bb:cc"}})
    assert "port is already bound" in admin_http.error(response, 409, "PortBound")


# -- extensions ------------------------------------------------------------------------------


def test_the_extension_list_promises_only_what_tether_does(admin_http) -> None:
    listed = admin_http.request("GET", "/extensions").json()["extensions"]
    aliases = {extension["alias"] for extension in listed}
    assert {"binding", "provider", "external-net", "standard-attr-timestamp", "standard-attr-description",
            "port-mac-address-regenerate", "net-mtu", "project-id", "filter-validation", "pagination",
            "sorting", "security-group", "port-security", "allowed-address-pairs", "extra_dhcp_opt",
            "standard-attr-tag"} <= aliases
    assert not aliases & {"standard-attr-revisions", "tag-ports-during-bulk-creation", "address-group"}
    assert all(set(e) == {"name", "alias", "description", "updated", "links"} for e in listed)
    binding = admin_http.request("GET", "/extensions/binding").json()["extension"]
    assert binding["name"] == "Port Binding"
    message = admin_http.error(admin_http.request("GET", "/extensions/tag-ports-during-bulk-creation"), 404,
                               "HTTPNotFound")
    assert message == "Extension with alias tag-ports-during-bulk-creation does not exist"


# -- networks and subnets -------------------------------------------------------------------


def test_networks_and_subnets_through_the_sdk(sdk, admin_http) -> None:
    vlan = random.randrange(1000, 4000)
    network = sdk.network.create_network(name=unique("vlan"), provider_network_type="vlan",
                                         provider_physical_network="physnet1", provider_segmentation_id=vlan,
                                         is_router_external=True, mtu=9000)
    try:
        assert (network.provider_network_type, network.provider_segmentation_id) == ("vlan", vlan)
        assert network.is_router_external and network.mtu == 9000 and network.status == "ACTIVE"
        subnet = sdk.network.create_subnet(network_id=network.id, ip_version=4, cidr="172.31.7.0/24",
                                           gateway_ip="172.31.7.254", dns_nameservers=["9.9.9.9"])
        assert subnet.allocation_pools == [{"start": "172.31.7.1", "end": "172.31.7.253"}]
        assert sdk.network.get_network(network.id).subnet_ids == [subnet.id]
        assert sdk.network.update_subnet(subnet, name="renamed").name == "renamed"
        renamed = f"{network.name}-b"
        assert sdk.network.update_network(network, name=renamed).name == renamed
        assert network.id in [n.id for n in sdk.network.networks(provider_segmentation_id=vlan)]
        assert network.id not in [n.id for n in sdk.network.networks(provider_segmentation_id=vlan + 1)]

        moved = admin_http.request("PUT", f"/networks/{network.id}", {"network": {"provider:segmentation_id": 9}})
        assert "does not support updating" in admin_http.error(moved, 400, "InvalidInput")
        same = admin_http.request("PUT", f"/networks/{network.id}", {"network": {"provider:network_type": "vlan"}})
        assert same.status_code == 200
        needs_version = admin_http.request("POST", "/subnets", {"subnet": {"network_id": network.id,
                                                                           "cidr": "172.31.8.0/24"}})
        assert admin_http.error(needs_version, 400, "HTTPBadRequest") == \
            "Failed to parse request. Required attribute 'ip_version' not specified"
        sdk.network.delete_subnet(subnet)
    finally:
        sdk.network.delete_network(network)
    assert sdk.network.find_network(network.id) is None


def test_a_failed_bulk_of_subnets_leaves_none_behind(sdk, admin_http, scratch_net) -> None:
    network, _ = scratch_net
    response = admin_http.request("POST", "/subnets", {"subnets": [
        {"network_id": network.id, "ip_version": 4, "cidr": "192.168.60.0/24", "name": "first"},
        {"network_id": network.id, "ip_version": 4, "cidr": "192.168.60.0/25", "name": "overlapping"},
    ]})
    assert "overlaps with another subnet" in admin_http.error(response, 400, "InvalidInput")
    assert {s.cidr for s in sdk.network.subnets(network_id=network.id)} == {"192.168.50.0/24"}


# -- who sees what ----------------------------------------------------------------------------


def test_another_projects_port_is_not_found_and_a_shared_network_is_visible(sdk, demo, demo_http, private) -> None:
    assert demo.network.find_network("private").id == private.id
    admins = sdk.network.create_port(network_id=private.id, name=unique("admins"))
    demos = demo.network.create_port(network_id=private.id, name=unique("demos"))
    try:
        assert demos.project_id == demo.current_project_id != admins.project_id
        with pytest.raises(openstack.exceptions.NotFoundException):
            demo.network.get_port(admins.id)
        assert demo.network.find_port(admins.name) is None
        assert admins.id not in {p.id for p in demo.network.ports()}
        assert demos.id in {p.id for p in sdk.network.ports(network_id=private.id)}
        message = demo_http.error(demo_http.request("DELETE", f"/ports/{admins.id}"), 404, "PortNotFound")
        assert admins.id in message
    finally:
        sdk.network.delete_port(admins)
        demo.network.delete_port(demos)


def test_admin_only_attributes_are_hidden_from_and_refused_for_others(demo_http, admin_http, private) -> None:
    network = demo_http.request("GET", f"/networks/{private.id}").json()["network"]
    assert network["shared"] is True and not set(PROVIDER) & set(network)
    assert set(PROVIDER) <= set(admin_http.request("GET", f"/networks/{private.id}").json()["network"])

    port = demo_http.request("POST", "/ports", {"port": {"network_id": private.id, "name": unique("d")}})
    assert port.status_code == 201
    port = port.json()["port"]
    try:
        assert not set(ADMIN_ONLY_PORT) & set(port) and port["binding:vnic_type"] == "normal"
        shown = demo_http.request("GET", "/ports", id=port["id"]).json()["ports"][0]
        assert not set(ADMIN_ONLY_PORT) & set(shown)
        refused = demo_http.request("PUT", f"/ports/{port['id']}", {"port": {"binding:host_id": "compute-1"}})
        assert demo_http.error(refused, 403, "PolicyNotAuthorized") == \
            "(rule:update_port and rule:update_port:binding:host_id) is disallowed by policy"
    finally:
        demo_http.request("DELETE", f"/ports/{port['id']}")
    refused = demo_http.request("POST", "/networks", {"network": {"name": "x", "provider:network_type": "vlan",
                                                                  "shared": True}})
    assert demo_http.error(refused, 403, "PolicyNotAuthorized") == \
        "((rule:create_network and rule:create_network:shared) and rule:create_network:provider:network_type) " \
        "is disallowed by policy"
    elsewhere = demo_http.request("POST", "/networks", {"network": {"name": "x", "tenant_id": "someone-else"}})
    assert "other than the authenticated project" in demo_http.error(elsewhere, 400, "HTTPBadRequest")
    # as in neutron, an admin-only attribute left at its default is not a request for privilege
    plain = demo_http.request("POST", "/networks", {"network": {"name": unique("dnet"), "shared": False,
                                                                "router:external": False}})
    assert plain.status_code == 201, plain.text
    assert demo_http.request("DELETE", f"/networks/{plain.json()['network']['id']}").status_code == 204


def test_a_request_without_a_token_gets_401_in_neutrons_envelope(live_cloud) -> None:
    response = httpx.get(f"{live_cloud.base_url}/network/v2.0/ports")
    assert response.status_code == 401
    assert response.json()["NeutronError"]["type"] == "Unauthorized"


# -- the real CLI -----------------------------------------------------------------------------


def test_the_cli_creates_shows_and_deletes_a_port(live_cloud, sdk) -> None:
    name = unique("cli")
    port_id = live_cloud.cli("port", "create", "--network", "private", name, "-f", "value", "-c", "id").stdout.strip()
    assert sdk.network.get_port(port_id).name == name
    assert live_cloud.cli("port", "show", name, "-f", "value", "-c", "status").stdout.strip() == "DOWN"
    live_cloud.cli("port", "delete", name)
    assert sdk.network.find_port(port_id) is None
