"""A real OpenStack Ironic beside a live `tether serve`: installed, configured and run as a site would.

The Ironic of ``ironic-requirements.txt`` (beside this file) goes into a venv of its own, made once and
kept under ``$TETHER_PEER_CACHE`` (default ``~/.cache/tether/peers``) in a directory named after that
file's content, so a new pin makes a new venv and an unchanged one is reused. It runs standalone: one
``ironic`` process (API and conductor, ``rpc_transport = none``: no message broker), SQLite,
``fake-hardware``, no auth on its own API, and a service user of Tether's for ``[neutron]``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.live import free_port

REQUIREMENTS = Path(__file__).with_name("ironic-requirements.txt")
# where a node rests after an operation failed (ironic's states.py)
FAILED = ("clean failed", "deploy failed", "error", "inspect failed", "service failed", "rescue failed")
API_VERSION = "1.99"  # what openstacksdk 4.x asks of ironic; has every field the test reads


def cache_root() -> Path:
    return Path(os.environ.get("TETHER_PEER_CACHE", Path.home() / ".cache" / "tether" / "peers"))


def ironic_venv() -> Path:
    """The venv holding the pinned Ironic: made (pip, from the package index) only when not cached yet."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()[:16]
    venv = cache_root() / f"ironic-{digest}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / f"ironic-{digest}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once build it once
        if not (venv / "complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            installed = subprocess.run(
                [str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", "-r", str(REQUIREMENTS)],
                capture_output=True, text=True, timeout=1800)
            if installed.returncode != 0:
                raise RuntimeError(f"pip could not install Ironic into {venv}: {installed.stderr[-3000:]}")
            (venv / "complete").write_text(REQUIREMENTS.read_text())
    return venv


@dataclass(frozen=True)
class ServiceUser:
    """Ironic's account in Tether's keystone, as [neutron] names it."""

    name: str
    password: str
    project: str = "service"


def configuration(directory: Path, *, auth_url: str, user: ServiceUser, api_port: int, rpc_port: int,
                  dhcp_provider: str, cleaning_network: str) -> str:
    neutron_auth = "\n".join(f"{key} = {value}" for key, value in {
        "auth_type": "password", "auth_url": auth_url, "username": user.name, "password": user.password,
        "project_name": user.project, "user_domain_name": "Default", "project_domain_name": "Default",
        "region_name": "RegionOne"}.items())
    return f"""
[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = tether-peer
log_file = {directory / "ironic.log"}
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake,pxe
enabled_deploy_interfaces = fake,direct
enabled_management_interfaces = fake
enabled_power_interfaces = fake
enabled_network_interfaces = flat,neutron
enabled_inspect_interfaces = no-inspect
enabled_console_interfaces = no-console
enabled_raid_interfaces = no-raid
enabled_rescue_interfaces = no-rescue
enabled_vendor_interfaces = no-vendor
enabled_bios_interfaces = no-bios
enabled_firmware_interfaces = no-firmware
enabled_storage_interfaces = noop
default_network_interface = flat
default_deploy_interface = fake

[pxe]
tftp_root = {directory / "tftpboot"}
tftp_master_path = {directory / "tftpboot" / "master_images"}
tftp_server = 127.0.0.1

[deploy]
http_root = {directory / "httpboot"}
http_url = http://127.0.0.1:{api_port}/httpboot

[api]
host_ip = 127.0.0.1
port = {api_port}

[json_rpc]
port = {rpc_port}

[local_rpc]
use_ssl = false

[conductor]
automated_clean = true

[database]
connection = sqlite:///{directory / "ironic.sqlite"}

[dhcp]
dhcp_provider = {dhcp_provider}

[agent]
# a port that never goes ACTIVE, or an agent never seen, fails in seconds, not in ironic's 100 x 10 s
neutron_agent_max_attempts = 5
neutron_agent_status_retry_interval = 1

[neutron]
{neutron_auth}
cleaning_network = {cleaning_network}
provisioning_network = {cleaning_network}

[service_catalog]
endpoint_override = http://127.0.0.1:{api_port}
"""


class IronicError(AssertionError):
    pass


@dataclass
class Ironic:
    """A running ``ironic``, and its API as a plain HTTP client sees it."""

    process: subprocess.Popen[bytes]
    directory: Path
    api: httpx.Client
    dhcp_provider: str

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        answer = self.api.request(method, path, **kwargs)
        if answer.status_code != expect:
            raise IronicError(f"{method} {path}: {answer.status_code} {answer.text[:1000]}")
        return answer.json() if answer.content else None

    def node(self, node: str) -> dict[str, Any]:
        return self.call("GET", f"/v1/nodes/{node}", 200)

    def patch(self, node: str, **fields: Any) -> dict[str, Any]:
        return self.call("PATCH", f"/v1/nodes/{node}", 200,
                         json=[{"op": "replace", "path": f"/{key}", "value": value} for key, value in fields.items()])

    def provision(self, node: str, verb: str, reaches: str, timeout: float = 120) -> dict[str, Any]:
        """Ask for ``verb`` and wait until the node rests in ``reaches``; its last error if it rests elsewhere."""
        self.call("PUT", f"/v1/nodes/{node}/states/provision", 202, json={"target": verb})
        deadline = time.monotonic() + timeout
        while True:
            state = self.node(node)
            if state["provision_state"] == reaches:
                return state
            if state["provision_state"] in FAILED or time.monotonic() > deadline:
                raise IronicError(f"{verb}: node {node} is {state['provision_state']} (target "
                                  f"{state['target_provision_state']}), not {reaches}: {state['last_error']}")
            time.sleep(0.3)

    def vifs(self, node: str) -> list[str]:
        return [vif["id"] for vif in self.call("GET", f"/v1/nodes/{node}/vifs", 200)["vifs"]]

    def log_tail(self) -> str:
        log = self.directory / "ironic.log"
        return log.read_text()[-4000:] if log.exists() else ""

    def stop(self) -> None:
        self.api.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def create_schema(venv: Path, directory: Path, config: str) -> Path:
    """An empty Ironic database (ironic-dbsync), to copy for each Ironic started."""
    directory.mkdir(parents=True, exist_ok=True)
    conf = directory / "ironic.conf"
    conf.write_text(config)
    subprocess.run([str(venv / "bin" / "ironic-dbsync"), "--config-file", str(conf), "create_schema"],
                   check=True, capture_output=True, timeout=300)
    return directory / "ironic.sqlite"


def start_ironic(venv: Path, directory: Path, schema: Path, *, auth_url: str, user: ServiceUser,
                 dhcp_provider: str, cleaning_network: str) -> Ironic:
    for folder in ("tftpboot/master_images", "httpboot"):
        (directory / folder).mkdir(parents=True, exist_ok=True)
    shutil.copy(schema, directory / "ironic.sqlite")
    api_port = free_port()
    conf = directory / "ironic.conf"
    conf.write_text(configuration(directory, auth_url=auth_url, user=user, api_port=api_port, rpc_port=free_port(),
                                  dhcp_provider=dhcp_provider, cleaning_network=cleaning_network))
    out = (directory / "stdout.log").open("ab")
    process = subprocess.Popen([str(venv / "bin" / "ironic"), "--config-file", str(conf)], stdout=out,
                               stderr=subprocess.STDOUT)
    api = httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=60,
                       headers={"X-OpenStack-Ironic-API-Version": API_VERSION})
    ironic = Ironic(process, directory, api, dhcp_provider)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ironic exited with {process.returncode}: "
                               f"{(directory / 'stdout.log').read_text()[-2000:]}{ironic.log_tail()}")
        try:
            if api.get("/v1").status_code == 200:
                return ironic
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    ironic.stop()
    raise RuntimeError(f"ironic did not answer in 180 s: {ironic.log_tail()}")
