"""Ironic's API on a live `tether serve`: openstacksdk, the real `openstack baremetal` CLI, and bad input.

The seeded nodes (node-1..node-4) belong to other test files; every test here
enrols nodes of its own, with unique names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openstack.exceptions
import pytest

from tests.live import LiveCloud, free_port, start

V = "1.99"


# -- helpers ---------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def new_mac() -> str:
    return "52:54:01:" + ":".join(f"{octet:02x}" for octet in os.urandom(3))


def token(base_url: str, user: str = "admin", password: str = "admin") -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": user, "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{base_url}/identity/v3/auth/tokens", json=body)
    assert response.status_code == 201
    return response.headers["X-Subject-Token"]


class Api:
    """httpx against /baremetal/v1 with a token and a microversion."""

    def __init__(self, base_url: str, auth: str | None) -> None:
        self.base_url = base_url
        self.auth = auth

    def __call__(self, method: str, path: str, *, version: str = V, **kwargs: Any) -> httpx.Response:
        headers = {"X-OpenStack-Ironic-API-Version": version, **kwargs.pop("headers", {})}
        if self.auth:
            headers["X-Auth-Token"] = self.auth
        return httpx.request(method, f"{self.base_url}/baremetal/v1{path}", headers=headers, timeout=30, **kwargs)

    def node(self, ident: str, **kwargs: Any) -> dict[str, Any]:
        response = self("GET", f"/nodes/{ident}", **kwargs)
        assert response.status_code == 200, response.text
        return response.json()

    def enrol(self, **fields: Any) -> dict[str, Any]:
        response = self("POST", "/nodes", json={"driver": "fake-hardware", "name": unique("api"), **fields})
        assert response.status_code == 201, response.text
        return response.json()

    def provision(self, ident: str, target: str, **extra: Any) -> httpx.Response:
        return self("PUT", f"/nodes/{ident}/states/provision", json={"target": target, **extra})

    def wait_for(self, ident: str, state: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            node = self.node(ident)
            if node["provision_state"] == state:
                return node
            assert time.monotonic() < deadline, f"node {ident} stuck in {node['provision_state']}"
            time.sleep(0.05)

    def make_available(self, **fields: Any) -> dict[str, Any]:
        node = self.enrol(**fields)
        assert self.provision(node["uuid"], "manage").status_code == 202
        assert self.provision(node["uuid"], "provide").status_code == 202
        return self.wait_for(node["uuid"], "available")


def fault(response: httpx.Response) -> str:
    """The faultstring of ironic's envelope, which must be JSON inside a JSON string."""
    inner = json.loads(response.json()["error_message"])
    assert set(inner) >= {"faultstring", "faultcode"}
    return inner["faultstring"]


def json_documents(text: str) -> list[Any]:
    """Every JSON document a batch of `-f json` commands printed, in order (other lines skipped)."""
    decoder, documents, index = json.JSONDecoder(), [], 0
    while index < len(text):
        if text[index] in "[{" and (index == 0 or text[index - 1] == "\n"):
            document, index = decoder.raw_decode(text, index)
            documents.append(document)
        else:
            index += 1
    return documents


def openstack_batch(cloud: LiveCloud, *commands: str, errors: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """One `openstack` process running ``commands`` from its standard input (one start-up, one token).

    A piped interactive session ends with status 1 even when every command
    worked, so a failed command shows only as its error on stderr: exactly
    ``errors`` (fragments, one a line, in order) may appear there.
    """
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml), "OS_CLOUD": "tether"}
    binary = Path(sys.executable).with_name("openstack")
    result = subprocess.run([str(binary)], input="\n".join(commands) + "\n", env=env, capture_output=True,
                            text=True, timeout=120)
    reported = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(reported) == len(errors) and all(e in line for e, line in zip(errors, reported, strict=True)), \
        f"{commands}: {result.stderr}"
    return result


def start_without_reconcilers(data_dir: Path, faults: tuple[str, ...] = ()) -> LiveCloud:
    """A `tether serve` whose reconcilers make their start-up pass and then sleep for an hour.

    Tether's reconcilers (every 10 s in `tether serve`) detach a VIF from a
    node that has no live compute instance and release or tear down a node
    whose instance_uuid names none (rule 2: nothing outlives its owner). The
    standalone-ironic steps the CLI traces take (an instance_uuid set by hand,
    a VIF attached without nova) race them, so those tests run here.
    """
    port = free_port()
    log = data_dir / "serve.log"
    options = (f"port={port}, data_dir=Path({str(data_dir)!r}), deploy_seconds=0.5, clean_seconds=0.2, "
               f"reconcile_interval=3600.0, faults={list(faults)!r}")
    process = subprocess.Popen(
        [sys.executable, "-c", f"from pathlib import Path; from tether.server import ServeOptions, run; "
                               f"run(ServeOptions({options}))"],
        stdout=log.open("ab"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()[-2000:]
        try:
            if httpx.get(f"{base}/baremetal", timeout=1).status_code == 200 and (data_dir / "clouds.yaml").exists():
                return LiveCloud(base, data_dir, data_dir / "clouds.yaml", process, log)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"tether serve did not answer: {log.read_text()[-2000:]}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def quiet_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    cloud = start_without_reconcilers(tmp_path_factory.mktemp("quiet"))
    yield cloud
    cloud.stop()


@pytest.fixture(scope="module")
def quiet_sdk(quiet_cloud: LiveCloud) -> Iterator[Any]:
    connection = quiet_cloud.connect("tether")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def quiet_api(quiet_cloud: LiveCloud) -> Api:
    return Api(quiet_cloud.base_url, token(quiet_cloud.base_url))


@pytest.fixture(scope="module")
def api(live_cloud) -> Api:
    return Api(live_cloud.base_url, token(live_cloud.base_url))


@pytest.fixture
def neutron_port(quiet_sdk) -> Iterator[Callable[[], Any]]:
    """Make neutron ports on the quiet server's seeded physnet1 network, deleted afterwards."""
    sdk = quiet_sdk
    network = sdk.network.find_network("private", ignore_missing=False)
    made = []

    def make() -> Any:
        port = sdk.network.create_port(network_id=network.id, name=unique("vif"))
        made.append(port)
        return port

    yield make
    for port in made:
        sdk.network.delete_port(port, ignore_missing=True)


# -- openstacksdk ------------------------------------------------------------------------------


def test_sdk_takes_a_node_from_enrolment_through_deploy_and_tear_down(quiet_sdk, neutron_port) -> None:
    sdk = quiet_sdk
    bm = sdk.baremetal
    name, rc = unique("sdk"), unique("rc")
    node = bm.create_node(driver="fake-hardware", name=name, resource_class=rc, properties={"cpus": 2})
    assert (node.provision_state, node.resource_class, node.properties) == ("enroll", rc, {"cpus": 2})
    listed = list(bm.nodes(details=True, resource_class=rc))
    assert [n.name for n in listed] == [name] and listed[0].driver == "fake-hardware"
    assert listed[0].links[0]["href"].endswith(f"/baremetal/v1/nodes/{node.id}")

    assert bm.set_node_provision_state(node, "manage", wait=True).provision_state == "manageable"
    assert bm.set_node_provision_state(node, "provide", wait=True).provision_state == "available"

    address = new_mac()
    nic = bm.create_port(node_id=node.id, address=address, physical_network="physnet1",
                         local_link_connection={"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth9"})
    assert [p.id for p in bm.ports(node=name, details=True)] == [nic.id]
    assert bm.get_port(nic.id).physical_network == "physnet1"

    instance = str(uuid.uuid4())
    node = bm.patch_node(node, [{"op": "add", "path": "/instance_uuid", "value": instance}])
    assert node.instance_id == instance
    assert [n.id for n in bm.nodes(instance_id=instance)] == [node.id]

    vif = neutron_port()
    bm.attach_vif_to_node(node, vif.id)
    assert bm.list_node_vifs(node) == [vif.id]
    # ironic's attach gives the network port the NIC's MAC (seed 001's other half).
    assert sdk.network.get_port(vif.id).mac_address == address

    assert bm.set_node_provision_state(node, "active", wait=True).provision_state == "active"
    node = bm.set_node_provision_state(node, "deleted", wait=True)
    # rule 1 (seed 000): tear-down detaches what the node lists; the port is released with a fresh MAC.
    assert (node.provision_state, node.instance_id) == ("available", None)
    assert bm.list_node_vifs(node) == []
    released = sdk.network.get_port(vif.id)
    assert released.mac_address != address and not released.binding_host_id

    bm.delete_node(node)
    assert bm.find_node(name) is None
    assert list(bm.ports(address=address)) == []


def test_sdk_vif_errors_keep_ironics_words(quiet_sdk, neutron_port) -> None:
    bm = quiet_sdk.baremetal
    node = bm.create_node(driver="fake-hardware", name=unique("vifs"))
    bm.create_port(node_id=node.id, address=new_mac(), physical_network="physnet1")
    first, second = neutron_port(), neutron_port()
    bm.attach_vif_to_node(node, first.id)
    with pytest.raises(openstack.exceptions.BadRequestException) as raised:
        bm.attach_vif_to_node(node, second.id)
    assert f"Unable to attach VIF {second.id}, not enough free physical ports." in str(raised.value)
    assert bm.list_node_vifs(node) == [first.id]

    assert bm.detach_vif_from_node(node, first.id) is True
    assert bm.detach_vif_from_node(node, first.id) is False  # VifNotAttached is a 400 the SDK tolerates
    assert bm.list_node_vifs(node) == []
    bm.delete_node(node)


# -- the openstack CLI (python-ironicclient), every command of cli-traces.txt ------------------------


def test_the_openstack_cli_drives_a_node_through_every_traced_command(quiet_cloud, quiet_api, neutron_port) -> None:
    name, instance, address, vif = unique("cli"), str(uuid.uuid4()), new_mac(), neutron_port()
    first = openstack_batch(
        quiet_cloud,
        f"baremetal node create --driver fake-hardware --name {name} -f json",
        "baremetal node list -f json",
        f"baremetal node show {name} -f json",
        f"baremetal node manage {name} --wait",
        f"baremetal node provide {name}",
    )
    created, listed, shown = json_documents(first.stdout)
    assert (created["name"], created["provision_state"], created["driver"]) == (name, "enroll", "fake-hardware")
    assert {"uuid": created["uuid"], "name": name, "instance_uuid": None, "power_state": "power off",
            "provision_state": "enroll", "maintenance": False} in listed
    assert shown["uuid"] == created["uuid"]
    quiet_api.wait_for(created["uuid"], "available")

    second = openstack_batch(
        quiet_cloud,
        f"baremetal node set {name} --instance-uuid {instance}",
        f"baremetal node show --instance {instance} -f json -c name",
        f"baremetal port create {address} --node {name} --physical-network physnet1 "
        "--local-link-connection switch_id=0a:1b:2c:3d:4e:5f --local-link-connection port_id=Eth7 -f json",
        f"baremetal port list --node {name} -f json",
        f"baremetal node vif attach {name} {vif.id}",
        f"baremetal node vif list {name} -f json",
        f"baremetal node vif detach {name} {vif.id}",
        f"baremetal node vif list {name} -f json",
        f"baremetal node power on {name}",
        f"baremetal node show {name} -f json -c power_state -c instance_uuid",
        f"baremetal node deploy {name}",
    )
    by_instance, port, ports, vifs, no_vifs, powered = json_documents(second.stdout)
    assert by_instance == {"name": name}
    assert (port["address"], port["node_uuid"], port["physical_network"]) == (address, created["uuid"], "physnet1")
    assert port["local_link_connection"] == {"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth7"}
    assert ports == [{"uuid": port["uuid"], "address": address}]
    assert (vifs, no_vifs) == ([{"id": vif.id}], [])
    assert powered == {"power_state": "power on", "instance_uuid": instance}
    quiet_api.wait_for(created["uuid"], "active")

    openstack_batch(quiet_cloud, f"baremetal node undeploy {name}")
    assert quiet_api.wait_for(created["uuid"], "available")["instance_uuid"] is None
    gone = openstack_batch(quiet_cloud, f"baremetal node delete {name}", "baremetal node list -f json -c Name",
                           f"baremetal node show {name}",
                           errors=(f"Node {name} could not be found. (HTTP 404)",))
    assert f"Deleted node {name}" in gone.stdout
    assert {"name": name} not in json_documents(gone.stdout)[0]
    assert quiet_api("GET", f"/nodes/{name}").status_code == 404


# -- wire format and microversions ---------------------------------------------------------------


def test_bodies_follow_the_negotiated_microversion(api) -> None:
    node = api.enrol(resource_class=unique("rc"))
    uuid_ = node["uuid"]
    assert node["links"] == [
        {"href": f"{api.base_url}/baremetal/v1/nodes/{uuid_}", "rel": "self"},
        {"href": f"{api.base_url}/baremetal/nodes/{uuid_}", "rel": "bookmark"}]
    latest = api.node(uuid_)
    assert latest["owner"] is None and latest["lessee"] is None and latest["conductor_group"] == ""
    assert latest["states"][0]["href"].endswith(f"/nodes/{uuid_}/states") and "portgroups" in latest
    assert "instance_name" not in latest and "health" not in latest  # 1.104 and 1.109, past Tether's 1.99

    old = api.node(uuid_, version="1.20")
    assert "resource_class" not in old and "name" in old and old["network_interface"] == "flat"
    assert "network_interface" not in api.node(uuid_, version="1.19")
    assert "resource_class" in api.node(uuid_, version="1.21")
    assert "owner" not in api.node(uuid_, version="1.49") and "owner" in api.node(uuid_, version="1.50")
    assert "lessee" not in api.node(uuid_, version="1.64") and "lessee" in api.node(uuid_, version="1.65")
    first = api.node(uuid_, version="1.1")
    assert "name" not in first and "states" not in first and "portgroups" not in first and "ports" in first
    listed = api("GET", "/nodes", version="1.1").json()["nodes"]  # the short list's default fields lose name too
    assert uuid_ in [n["uuid"] for n in listed] and all("name" not in n for n in listed)

    response = api("GET", f"/nodes/{uuid_}", version="1.31")
    assert response.headers["x-openstack-ironic-api-version"] == "1.31"
    assert response.json()["deploy_interface"] == "fake" and "storage_interface" not in response.json()

    assert api("GET", f"/nodes/{uuid_}?fields=resource_class", version="1.20").status_code == 406
    assert api("GET", f"/nodes/{uuid_}?fields=name", version="1.7").status_code == 406
    assert api("GET", f"/nodes/{node['name']}", version="1.4").status_code == 404  # names came with 1.5
    assert api.provision(uuid_, "manage").status_code == 202
    assert api("PUT", f"/nodes/{uuid_}/states/provision", json={"target": "provide"},
               version="1.3").status_code == 406
    assert api("PUT", f"/nodes/{uuid_}/states/provision", json={"target": "undeploy"},
               version="1.72").status_code == 406
    assert api("GET", f"/nodes/{uuid_}/vifs", version="1.27").status_code == 404
    assert api("GET", f"/nodes/{uuid_}/portgroups", version="1.23").status_code == 404
    assert api("GET", "/portgroups", version="1.22").status_code == 404
    assert api("POST", "/nodes", json={"driver": "fake-hardware", "resource_class": "x"},
               version="1.20").status_code == 406

    port = api("POST", "/ports", json={"address": new_mac(), "node_uuid": uuid_, "physical_network": "p"}).json()
    assert "physical_network" not in api("GET", f"/ports/{port['uuid']}", version="1.33").json()
    assert api("GET", f"/ports/{port['uuid']}", version="1.34").json()["physical_network"] == "p"
    assert "pxe_enabled" not in api("GET", f"/ports/{port['uuid']}", version="1.18").json()
    assert api("POST", "/ports", json={"address": new_mac(), "node_uuid": uuid_, "physical_network": "p"},
               version="1.33").status_code == 406
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204


def test_an_available_node_reads_as_none_before_1_2(api) -> None:
    node = api.make_available()
    assert api.node(node["uuid"], version="1.1")["provision_state"] is None
    assert api("GET", f"/nodes/{node['uuid']}/states", version="1.1").json()["provision_state"] is None
    assert api.node(node["uuid"], version="1.2")["provision_state"] == "available"
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204


def test_lists_filter_page_and_select_fields(api) -> None:
    rc = unique("rc")
    nodes = [api.enrol(resource_class=rc) for _ in range(3)]
    short = api("GET", f"/nodes?resource_class={rc}").json()["nodes"]
    assert [n["uuid"] for n in short] == [n["uuid"] for n in nodes]
    assert set(short[0]) == {"uuid", "name", "instance_uuid", "power_state", "provision_state", "maintenance",
                             "links"}
    page = api("GET", f"/nodes/detail?resource_class={rc}&limit=2").json()
    assert [n["uuid"] for n in page["nodes"]] == [n["uuid"] for n in nodes[:2]]
    assert "driver_info" in page["nodes"][0]
    assert page["next"] == f"{api.base_url}/baremetal/v1/nodes/detail?resource_class={rc}&limit=2" \
                           f"&marker={nodes[1]['uuid']}"
    rest = httpx.get(page["next"], headers={"X-Auth-Token": api.auth, "X-OpenStack-Ironic-API-Version": V}).json()
    assert [n["uuid"] for n in rest["nodes"]] == [nodes[2]["uuid"]] and "next" not in rest

    by_name = api("GET", f"/nodes?resource_class={rc}&sort_key=name&sort_dir=desc&fields=name").json()["nodes"]
    assert [n["name"] for n in by_name] == sorted((n["name"] for n in nodes), reverse=True)
    assert set(by_name[0]) == {"name", "links"}
    assert api("GET", f"/nodes?resource_class={rc}&detail=true").json()["nodes"][0]["resource_class"] == rc
    assert api("GET", f"/nodes?resource_class={rc}&provision_state=available").json()["nodes"] == []
    assert api("GET", f"/nodes?resource_class={rc}&provision_state=rescue").json()["nodes"] == []
    assert len(api("GET", f"/nodes?resource_class={rc}&provision_state=enroll").json()["nodes"]) == 3
    assert len(api("GET", f"/nodes?resource_class={rc}&associated=false&maintenance=false&driver=fake-hardware")
               .json()["nodes"]) == 3
    assert api("GET", f"/nodes?resource_class={rc}&owner=someone").json()["nodes"] == []
    assert api("GET", f"/nodes?marker={uuid.uuid4()}").status_code == 404

    mac = new_mac()
    port = api("POST", "/ports", json={"address": mac, "node_uuid": nodes[0]["name"]}).json()
    for query in (f"/ports/?node={nodes[0]['name']}", f"/ports/detail?node_uuid={nodes[0]['uuid']}",
                  f"/ports?address={mac.upper()}", f"/nodes/{nodes[0]['uuid']}/ports"):
        listed = api("GET", query).json()["ports"]
        assert [p["uuid"] for p in listed] == [port["uuid"]], query
    assert set(api("GET", f"/ports?node={nodes[0]['name']}").json()["ports"][0]) == {"uuid", "address", "links"}
    paged = api("GET", f"/nodes/{nodes[0]['uuid']}/ports?limit=1").json()
    assert paged["next"] == f"{api.base_url}/baremetal/v1/nodes/{nodes[0]['uuid']}/ports?limit=1&marker={port['uuid']}"
    assert api("GET", f"/ports?node={nodes[1]['uuid']}").json()["ports"] == []
    assert api("GET", f"/ports?node={unique('nobody')}").status_code == 404
    for node in nodes:
        assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204
    assert api("GET", f"/ports/{port['uuid']}").status_code == 404


# -- errors in ironic's envelope -------------------------------------------------------------------


def test_bad_input_is_a_400_in_ironics_envelope_and_writes_nothing(api) -> None:
    node = api.enrol()
    uuid_, name = node["uuid"], unique("never")
    cases = [
        ("POST", "/nodes", {"content": b"{not json", "headers": {"content-type": "application/json"}},
         "Malformed request body"),
        ("POST", "/nodes", {"content": b""}, "request body is empty"),
        ("POST", "/nodes", {"json": [{"driver": "fake-hardware", "name": name}]}, "must be a JSON object"),
        ("POST", "/nodes", {"json": {"name": name}}, "'driver' is a required property"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "colour": "red"}},
         "Additional properties are not allowed ('colour' was unexpected)"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "properties": [1]}},
         "[1] is not of type 'object', 'null'"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "uuid": "nope"}},
         "Expected UUID for uuid: nope"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "maintenance": "perhaps"}},
         "Invalid maintenance"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "automated_clean": True}},
         "does not support the node field 'automated_clean'"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "deploy_interface": "direct"}},
         "Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: direct."),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "retired_reason": "old"}},
         "The retired_reason field can only be set when retired is True"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": "detail"}}, 'The word "detail" is reserved'),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": "bad name"}},
         "Cannot create node with invalid name 'bad name'"),
        ("POST", "/nodes", {"json": {"driver": "fake-hardware", "name": name, "chassis_uuid": str(uuid.uuid4())}},
         "could not be found"),
        ("PATCH", f"/nodes/{uuid_}", {"json": {"op": "add", "path": "/extra/a", "value": 1}},
         "a patch is a non-empty list"),
        ("PATCH", f"/nodes/{uuid_}", {"json": [{"op": "replace", "path": "/provision_state", "value": "active"}]},
         "internal attribute"),
        ("PATCH", f"/nodes/{uuid_}", {"json": [{"op": "replace", "path": "/maintenance", "value": "x"}]},
         "Expected 'bool'"),
        ("PATCH", f"/nodes/{uuid_}", {"json": [{"op": "add", "path": "/instance_uuid", "value": "nope"}]},
         "Expected a UUID but received nope"),
        ("PUT", f"/nodes/{uuid_}/states/provision", {"json": {}}, "Missing mandatory parameter: target"),
        ("PUT", f"/nodes/{uuid_}/states/provision", {"json": {"target": 7}}, "Expected string for target"),
        ("PUT", f"/nodes/{uuid_}/states/provision", {"json": {"target": "manage", "force": True}},
         "Unexpected arguments: force"),
        ("PUT", f"/nodes/{uuid_}/states/power", {"json": {"target": "explode"}},
         'The requested action "explode" can not be performed'),
        ("PUT", f"/nodes/{uuid_}/states/power", {"json": {"target": "power on", "timeout": "soon"}},
         "Expected an integer for timeout"),
        ("POST", f"/nodes/{uuid_}/vifs", {"json": {"vif": "x"}}, "'id' is a required property"),
        ("POST", f"/nodes/{uuid_}/vifs", {"json": {"id": 5}}, "5 is not of type 'string'"),
        ("POST", "/ports", {"json": {"address": "not-a-mac", "node_uuid": uuid_}},
         "Expected valid MAC address for address: not-a-mac"),
        ("POST", "/ports", {"json": {"address": new_mac(), "node_uuid": uuid_, "pxe_enabled": []}},
         "is not of type 'string', 'boolean', 'null'"),
        ("POST", "/ports", {"json": {"address": new_mac(), "node_uuid": uuid_,
                                     "local_link_connection": {"switch_id": "zz", "port_id": "p"}}},
         "Expected a MAC address or OpenFlow datapath ID but received zz."),
        ("POST", "/ports", {"json": {"address": new_mac(), "node_uuid": unique("ghost")}}, "could not be found"),
        ("POST", "/portgroups", {"json": {"node_uuid": uuid_, "name": "bad name"}},
         "Cannot create portgroup with invalid name 'bad name'"),
        ("POST", "/chassis", {"json": {"description": "x" * 256}}, "is too long"),
        ("GET", "/nodes?limit=0", {}, "Limit must be positive"),
        ("GET", "/nodes?limit=many", {}, "Expected an integer for limit"),
        ("GET", "/nodes?associated=sometimes", {}, "Invalid associated"),
        ("GET", "/nodes?instance_uuid=nope", {}, "Expected UUID for instance_uuid: nope"),
        ("GET", "/nodes?provision_state=floating", {}, 'Provision state "floating" is not valid'),
        ("GET", "/nodes?colour=red", {}, "Unexpected arguments: colour"),
        ("GET", "/nodes?fields=colour", {}, "Field colour is not a valid field."),
        ("GET", "/nodes?fields=name&detail=true", {}, "Can not specify ?detail=True and fields"),
        ("GET", "/nodes?sort_key=properties", {}, "invalid field for sorting"),
        ("GET", "/nodes?sort_dir=sideways", {}, "Invalid sort direction"),
        ("GET", "/nodes/bad%20name", {}, "Expected UUID or name for node: bad name"),
        ("GET", "/ports?address=zz", {}, "Expected valid MAC address for address: zz"),
        ("DELETE", "/ports/not-a-uuid", {}, "Expected UUID for port_uuid: not-a-uuid"),
    ]
    for method, path, kwargs, words in cases:
        response = api(method, path, **kwargs)
        assert response.status_code == 400, (method, path, response.status_code, response.text)
        assert words in fault(response), (method, path, fault(response))
    after = api.node(uuid_)
    assert (after["extra"], after["maintenance"], after["instance_uuid"]) == ({}, False, None)
    assert after["provision_state"] == "enroll" and after["power_state"] == "power off"
    assert api("GET", f"/nodes/{name}").status_code == 404
    assert api("GET", f"/ports?node={uuid_}").json()["ports"] == []
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204


def test_conflicts_and_refusals_keep_ironics_statuses(quiet_api) -> None:
    api = quiet_api
    node = api.enrol()
    uuid_, mac = node["uuid"], new_mac()
    duplicate = api("POST", "/nodes", json={"driver": "fake-hardware", "name": node["name"]})
    assert duplicate.status_code == 409 and fault(duplicate) == f"A node with name {node['name']} already exists."
    assert api("POST", "/ports", json={"address": mac, "node_uuid": uuid_}).status_code == 201
    taken = api("POST", "/ports", json={"address": mac, "node_uuid": uuid_})
    assert taken.status_code == 409 and fault(taken) == f"A port with MAC address {mac} already exists."

    deploy = api.provision(uuid_, "active")
    assert deploy.status_code == 400
    assert fault(deploy) == f'The requested action "active" can not be performed on node "{uuid_}" ' \
                            'while it is in state "enroll".'
    detach = api("DELETE", f"/nodes/{uuid_}/vifs/{(vif := str(uuid.uuid4()))}")
    assert detach.status_code == 400
    assert fault(detach) == f"Unable to detach VIF {vif} from node {uuid_} because it is not attached to it."

    instance = str(uuid.uuid4())
    patched = api("PATCH", f"/nodes/{uuid_}", json=[{"op": "add", "path": "/instance_uuid", "value": instance}])
    assert patched.status_code == 200 and patched.json()["instance_uuid"] == instance
    other = api.enrol()
    stolen = api("PATCH", f"/nodes/{other['uuid']}",
                 json=[{"op": "add", "path": "/instance_uuid", "value": instance}])
    assert stolen.status_code == 409 and instance in fault(stolen)
    associated = api("DELETE", f"/nodes/{uuid_}")
    assert associated.status_code == 409
    assert fault(associated) == f"Node {uuid_} is associated with instance {instance}."

    for missing in (unique("nobody"), str(uuid.uuid4())):
        response = api("GET", f"/nodes/{missing}")
        assert response.status_code == 404 and fault(response) == f"Node {missing} could not be found."
        assert api("PUT", f"/nodes/{missing}/states/provision", json={"target": "manage"}).status_code == 404
        assert api("GET", f"/nodes/{missing}/vifs").status_code == 404
    assert api("GET", f"/ports/{uuid.uuid4()}").status_code == 404
    assert api("GET", f"/portgroups/{unique('pg')}").status_code == 404
    assert api("GET", f"/chassis/{uuid.uuid4()}").status_code == 404
    assert api("GET", "/no-such-thing").status_code == 404

    # In maintenance a node may lose its instance mid-transition, and be deleted while associated.
    assert api("PUT", f"/nodes/{uuid_}/maintenance", json={"reason": "rma"}).status_code == 202
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204
    assert api("DELETE", f"/nodes/{other['uuid']}").status_code == 204


def test_non_admins_get_403_and_anonymous_callers_401(live_cloud, api) -> None:
    demo = Api(live_cloud.base_url, token(live_cloud.base_url, "demo", "demo"))
    name = unique("demo")
    node = api.enrol()
    for method, path, body in [
        ("GET", "/nodes", None), ("GET", "/nodes/detail", None), ("GET", f"/nodes/{node['uuid']}", None),
        ("POST", "/nodes", {"driver": "fake-hardware", "name": name}),
        ("POST", "/nodes", {"driver": 5, "colour": "red"}),  # refused before it is even read
        ("PATCH", f"/nodes/{node['uuid']}", [{"op": "add", "path": "/extra/x", "value": 1}]),
        ("PUT", f"/nodes/{node['uuid']}/states/provision", {"target": "manage"}),
        ("PUT", f"/nodes/{node['uuid']}/maintenance", {"reason": "mine"}),
        ("DELETE", f"/nodes/{node['uuid']}", None), ("GET", "/ports", None), ("GET", "/chassis", None),
        ("POST", "/ports", {"address": new_mac(), "node_uuid": node["uuid"]}),
    ]:
        response = demo(method, path, json=body)
        assert response.status_code == 403, (method, path, response.text)
        assert "Access was denied to the following resource: baremetal:" in fault(response)
    anonymous = Api(live_cloud.base_url, None)("GET", "/nodes")
    assert anonymous.status_code == 401 and "faultstring" in json.loads(anonymous.json()["error_message"])
    after = api.node(node["uuid"])
    assert (after["provision_state"], after["extra"], after["maintenance"]) == ("enroll", {}, False)
    assert api("GET", f"/nodes/{name}").status_code == 404
    assert api("GET", f"/ports?node={node['uuid']}").json()["ports"] == []
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204


# -- states, maintenance, power, cleaning ----------------------------------------------------------


def test_states_maintenance_power_clean_and_rebuild(api) -> None:
    node = api.make_available()
    uuid_ = node["uuid"]
    states = api("GET", f"/nodes/{node['name']}/states").json()
    assert states["provision_state"] == "available" and states["target_provision_state"] is None
    assert set(states) >= {"console_enabled", "last_error", "power_state", "raid_config", "boot_mode"}

    set_maintenance = api("PUT", f"/nodes/{uuid_}/maintenance", json={"reason": "fan"})
    assert set_maintenance.status_code == 202 and set_maintenance.content == b""
    assert (api.node(uuid_)["maintenance"], api.node(uuid_)["maintenance_reason"]) == (True, "fan")
    refused = api.provision(uuid_, "active")
    assert refused.status_code == 400 and "because it's in maintenance mode" in fault(refused)
    assert api("DELETE", f"/nodes/{uuid_}/maintenance").status_code == 202
    assert (api.node(uuid_)["maintenance"], api.node(uuid_)["maintenance_reason"]) == (False, None)

    power = api("PUT", f"/nodes/{uuid_}/states/power", json={"target": "power on"})
    assert power.status_code == 202 and power.headers["location"].endswith(f"/v1/nodes/{uuid_}/states")
    assert api.node(uuid_)["power_state"] == "power on"
    assert api("PUT", f"/nodes/{uuid_}/states/power", json={"target": "soft power off"},
               version="1.26").status_code == 406
    assert api("PUT", f"/nodes/{uuid_}/states/power", json={"target": "soft power off"}).status_code == 202
    assert api.node(uuid_)["power_state"] == "power off"

    assert api.provision(uuid_, "manage").status_code == 202
    no_steps = api.provision(uuid_, "clean")
    assert no_steps.status_code == 400 and '"clean_steps" is required' in fault(no_steps)
    bad_steps = api.provision(uuid_, "clean", clean_steps=[{"interface": "kitchen", "step": "wipe"}])
    assert bad_steps.status_code == 400 and "Invalid clean_steps" in fault(bad_steps)
    misplaced = api.provision(uuid_, "provide", clean_steps=[{"interface": "deploy", "step": "erase_devices"}])
    assert misplaced.status_code == 400 and "only valid when setting target provision state to clean" in \
        fault(misplaced)
    clean = api.provision(uuid_, "clean", clean_steps=[{"interface": "deploy", "step": "erase_devices", "args": {}}])
    assert clean.status_code == 202
    api.wait_for(uuid_, "manageable")
    assert api.provision(uuid_, "provide").status_code == 202
    api.wait_for(uuid_, "available")

    assert api.provision(uuid_, "deploy", configdrive="H4sI").status_code == 400  # ironic: only with active
    assert api.provision(uuid_, "deploy").status_code == 202
    api.wait_for(uuid_, "active")
    assert api.provision(uuid_, "rebuild").status_code == 202
    rebuilt = api.wait_for(uuid_, "active")
    assert rebuilt["last_error"] is None and rebuilt["power_state"] == "power on"
    assert api.provision(uuid_, "undeploy").status_code == 202
    assert api.wait_for(uuid_, "available")["power_state"] == "power off"
    assert api("DELETE", f"/nodes/{uuid_}").status_code == 204


def test_a_node_being_cleaned_is_locked_409(tmp_path_factory) -> None:
    # A server of its own whose cleaning takes a minute, holding the node's lock (ironic's exclusive task).
    # Its new machines had nothing to wipe; node-1 has been cleaned once, so this clean takes the minute.
    cloud = start(tmp_path_factory.mktemp("locked"), clean_seconds=60)
    try:
        api = Api(cloud.base_url, token(cloud.base_url))
        assert api.node("node-1")["provision_state"] == "available"
        assert api.provision("node-1", "manage").status_code == 202
        api.wait_for("node-1", "manageable")
        assert api.provision("node-1", "provide").status_code == 202
        node = api.node("node-1")
        assert (node["provision_state"], node["reservation"]) == ("cleaning", node["conductor"])
        locked = api.provision("node-1", "active")
        assert locked.status_code == 409
        assert fault(locked) == f"Node {node['uuid']} is locked by host {node['conductor']}, please retry " \
                                "after the current operation is completed."
        busy = api("DELETE", f"/nodes/node-1/vifs/{uuid.uuid4()}")  # waits for the lock as ironic does, then gives up
        assert busy.status_code == 409 and "is locked by host" in fault(busy)
        moving = api("PATCH", "/nodes/node-1", json=[{"op": "add", "path": "/extra/a", "value": 1}])
        assert moving.status_code == 409
        assert fault(moving) == "Node node-1 can not be updated while a state transition is in progress."
        power = api("PUT", "/nodes/node-1/states/power", json={"target": "power on"})
        assert power.status_code == 400 and 'while it is in state "cleaning"' in fault(power)
        after = api.node("node-1")
        assert (after["provision_state"], after["extra"], after["power_state"]) == ("cleaning", {}, "power off")
    finally:
        cloud.stop()


# -- portgroups and chassis -------------------------------------------------------------------------


def test_portgroups_and_chassis(api) -> None:
    created = api("POST", "/chassis", json={"description": "rack 7", "extra": {"row": 3}})
    assert created.status_code == 201
    chassis = created.json()
    assert created.headers["location"].endswith(f"/baremetal/v1/chassis/{chassis['uuid']}")
    assert chassis["nodes"][0]["href"].endswith(f"/chassis/{chassis['uuid']}/nodes")
    node = api.enrol(chassis_uuid=chassis["uuid"])
    assert node["chassis_uuid"] == chassis["uuid"]
    in_chassis = api("GET", f"/chassis/{chassis['uuid']}/nodes").json()["nodes"]
    assert [n["uuid"] for n in in_chassis] == [node["uuid"]]
    assert chassis["uuid"] in [c["uuid"] for c in api("GET", "/chassis").json()["chassis"]]
    assert api("GET", f"/chassis/{chassis['uuid']}?fields=description").json() == {
        "description": "rack 7", "links": chassis["links"]}
    not_empty = api("DELETE", f"/chassis/{chassis['uuid']}")
    assert not_empty.status_code == 400 and "contains nodes" in fault(not_empty)
    patched = api("PATCH", f"/chassis/{chassis['uuid']}",
                  json=[{"op": "replace", "path": "/description", "value": "rack 8"},
                        {"op": "remove", "path": "/extra/row"}])
    assert patched.status_code == 200, patched.text
    assert api("GET", f"/chassis/{chassis['uuid']}").json()["description"] == "rack 8"
    assert patched.json()["extra"] == {}
    internal = api("PATCH", f"/chassis/{chassis['uuid']}", json=[{"op": "replace", "path": "/uuid", "value": "x"}])
    assert internal.status_code == 400 and "internal attribute" in fault(internal)

    name = unique("bond")
    made = api("POST", "/portgroups", json={"node_uuid": node["uuid"], "name": name, "address": new_mac(),
                                            "mode": "802.3ad", "standalone_ports_supported": False})
    assert made.status_code == 201
    portgroup = made.json()
    assert (portgroup["name"], portgroup["mode"], portgroup["properties"]) == (name, "802.3ad", {})
    assert "mode" not in api("GET", f"/portgroups/{name}", version="1.25").json()
    refused = api("POST", "/ports", json={"address": new_mac(), "node_uuid": node["uuid"], "pxe_enabled": True,
                                          "portgroup_uuid": portgroup["uuid"]})
    assert refused.status_code == 409 and "doesn't support standalone ports" in fault(refused)
    member = api("POST", "/ports", json={"address": new_mac(), "node_uuid": node["uuid"], "pxe_enabled": False,
                                         "portgroup_uuid": portgroup["uuid"]}).json()
    assert member["portgroup_uuid"] == portgroup["uuid"]
    assert [p["uuid"] for p in api("GET", f"/portgroups/{name}/ports").json()["ports"]] == [member["uuid"]]
    assert [p["uuid"] for p in api("GET", f"/ports?portgroup={name}").json()["ports"]] == [member["uuid"]]
    assert [pg["name"] for pg in api("GET", f"/nodes/{node['uuid']}/portgroups").json()["portgroups"]] == [name]
    new_address = new_mac()
    patched = api("PATCH", f"/portgroups/{name}",
                  json=[{"op": "replace", "path": "/address", "value": new_address},
                        {"op": "add", "path": "/properties/miimon", "value": "100"},
                        {"op": "add", "path": "/extra/rack", "value": "7"}])
    assert patched.status_code == 200, patched.text
    shown = api("GET", f"/portgroups/{name}").json()
    assert (shown["address"], shown["properties"], shown["extra"]) == (new_address, {"miimon": "100"},
                                                                       {"rack": "7"})
    old = api("PATCH", f"/portgroups/{name}", version="1.25",
              json=[{"op": "add", "path": "/properties/a", "value": "b"}])
    assert old.status_code == 406
    other = api.enrol()
    moved = api("PATCH", f"/portgroups/{name}", json=[{"op": "replace", "path": "/node_uuid", "value": other["uuid"]}])
    assert moved.status_code == 400 and "contains ports" in fault(moved)
    busy = api("DELETE", f"/portgroups/{name}")
    assert busy.status_code == 400 and "contains ports" in fault(busy)
    assert api("DELETE", f"/ports/{member['uuid']}").status_code == 204
    assert api("DELETE", f"/portgroups/{name}").status_code == 204
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204
    assert api("DELETE", f"/chassis/{chassis['uuid']}").status_code == 204
    assert api("GET", f"/chassis/{chassis['uuid']}").status_code == 404


def test_ports_patch_and_delete(api) -> None:
    node = api.enrol()
    mac = new_mac()
    response = api("POST", "/ports/", json={"address": mac.upper(), "node_uuid": node["name"], "extra": {"a": 1}})
    assert response.status_code == 201
    port = response.json()
    assert (port["address"], port["node_uuid"], port["pxe_enabled"]) == (mac, node["uuid"], True)
    assert port["links"][1]["href"].endswith(f"/baremetal/ports/{port['uuid']}")
    patched = api("PATCH", f"/ports/{port['uuid']}", json=[{"op": "replace", "path": "/pxe_enabled", "value": False},
                                                           {"op": "add", "path": "/extra/b", "value": 2}])
    assert patched.status_code == 200
    assert (patched.json()["pxe_enabled"], patched.json()["extra"]) == (False, {"a": 1, "b": 2})
    assert api("PATCH", f"/ports/{port['uuid']}", json=[{"op": "add", "path": "/physical_network", "value": "x"}],
               version="1.33").status_code == 406
    assert api("GET", f"/ports/{port['uuid']}?fields=pxe_enabled,extra").json() == {
        "pxe_enabled": False, "extra": {"a": 1, "b": 2}, "links": port["links"]}
    assert api("GET", f"/ports/{mac}").status_code == 400  # ironic: "Expected UUID or name for port", not an address
    assert api("DELETE", f"/ports/{port['uuid']}").status_code == 204
    assert api("GET", f"/ports/{port['uuid']}").status_code == 404
    assert api("DELETE", f"/nodes/{node['uuid']}").status_code == 204
