"""Routers, floating IPs, agents and neutron quotas on the live server: the openstack CLI, openstacksdk and
raw HTTP, as users and Tempest drive them."""

from __future__ import annotations

import contextlib
import json

import openstack.exceptions
import pytest

from tests.test_api_network import Neutron, unique


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


def _cli_json(live_cloud, *args: str) -> object:
    return json.loads(live_cloud.cli(*args, "-f", "json").stdout)


@pytest.fixture
def inside(sdk):
    """A tenant network with a subnet, and the seeded external network."""
    net = sdk.network.create_network(name=unique("inside"))
    subnet = sdk.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.77.0.0/24", name=unique("in-sub"))
    yield net, subnet, sdk.network.find_network("public")
    for port in sdk.network.ports(network_id=net.id):
        if port.device_owner == "network:router_interface":
            continue
        sdk.network.delete_port(port)
    # a failed test may leave its router behind; its assertion already said why
    with contextlib.suppress(openstack.exceptions.ConflictException):
        sdk.network.delete_network(net)


def test_router_gateway_interfaces_and_routes_through_the_cli(live_cloud, sdk, admin_http, inside) -> None:
    _, subnet, public = inside
    name = unique("r")
    router = _cli_json(live_cloud, "router", "create", name)
    try:
        assert router["external_gateway_info"] is None and router["status"] == "ACTIVE"
        live_cloud.cli("router", "set", "--external-gateway", "public", name)
        live_cloud.cli("router", "add", "subnet", name, subnet.id)
        shown = _cli_json(live_cloud, "router", "show", name)
        gateway = shown["external_gateway_info"]
        assert gateway["network_id"] == public.id and gateway["enable_snat"] is True
        assert gateway["external_fixed_ips"][0]["ip_address"].startswith("172.24.4.")
        (interface,) = [p for p in sdk.network.ports(device_id=router["id"])
                        if p.device_owner == "network:router_interface"]
        assert interface.fixed_ips == [{"subnet_id": subnet.id, "ip_address": "10.77.0.1"}]
        assert name in live_cloud.cli("router", "list", "-f", "value", "-c", "Name").stdout.split()
        # a static route through a host on the interface's subnet
        live_cloud.cli("router", "set", "--route", "destination=192.168.9.0/24,gateway=10.77.0.9", name)
        assert _cli_json(live_cloud, "router", "show", name)["routes"] == [
            {"destination": "192.168.9.0/24", "nexthop": "10.77.0.9"}]
        unreachable = admin_http.request("PUT", f"/routers/{router['id']}", {"router": {
            "routes": [{"destination": "192.168.10.0/24", "nexthop": "10.99.0.9"}]}})
        admin_http.error(unreachable, 400, "InvalidRoutes")
        # the route needs the interface; the interface's port is the router's, not the port API's
        response = admin_http.request("PUT", f"/routers/{router['id']}/remove_router_interface",
                                      {"subnet_id": subnet.id})
        admin_http.error(response, 409, "RouterInterfaceInUseByRoute")
        response = admin_http.request("DELETE", f"/ports/{interface.id}")
        assert admin_http.error(response, 409, "ServicePortInUse") == (
            f"Port {interface.id} cannot be deleted directly via the port API: has device owner "
            "network:router_interface.")
        response = admin_http.request("DELETE", f"/routers/{router['id']}")
        assert admin_http.error(response, 409, "RouterInUse") == f"Router {router['id']} still has ports"
        live_cloud.cli("router", "unset", "--route", "destination=192.168.9.0/24,gateway=10.77.0.9", name)
        live_cloud.cli("router", "remove", "subnet", name, subnet.id)
        assert [p for p in sdk.network.ports(device_id=router["id"])
                if p.device_owner == "network:router_interface"] == []
    finally:
        live_cloud.cli("router", "delete", name)
    assert [p.id for p in sdk.network.ports(device_id=router["id"])] == []


def test_a_floating_ip_follows_its_port_and_is_let_go_when_the_port_goes(live_cloud, sdk, admin_http,
                                                                          inside) -> None:
    net, subnet, public = inside
    router = sdk.network.create_router(name=unique("fr"), external_gateway_info={"network_id": public.id})
    port = sdk.network.create_port(network_id=net.id, name=unique("fport"))
    fip = _cli_json(live_cloud, "floating", "ip", "create", "public")
    try:
        assert fip["floating_ip_address"].startswith("172.24.4.") and fip["port_id"] is None
        unreachable = admin_http.request("PUT", f"/floatingips/{fip['id']}", {"floatingip": {"port_id": port.id}})
        assert admin_http.error(unreachable, 404, "ExternalGatewayForFloatingIPNotFound").startswith(
            f"External network {public.id} is not reachable from subnet {subnet.id}.")
        sdk.network.add_interface_to_router(router, subnet_id=subnet.id)
        live_cloud.cli("floating", "ip", "set", "--port", port.id, fip["id"])
        shown = _cli_json(live_cloud, "floating", "ip", "show", fip["id"])
        assert (shown["port_id"], shown["fixed_ip_address"], shown["router_id"], shown["status"]) == \
            (port.id, port.fixed_ips[0]["ip_address"], router.id, "ACTIVE")
        listed = live_cloud.cli("floating", "ip", "list", "--port", port.id, "-f", "value", "-c", "ID").stdout.split()
        assert listed == [fip["id"]]
        # rule 2: the port goes, the floating IP stays and lets go of it
        sdk.network.delete_port(port)
        gone = sdk.network.get_ip(fip["id"])
        assert (gone.port_id, gone.fixed_ip_address, gone.router_id, gone.status) == (None, None, None, "DOWN")
    finally:
        live_cloud.cli("floating", "ip", "delete", fip["id"])
        sdk.network.remove_interface_from_router(router, subnet_id=subnet.id)
        sdk.network.delete_router(router)
    assert [p for p in sdk.network.ports(network_id=public.id) if p.device_id == fip["id"]] == []


def test_a_floating_ip_needs_an_external_network(sdk, admin_http) -> None:
    private = sdk.network.find_network("private")
    response = admin_http.request("POST", "/floatingips", {"floatingip": {"floating_network_id": private.id}})
    assert admin_http.error(response, 400, "BadRequest") == \
        f"Bad floatingip request: Network {private.id} is not a valid external network."
    assert [fip for fip in sdk.network.ips() if fip.floating_network_id == private.id] == []


def test_network_agent_list_shows_each_hypervisors_agent_and_the_bare_metal_agent(live_cloud, demo_http) -> None:
    agents = _cli_json(live_cloud, "network", "agent", "list")
    hosts = {(agent["Host"], agent["Agent Type"]) for agent in agents}
    assert {("compute-1", "Open vSwitch agent"), ("compute-2", "Open vSwitch agent")} <= hosts
    assert any(kind == "Baremetal Node" for _, kind in hosts)
    assert all(agent["Alive"] in (True, ":-)") for agent in agents)
    one = _cli_json(live_cloud, "network", "agent", "list", "--host", "compute-1")
    assert [agent["Host"] for agent in one] == ["compute-1"]
    assert demo_http.request("GET", "/agents").json() == {"agents": []}


def test_neutron_quotas_are_shown_set_and_enforced_with_neutrons_409(live_cloud, sdk, admin_http) -> None:
    project = sdk.identity.find_project("demo")
    demo = live_cloud.connect("tether-demo")
    try:
        shown = admin_http.request("GET", f"/quotas/{project.id}").json()["quota"]
        assert shown["network"] == 100 and shown["security_group_rule"] == 100
        used = len([n for n in demo.network.networks() if n.project_id == project.id])
        admin_http.request("PUT", f"/quotas/{project.id}", {"quota": {"network": used + 1}}).raise_for_status()
        first = demo.network.create_network(name=unique("q"))
        demo_http = Neutron(live_cloud, "demo")
        over = demo_http.request("POST", "/networks", {"network": {"name": unique("q")}})
        assert demo_http.error(over, 409, "OverQuota") == "Quota exceeded for resources: ['network']."
        details = admin_http.request("GET", f"/quotas/{project.id}/details").json()["quota"]["network"]
        assert details == {"limit": used + 1, "used": used + 1, "reserved": 0}
        bad = admin_http.request("PUT", f"/quotas/{project.id}", {"quota": {"network": "many"}})
        admin_http.error(bad, 400, "HTTPBadRequest")
        demo.network.delete_network(first)
    finally:
        admin_http.request("DELETE", f"/quotas/{project.id}")
        demo.close()
    assert admin_http.request("GET", f"/quotas/{project.id}").json()["quota"]["network"] == 100


def test_an_external_networks_subnets_stay_its_owners(admin_http, demo_http) -> None:
    """neutron without subnet-external-network: others see the external network, not its subnets."""
    public = demo_http.request("GET", "/networks", name="public").json()["networks"]
    assert [network["router:external"] for network in public] == [True]
    subnet_id = public[0]["subnets"][0]
    assert admin_http.request("GET", f"/subnets/{subnet_id}").status_code == 200
    assert subnet_id in [s["id"] for s in admin_http.request("GET", "/subnets", network_id=public[0]["id"]).json()[
        "subnets"]]
    assert demo_http.request("GET", "/subnets", network_id=public[0]["id"]).json()["subnets"] == []
    assert subnet_id not in [subnet["id"] for subnet in demo_http.request("GET", "/subnets").json()["subnets"]]
    demo_http.error(demo_http.request("GET", f"/subnets/{subnet_id}"), 404, "SubnetNotFound")


def test_an_auto_address_subnet_goes_with_its_ports_addresses(admin_http) -> None:
    """neutron: a SLAAC (or stateless) address is the port's own; deleting the subnet takes it from the port."""
    network = admin_http.request("POST", "/networks", {"network": {"name": unique("v6")}}).json()["network"]
    try:
        def subnet(cidr: str) -> dict:
            return admin_http.request("POST", "/subnets", {"subnet": {
                "network_id": network["id"], "ip_version": 6, "cidr": cidr, "ipv6_address_mode": "slaac",
                "ipv6_ra_mode": "slaac"}}).json()["subnet"]

        slaac, stateful_v4 = subnet("2001:db8:1::/64"), admin_http.request("POST", "/subnets", {"subnet": {
            "network_id": network["id"], "ip_version": 4, "cidr": "10.90.0.0/24"}}).json()["subnet"]
        port = admin_http.request("POST", "/ports", {"port": {"network_id": network["id"]}}).json()["port"]
        assert {ip["subnet_id"] for ip in port["fixed_ips"]} == {slaac["id"], stateful_v4["id"]}
        # the IPv4 subnet's address is the user's to give back first; the SLAAC one is not
        assert admin_http.error(admin_http.request("DELETE", f"/subnets/{stateful_v4['id']}"), 409, "SubnetInUse")
        assert admin_http.request("DELETE", f"/subnets/{slaac['id']}").status_code == 204
        left = admin_http.request("GET", f"/ports/{port['id']}").json()["port"]["fixed_ips"]
        assert [ip["subnet_id"] for ip in left] == [stateful_v4["id"]]
        admin_http.request("DELETE", f"/ports/{port['id']}")
    finally:
        admin_http.request("DELETE", f"/networks/{network['id']}")


def test_ports_are_found_by_a_part_of_their_address(admin_http) -> None:
    """neutron's ip-substring-filtering: ``fixed_ips=ip_address_substr=`` matches inside the address."""
    assert "ip-substring-filtering" in [e["alias"] for e in admin_http.request("GET", "/extensions").json()[
        "extensions"]]
    network = admin_http.request("POST", "/networks", {"network": {"name": unique("substr")}}).json()["network"]
    try:
        admin_http.request("POST", "/subnets", {"subnet": {"network_id": network["id"], "ip_version": 4,
                                                           "cidr": "10.91.7.0/24"}})
        made = [admin_http.request("POST", "/ports", {"port": {"network_id": network["id"], "fixed_ips": [
            {"ip_address": address}]}}).json()["port"]["id"] for address in ("10.91.7.15", "10.91.7.150", "10.91.7.9")]

        def found(*values: str) -> list[str]:
            ports = admin_http.client.get("/ports", params=[("fixed_ips", value) for value in values]).json()["ports"]
            return sorted(port["id"] for port in ports)

        assert found("ip_address_substr=91.7.15") == sorted(made[:2])
        assert found("ip_address_substr=.9") == sorted(made)
        assert found("ip_address_substr=91.7.15", "ip_address=10.91.7.150") == [made[1]]
        assert found("ip_address_substr=192.168") == []
        for port_id in made:
            admin_http.request("DELETE", f"/ports/{port_id}")
    finally:
        admin_http.request("DELETE", f"/networks/{network['id']}")
