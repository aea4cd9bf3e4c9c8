"""A real OpenStack Ironic, configured to use Tether as its Keystone and Neutron, drives Tether's ports.

Ironic is installed from the package index (``tests/peers/ironic-requirements.txt``, into a cached venv of
its own: see ``tests.peers.ironic``) and run standalone: one ``ironic`` process without a message broker,
SQLite, ``fake-hardware``. For each network interface (``flat``, ``neutron``) and DHCP provider (``none``,
``neutron``) a node with one NIC on physnet1 goes through what a site does with it, and Tether's port is
checked at each step:

1. cleaning through the agent (``direct`` deploy) puts the node on the cleaning network and waits for the
   ramdisk; the abort takes it off again;
2. a user's port is attached as a VIF, the node deployed (``fake``) and undeployed;
3. the agent deploy runs up to ``wait call-back``, then is undeployed, which cleans (and waits) again.

Afterwards ``tether check`` finds nothing, and the run's count of Ironic's token requests against its
network calls is printed (Ironic logs in again for nearly every call: the token path must take it).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.live import LiveCloud, start
from tests.peers.ironic import Ironic, ServiceUser, create_schema, ironic_venv, start_ironic

PHYSNET = "physnet1"
SWITCH = {"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth9/1", "switch_info": "tor-9"}
IMAGE = b"not really cirros"


@pytest.fixture(scope="module")
def venv() -> Path:
    return ironic_venv()


@pytest.fixture(scope="module")
def tether(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCloud]:
    cloud = start(tmp_path_factory.mktemp("tether"), "--log-level", "info")
    yield cloud
    cloud.stop()


@pytest.fixture(scope="module")
def service_user(tether: LiveCloud) -> ServiceUser:
    """Ironic's own user, admin on the service project, as a deployment gives it."""
    user = ServiceUser(name="ironic", password="ironic-" + uuid.uuid4().hex)
    admin = tether.connect("tether")
    created = admin.identity.create_user(name=user.name, password=user.password, domain_id="default")
    admin.identity.assign_project_role_to_user(admin.identity.find_project(user.project),
                                               created, admin.identity.find_role("admin"))
    admin.close()
    return user


@pytest.fixture(scope="module")
def cleaning_network(tether: LiveCloud) -> str:
    admin = tether.connect("tether")
    network = admin.network.create_network(name="ironic-cleaning")
    admin.network.create_subnet(network_id=network.id, name="ironic-cleaning-subnet", ip_version=4,
                                cidr="10.9.0.0/24")
    admin.close()
    return network.id


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def agent_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The deploy ramdisk (which ironic's PXE boot fetches) and the image the agent deploy would write
    (which it checks is there), served over HTTP."""
    directory = tmp_path_factory.mktemp("images")
    for name in ("cirros.qcow2", "ipa.kernel", "ipa.initramfs"):
        (directory / name).write_bytes(IMAGE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietFiles, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    yield {"image_source": f"{base}/cirros.qcow2", "image_os_hash_algo": "sha256",
           "image_os_hash_value": hashlib.sha256(IMAGE).hexdigest(),
           "deploy_kernel": f"{base}/ipa.kernel", "deploy_ramdisk": f"{base}/ipa.initramfs"}
    server.shutdown()


@pytest.fixture(scope="module")
def schema(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("ironic-schema")
    return create_schema(venv, directory, f"[database]\nconnection = sqlite:///{directory / 'ironic.sqlite'}\n")


@pytest.fixture(scope="module", params=["none", "neutron"], ids=lambda provider: f"dhcp-{provider}")
def ironic(request: pytest.FixtureRequest, venv: Path, schema: Path, tether: LiveCloud, service_user: ServiceUser,
           cleaning_network: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ironic]:
    ironic = start_ironic(venv, tmp_path_factory.mktemp(f"ironic-dhcp-{request.param}"), schema,
                          auth_url=f"{tether.base_url}/identity/v3", user=service_user,
                          dhcp_provider=request.param, cleaning_network=cleaning_network)
    yield ironic
    ironic.stop()


def tether_port(tether: LiveCloud, port_id: str) -> dict[str, Any]:
    admin = tether.connect("tether")
    try:
        return admin.network.get_port(port_id).to_dict()
    finally:
        admin.close()


def ports_of(tether: LiveCloud, node: str, network_id: str) -> list[dict[str, Any]]:
    admin = tether.connect("tether")
    try:
        return [port.to_dict() for port in admin.network.ports(network_id=network_id, device_id=node)]
    finally:
        admin.close()


def assert_on_the_switch(port: dict[str, Any], node: str, mac: str, *, network_interface: str) -> None:
    """A port ironic made for one of its networks: bound to the node, with the NIC's switch port and MAC."""
    assert port["device_owner"] == "baremetal:none" and port["device_id"] == node, port
    assert port["binding_host_id"] == node and port["binding_vnic_type"] == "baremetal", port
    assert port["binding_profile"]["local_link_information"] == [SWITCH], port
    assert port["mac_address"] == mac, port
    # networking-baremetal's rule, which the neutron interface waits for: bound with its switch port, it is up
    assert port["status"] == "ACTIVE" if network_interface == "neutron" else port["status"] in ("ACTIVE", "DOWN")


def assert_boot_options(port: dict[str, Any], dhcp_provider: str) -> None:
    """What ironic's PXE boot told DHCP for the port the node boots the ramdisk from: nothing without a provider."""
    names = {option["opt_name"] for option in port.get("extra_dhcp_opts") or []}
    if dhcp_provider == "neutron":
        # ironic names them by their DHCP option codes: 66 (TFTP server), 67 (boot file name)
        assert {"66", "67"} <= names, port
    else:
        assert not names, port


def assert_attached(port: dict[str, Any], node: str, mac: str) -> None:
    """A VIF as ironic attaches it before the node is active: the NIC's MAC, and the node as its host."""
    assert port["binding_host_id"] == node and port["binding_vnic_type"] == "baremetal", port
    assert port["mac_address"] == mac, port
    assert port["status"] in ("ACTIVE", "DOWN"), port


def assert_released(port: dict[str, Any], mac: str) -> None:
    """What ironic's teardown leaves: unbound, its MAC given back (seed 001), down."""
    assert port["binding_host_id"] in ("", None), port
    assert port["binding_profile"] in ({}, None), port
    assert port["mac_address"] != mac, port
    assert port["status"] == "DOWN", port


def access_lines(tether: LiveCloud) -> list[str]:
    return [line for line in tether.log.read_text().splitlines() if "tether.access" in line]


def requests_by(lines: list[str], user_id: str) -> tuple[int, int]:
    """(token requests, network calls) that ``user_id`` made in ``lines``."""
    mine = [line for line in lines if re.search(rf"\[req-\S+ {user_id} ", line)]
    tokens = sum('"POST /identity/v3/auth/tokens' in line for line in mine)
    network = sum('/network/' in line for line in mine)
    return tokens, network


def no_ports_left(tether: LiveCloud, node: str, network_id: str, timeout: float = 60) -> bool:
    """Whether ironic took the node's ports off ``network_id``: it does so just after the node's state changes."""
    deadline = time.monotonic() + timeout
    while ports_of(tether, node, network_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)
    return True


def tether_check(tether: LiveCloud) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether.cli", "check", "--data-dir", str(tether.data_dir)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("network_interface", ["flat", "neutron"])
def test_a_real_ironic_cleans_deploys_and_undeploys_through_tethers_ports(
        request: pytest.FixtureRequest, ironic: Ironic, tether: LiveCloud, service_user: ServiceUser,
        cleaning_network: str, agent_image: dict[str, str], network_interface: str) -> None:
    dhcp_provider = ironic.dhcp_provider
    admin = tether.connect("tether")
    ironic_user = admin.identity.find_user(service_user.name).id
    private = admin.network.find_network("private").id
    admin.close()
    lines_before = len(access_lines(tether))
    # a MAC of its own per variant, none of the demo cloud's own nodes' (52:54:00:00:...)
    variant = (["flat", "neutron"].index(network_interface), ["none", "neutron"].index(dhcp_provider))
    mac = "52:54:00:aa:{:02x}:{:02x}".format(*variant)

    node = ironic.call("POST", "/v1/nodes", 201, json={
        "driver": "fake-hardware", "name": f"peer-{network_interface}-{dhcp_provider}",
        "network_interface": network_interface, "deploy_interface": "direct", "boot_interface": "pxe",
        "driver_info": {"deploy_kernel": agent_image["deploy_kernel"],
                        "deploy_ramdisk": agent_image["deploy_ramdisk"]}})["uuid"]
    ironic.call("POST", "/v1/ports", 201, json={"node_uuid": node, "address": mac, "physical_network": PHYSNET,
                                                "pxe_enabled": True, "local_link_connection": SWITCH})
    ironic.provision(node, "manage", "manageable")

    # 1. cleaning through the agent: the node goes onto the cleaning network until the ramdisk calls back
    ironic.provision(node, "provide", "clean wait")
    [cleaning] = ports_of(tether, node, cleaning_network)
    assert_on_the_switch(cleaning, node, mac, network_interface=network_interface)
    assert_boot_options(cleaning, dhcp_provider)
    ironic.provision(node, "abort", "clean failed")
    assert no_ports_left(tether, node, cleaning_network)
    ironic.provision(node, "manage", "manageable")
    ironic.patch(node, deploy_interface="fake")
    ironic.provision(node, "provide", "available")

    # 2. a user's port as the node's VIF, through a fake deploy and its teardown
    user = tether.connect("tether-demo")
    vif = user.network.create_port(network_id=private, name=f"vif-{network_interface}-{dhcp_provider}")
    user.close()
    ironic.call("POST", f"/v1/nodes/{node}/vifs", 204, json={"id": vif.id})
    assert ironic.vifs(node) == [vif.id]
    assert_attached(tether_port(tether, vif.id), node, mac)
    ironic.provision(node, "active", "active")
    assert_attached(tether_port(tether, vif.id), node, mac)
    ironic.provision(node, "deleted", "available")
    assert ironic.vifs(node) == []
    assert_released(tether_port(tether, vif.id), mac)

    # 3. the agent deploy, up to the ramdisk's call-back; its teardown cleans through the agent again
    ironic.patch(node, deploy_interface="direct", instance_info={
        key: agent_image[key] for key in ("image_source", "image_os_hash_algo", "image_os_hash_value")})
    ironic.call("POST", f"/v1/nodes/{node}/vifs", 204, json={"id": vif.id})
    ironic.provision(node, "active", "wait call-back")
    if network_interface == "neutron":
        # ironic's neutron interface unbinds the tenant's ports (and gives their MACs back) before it puts the
        # node on the provisioning network, so that no NIC is on both (unconfigure_tenant_networks)
        assert_released(tether_port(tether, vif.id), mac)
        [provisioning] = ports_of(tether, node, cleaning_network)  # the provisioning network is the cleaning one
        assert_on_the_switch(provisioning, node, mac, network_interface=network_interface)
        assert_boot_options(provisioning, dhcp_provider)
    else:  # flat: the node boots the ramdisk on the user's own network, through its VIF
        provisioning = tether_port(tether, vif.id)
        assert_attached(provisioning, node, mac)
        assert_boot_options(provisioning, dhcp_provider)
    ironic.provision(node, "deleted", "clean wait")
    assert ironic.vifs(node) == []
    assert_released(tether_port(tether, vif.id), mac)
    [cleaning] = ports_of(tether, node, cleaning_network)
    assert_on_the_switch(cleaning, node, mac, network_interface=network_interface)
    ironic.provision(node, "abort", "clean failed")
    assert no_ports_left(tether, node, cleaning_network)

    checked = tether_check(tether)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tokens, network = requests_by(access_lines(tether)[lines_before:], ironic_user)
    print(f"\nironic ({network_interface} network interface, dhcp_provider={dhcp_provider}): "
          f"{tokens} token requests for {network} network calls")
    request.node.user_properties += [("token_requests", tokens), ("network_calls", network)]
    assert network > 0 and tokens > 0
