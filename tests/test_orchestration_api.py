"""Orchestration through heat's API, driven as users drive it: python-heatclient's `openstack stack`
commands and plain HTTP, against a real `tether serve`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.live import LiveCloud, start

TETHER = Path(sys.executable).with_name("tether")

NETWORKED = """
heat_template_version: 2018-08-31
description: a network of its own, a port on it, and a server on the demo network
parameters:
  flavor: {type: string, default: m1.tiny, constraints: [{custom_constraint: nova.flavor}]}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.77.0.0/24}
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
  server:
    type: OS::Nova::Server
    properties:
      flavor: {get_param: flavor}
      image: cirros
      networks: [{network: private}, {port: {get_resource: port}}]
outputs:
  first_address: {value: {get_attr: [server, first_address]}}
  port_ip: {value: {get_attr: [port, fixed_ips, 0, ip_address]}}
"""


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / f"{uuid.uuid4().hex[:8]}.yaml"
    path.write_text(text)
    return str(path)


def stack_cli(cloud: LiveCloud, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return cloud.cli("stack", *args, check=check, timeout=300)


def printed_json(stdout: str) -> Any:
    """The JSON that `--wait -f json` prints after the events it followed."""
    return json.loads(stdout[stdout.index("\n{") + 1:] if not stdout.startswith("{") else stdout)


def check_clean(cloud: LiveCloud) -> None:
    """`tether check` beside the running server finds no violation at all."""
    result = subprocess.run([str(TETHER), "check", "--data-dir", str(cloud.data_dir), "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["violations"] == []


class Heat:
    """Heat's API over plain HTTP, as the admin of the cloud."""

    def __init__(self, cloud: LiveCloud) -> None:
        auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"name": "Default"}, "password": "admin"}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}}
        answer = httpx.post(f"{cloud.base_url}/identity/v3/auth/tokens", json=auth, timeout=60)
        self.project = answer.json()["token"]["project"]["id"]
        self.headers = {"X-Auth-Token": answer.headers["X-Subject-Token"]}
        self.base = f"{cloud.base_url}/orchestration/v1/{self.project}"
        self.cloud = cloud

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, f"{self.base}{path}", headers=self.headers, timeout=60, **kwargs)

    def wait(self, name: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            stack = self.request("GET", f"/stacks/{name}", follow_redirects=True).json()["stack"]
            if not stack["stack_status"].endswith("IN_PROGRESS") or time.monotonic() > deadline:
                return stack
            time.sleep(0.1)

    def network(self, path: str) -> Any:
        return httpx.get(f"{self.cloud.base_url}/network/v2.0{path}", headers=self.headers, timeout=60).json()

    def compute(self, path: str) -> Any:
        return httpx.get(f"{self.cloud.base_url}/compute/v2.1{path}", headers=self.headers, timeout=60).json()


@pytest.fixture(scope="module")
def heat(live_cloud: LiveCloud) -> Heat:
    return Heat(live_cloud)


def test_a_stack_through_the_heat_cli_from_create_to_delete_leaves_nothing(live_cloud: LiveCloud, heat: Heat,
                                                                         tmp_path: Path) -> None:
    name = _name("cli")
    template = _write(tmp_path, NETWORKED)
    created = stack_cli(live_cloud, "create", "-t", template, name, "--wait", "-f", "json")
    assert printed_json(created.stdout)["stack_status"] == "CREATE_COMPLETE", created.stdout

    resources = json.loads(stack_cli(live_cloud, "resource", "list", name, "-f", "json").stdout)
    by_name = {resource["resource_name"]: resource for resource in resources}
    assert {name: r["resource_status"] for name, r in by_name.items()} == dict.fromkeys(
        ("net", "subnet", "port", "server"), "CREATE_COMPLETE")
    server_id = by_name["server"]["physical_resource_id"]
    server = heat.compute(f"/servers/{server_id}")["server"]
    assert server["status"] == "ACTIVE"
    port_ip = json.loads(stack_cli(live_cloud, "output", "show", name, "port_ip", "-f", "json").stdout)
    assert port_ip["output_value"].startswith("10.77.0.")
    assert port_ip["output_value"] in [a["addr"] for net in server["addresses"].values() for a in net]

    # the server's own port for "private" is the stack's, named as heat names it
    internal = heat.network(f"/ports?device_id={server_id}&name=server-port-0")["ports"]
    assert len(internal) == 1 and internal[0]["network_id"] == heat.network("/networks?name=private")[
        "networks"][0]["id"]
    events = json.loads(stack_cli(live_cloud, "event", "list", name, "-f", "json").stdout)
    assert [e["resource_status"] for e in events if e["resource_name"] == name] == ["CREATE_IN_PROGRESS",
                                                                                  "CREATE_COMPLETE"]

    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    assert heat.request("GET", f"/stacks/{name}").status_code == 404
    assert heat.network(f"/ports?id={internal[0]['id']}")["ports"] == []
    assert heat.network(f"/ports?id={by_name['port']['physical_resource_id']}")["ports"] == []
    assert heat.network(f"/networks?id={by_name['net']['physical_resource_id']}")["networks"] == []
    assert httpx.get(f"{live_cloud.base_url}/compute/v2.1/servers/{server_id}", headers=heat.headers,
                     timeout=60).status_code == 404
    check_clean(live_cloud)


def test_a_user_port_given_to_a_stack_is_never_deleted_and_comes_back_unbound(live_cloud: LiveCloud, heat: Heat,
                                                                            tmp_path: Path) -> None:
    port = json.loads(live_cloud.cli("port", "create", "--network", "private", _name("mine"), "-f", "json").stdout)
    template = _write(tmp_path, """
heat_template_version: 2018-08-31
parameters:
  port: {type: string, constraints: [{custom_constraint: neutron.port}]}
resources:
  server:
    type: OS::Nova::Server
    properties: {flavor: baremetal, image: cirros, networks: [{port: {get_param: port}}]}
""")
    name = _name("userport")
    stack_cli(live_cloud, "create", "-t", template, "--parameter", f"port={port['id']}", name, "--wait")
    bound = heat.network(f"/ports/{port['id']}")["port"]
    assert bound["device_id"] and bound["binding:host_id"]
    nic_macs = {p["address"] for p in json.loads(live_cloud.cli("baremetal", "port", "list", "-f", "json").stdout)}
    assert bound["mac_address"] in nic_macs  # bare metal imposed its NIC's MAC

    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    released = heat.network(f"/ports/{port['id']}")["port"]
    assert (released["device_id"], released["binding:host_id"]) == ("", "")
    assert released["mac_address"] not in nic_macs  # rule 2 (seed 001): a fresh MAC, reusable anywhere
    live_cloud.cli("port", "delete", port["id"])
    check_clean(live_cloud)


BAD = {
    "yaml syntax": ("heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Neutron::Net\n", ["line"]),
    "unknown type": ("heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Nova::Serverr}\n",
                     ["OS::Nova::Serverr", "could not be found"]),
    "bad reference": ("heat_template_version: 2018-08-31\nresources:\n  a:\n    type: OS::Neutron::Subnet\n"
                      "    properties: {network: {get_resource: nett}, cidr: 10.0.9.0/24}\n",
                      ["resources.a.properties.network", "nett"]),
    "constraint": ("heat_template_version: 2018-08-31\nparameters:\n  flavor:\n    type: string\n    default: m1.huge\n"
                   "    constraints: [{custom_constraint: nova.flavor}]\nresources: {}\n", ["m1.huge"]),
    "cycle": ("heat_template_version: 2018-08-31\nresources:\n  a: {type: OS::Neutron::Net, depends_on: [b]}\n"
              "  b: {type: OS::Neutron::Net, depends_on: [a]}\n", ["a", "b", "ircular"]),
    "unknown property": ("heat_template_version: 2018-08-31\nresources:\n  a:\n    type: OS::Neutron::Net\n"
                         "    properties: {colour: blue}\n", ["resources.a.properties", "colour"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_template_is_refused_with_400_naming_the_place_and_nothing_is_made(heat: Heat, case: str) -> None:
    text, words = BAD[case]
    name = _name("bad")
    # as text, and parsed as heatclient sends it (its loader keeps dates as text)
    parsed = json.loads(json.dumps(yaml.safe_load(text), default=str)) if case != "yaml syntax" else text
    for template in (text, parsed):
        answer = heat.request("POST", "/stacks", json={"stack_name": name, "template": template})
        assert answer.status_code == 400, answer.text
        body = answer.json()
        assert body["code"] == 400 and body["error"]["type"] == "StackValidationFailed", body
        for word in words:
            assert word in body["error"]["message"], (word, body)
    assert heat.request("GET", f"/stacks?stack_name={name}").json()["stacks"] == []


def test_stacks_are_found_by_name_through_a_302_to_their_own_address(heat: Heat) -> None:
    name = _name("lookup")
    template = {"heat_template_version": "2018-08-31", "resources": {"net": {"type": "OS::Neutron::Net"}}}
    created = heat.request("POST", "/stacks", json={"stack_name": name, "template": template})
    assert created.status_code == 201, created.text
    stack_id = created.json()["stack"]["id"]
    lookup = heat.request("GET", f"/stacks/{name}/resources?with_detail=true")
    assert lookup.status_code == 302
    assert lookup.headers["location"].endswith(f"/stacks/{name}/{stack_id}/resources?with_detail=true")
    assert heat.wait(name)["stack_status"] == "CREATE_COMPLETE"
    duplicate = heat.request("POST", "/stacks", json={"stack_name": name, "template": template})
    assert duplicate.status_code == 409 and "already exists" in duplicate.json()["error"]["message"]
    redirect = heat.request("DELETE", f"/stacks/{name}")  # keystoneauth follows it keeping the method
    assert redirect.status_code == 302
    assert httpx.delete(redirect.headers["location"], headers=heat.headers, timeout=60).status_code == 204
    assert heat.wait(stack_id)["stack_status"] == "DELETE_COMPLETE"
    assert heat.request("GET", f"/stacks/{name}").status_code == 404


def test_a_failed_bare_metal_server_is_replaced_by_an_update_and_its_ports_go_first(tmp_path: Path) -> None:
    """Seed 001 through the API: as many servers as nodes, one deploy fails; the update replaces it."""
    cloud = start(tmp_path / "cloud", "--fault", "baremetal.deploy.wait_callback=error*1")
    try:
        heat = Heat(cloud)
        nodes = len(json.loads(cloud.cli("baremetal", "node", "list", "-f", "json").stdout))
        template = _write(tmp_path, f"""
heat_template_version: 2018-08-31
resources:
  fleet:
    type: OS::Heat::ResourceGroup
    properties:
      count: {nodes}
      resource_def:
        type: OS::Nova::Server
        properties: {{name: bm-%index%, flavor: baremetal, image: cirros, networks: [{{network: private}}]}}
""")
        created = stack_cli(cloud, "create", "-t", template, "fleet", "--wait", check=False)
        stack = heat.wait("fleet")
        assert stack["stack_status"] == "CREATE_FAILED", (created.stdout, stack)
        failed = [s for s in heat.compute("/servers/detail")["servers"] if s["status"] == "ERROR"]
        assert len(failed) == 1
        failed_ports = {p["id"] for p in heat.network("/ports")["ports"] if p["name"].endswith("-port-0")} - {
            p["id"] for s in heat.compute("/servers/detail")["servers"] if s["status"] == "ACTIVE"
            for p in heat.network(f"/ports?device_id={s['id']}")["ports"]}

        stack_cli(cloud, "update", "--existing", "fleet", "--wait")
        assert heat.wait("fleet")["stack_status"] == "UPDATE_COMPLETE"
        servers = heat.compute("/servers/detail")["servers"]
        assert sorted(s["status"] for s in servers) == ["ACTIVE"] * nodes
        assert len({s["OS-EXT-SRV-ATTR:hypervisor_hostname"] for s in servers}) == nodes
        # the failed server's own port was deleted, not left behind or handed on
        assert failed_ports and not failed_ports & {p["id"] for p in heat.network("/ports")["ports"]}
        check_clean(cloud)
        stack_cli(cloud, "delete", "-y", "--wait", "fleet")
        assert heat.compute("/servers/detail")["servers"] == []
        assert [p for p in heat.network("/ports")["ports"] if not p["device_owner"].startswith("network:")] == []
        check_clean(cloud)
    finally:
        cloud.stop()


def test_a_template_resource_from_the_environment_is_a_nested_stack(live_cloud: LiveCloud, heat: Heat,
                                                                    tmp_path: Path) -> None:
    box = tmp_path / "box.yaml"
    box.write_text("""
heat_template_version: 2018-08-31
parameters:
  cidr: {type: string}
resources:
  net: {type: OS::Neutron::Net}
  subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net}, cidr: {get_param: cidr}}}
  server:
    type: OS::Nova::Server
    depends_on: [subnet]
    properties: {flavor: m1.tiny, image: cirros, networks: [{network: {get_resource: net}}]}
outputs:
  address: {value: {get_attr: [server, first_address]}}
""")
    environment = tmp_path / "env.yaml"
    environment.write_text(f"resource_registry:\n  My::Box: {box}\n")
    template = _write(tmp_path, """
heat_template_version: 2018-08-31
resources:
  box: {type: My::Box, properties: {cidr: 10.88.0.0/24}}
outputs:
  address: {value: {get_attr: [box, address]}}
""")
    name = _name("nested")
    stack_cli(live_cloud, "create", "-t", template, "-e", str(environment), name, "--wait")
    address = json.loads(stack_cli(live_cloud, "output", "show", name, "address", "-f", "json").stdout)
    assert address["output_value"].startswith("10.88.0.")
    resources = json.loads(stack_cli(live_cloud, "resource", "list", "-n", "1", name, "-f", "json").stdout)
    assert sorted(r["resource_name"] for r in resources) == ["box", "net", "server", "subnet"]
    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    assert heat.network("/networks?name=" + name)["networks"] == []
    assert [s for s in heat.compute("/servers")["servers"] if s["name"].startswith(name)] == []
    check_clean(live_cloud)


def test_a_failed_update_rolls_back_and_the_old_server_gets_its_port_back(live_cloud: LiveCloud, heat: Heat,
                                                                        tmp_path: Path) -> None:
    huge = _name("huge")
    live_cloud.cli("flavor", "create", "--vcpus", "4096", "--ram", "512", "--disk", "1", huge)
    template = _write(tmp_path, """
heat_template_version: 2018-08-31
parameters:
  flavor: {type: string, default: m1.tiny}
resources:
  a:
    type: OS::Nova::Server
    properties: {flavor: {get_param: flavor}, flavor_update_policy: REPLACE, image: cirros,
                 networks: [{network: private}]}
""")
    name = _name("rollback")
    stack_cli(live_cloud, "create", "-t", template, "--enable-rollback", name, "--wait")
    (server,) = [r for r in json.loads(stack_cli(live_cloud, "resource", "list", name, "-f", "json").stdout)]
    old = server["physical_resource_id"]
    (port,) = heat.network(f"/ports?device_id={old}")["ports"]

    # no host can take the new flavor: the replacement fails, and the update is rolled back
    stack_cli(live_cloud, "update", "-t", template, "--parameter", f"flavor={huge}", "--rollback", "enabled",
              name, "--wait", check=False)
    assert heat.wait(name)["stack_status"] == "ROLLBACK_COMPLETE"
    (after,) = [r for r in json.loads(stack_cli(live_cloud, "resource", "list", name, "-f", "json").stdout)]
    assert after["physical_resource_id"] == old
    assert heat.compute(f"/servers/{old}")["server"]["status"] == "ACTIVE"
    # the port the stack had handed to the replacement is the old server's again, attached
    assert heat.network(f"/ports/{port['id']}")["port"]["device_id"] == old
    assert [s for s in heat.compute("/servers")["servers"] if s["name"].startswith(name) and s["id"] != old] == []
    check_clean(live_cloud)
    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    check_clean(live_cloud)


def test_an_update_changes_in_place_what_neutron_can_and_replaces_the_rest(live_cloud: LiveCloud, heat: Heat,
                                                                         tmp_path: Path) -> None:
    source = """
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: first}
  cidr: {type: string, default: 10.66.0.0/24}
resources:
  net: {type: OS::Neutron::Net, properties: {name: {list_join: ['-', [{get_param: label}, net]]}}}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: {get_param: cidr}, name: {get_param: label}}
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}, name: {get_param: label}, fixed_ips: [{subnet: {get_resource: subnet}}]}
"""
    template = _write(tmp_path, source)
    name = _name("inplace")
    stack_cli(live_cloud, "create", "-t", template, name, "--wait")

    def physical() -> dict[str, str]:
        listed = json.loads(stack_cli(live_cloud, "resource", "list", name, "-f", "json").stdout)
        return {r["resource_name"]: r["physical_resource_id"] for r in listed}

    before = physical()
    stack_cli(live_cloud, "update", "-t", template, "--parameter", "label=second", name, "--wait")
    assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
    assert physical() == before  # renamed in place, nothing made anew
    assert heat.network(f"/networks/{before['net']}")["network"]["name"] == "second-net"
    assert heat.network(f"/ports/{before['port']}")["port"]["name"] == "second"

    stack_cli(live_cloud, "update", "-t", template, "--parameter", "label=second", "--parameter",
              "cidr=10.67.0.0/24", name, "--wait")
    assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
    after = physical()
    # a subnet's cidr cannot change: a new subnet, and the port whose address was on the old one is new too
    assert after["net"] == before["net"] and after["subnet"] != before["subnet"]
    assert heat.network(f"/subnets?id={before['subnet']}")["subnets"] == []
    assert heat.network(f"/ports/{after['port']}")["port"]["fixed_ips"][0]["ip_address"].startswith("10.67.0.")
    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    check_clean(live_cloud)


def test_a_server_is_renamed_resized_given_metadata_and_rebuilt_in_place(live_cloud: LiveCloud, heat: Heat,
                                                                         tmp_path: Path) -> None:
    """heat's in-place server updates, through compute's actions: the same server all along."""
    source = """
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: first}
  flavor: {type: string, default: m1.tiny}
  image: {type: string, default: cirros}
  flavor_policy: {type: string, default: RESIZE}
resources:
  server:
    type: OS::Nova::Server
    properties:
      name: {get_param: label}
      flavor: {get_param: flavor}
      flavor_update_policy: {get_param: flavor_policy}
      image: {get_param: image}
      metadata: {label: {get_param: label}}
      networks: [{network: private}]
"""
    template = _write(tmp_path, source)
    name = _name("server-inplace")
    stack_cli(live_cloud, "create", "-t", template, name, "--wait")
    server = json.loads(stack_cli(live_cloud, "resource", "show", name, "server", "-f", "json").stdout)
    uuid = server["physical_resource_id"]
    flavors = {flavor["name"]: flavor["id"] for flavor in heat.compute("/flavors")["flavors"]}

    stack_cli(live_cloud, "update", "-t", template, "--parameter", "label=second", "--parameter",
              "flavor=m1.small", name, "--wait")
    assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
    shown = heat.compute(f"/servers/{uuid}")["server"]
    assert shown["name"] == "second" and shown["metadata"] == {"label": "second"}
    assert shown["flavor"]["id"] == flavors["m1.small"] and shown["status"] == "ACTIVE"
    actions = [action["action"] for action in heat.compute(f"/servers/{uuid}/os-instance-actions")["instanceActions"]]
    assert {"resize", "confirmResize"} <= set(actions), actions

    snapshot = live_cloud.cli("server", "image", "create", "--name", _name("base"), "--wait", "-f", "value",
                              "-c", "id", uuid).stdout.strip()
    stack_cli(live_cloud, "update", "-t", template, "--parameter", "label=second", "--parameter",
              "flavor=m1.small", "--parameter", f"image={snapshot}", name, "--wait")
    assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
    shown = heat.compute(f"/servers/{uuid}")["server"]
    assert shown["image"]["id"] == snapshot and shown["status"] == "ACTIVE"
    assert "rebuild" in [a["action"] for a in heat.compute(f"/servers/{uuid}/os-instance-actions")["instanceActions"]]

    # The template's policy can still ask for a new server.
    stack_cli(live_cloud, "update", "-t", template, "--parameter", "label=second", "--parameter", "flavor=m1.tiny",
              "--parameter", f"image={snapshot}", "--parameter", "flavor_policy=REPLACE", name, "--wait")
    assert heat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
    replaced = json.loads(stack_cli(live_cloud, "resource", "show", name, "server", "-f", "json").stdout)
    assert replaced["physical_resource_id"] != uuid
    stack_cli(live_cloud, "delete", "-y", "--wait", name)
    live_cloud.cli("image", "delete", snapshot)
    check_clean(live_cloud)
