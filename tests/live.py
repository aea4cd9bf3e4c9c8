"""A real `tether serve` process for end-to-end tests, and clients pointed at it."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import openstack
import openstack.config


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveCloud:
    base_url: str
    data_dir: Path
    clouds_yaml: Path
    process: subprocess.Popen[bytes]
    log: Path

    def connect(self, cloud: str = "tether") -> openstack.connection.Connection:
        config = openstack.config.OpenStackConfig(config_files=[str(self.clouds_yaml)])
        return openstack.connection.Connection(config=config.get_one(cloud))

    def cli(
        self, *args: str, cloud: str = "tether", check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the real `openstack` CLI against this cloud."""
        env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), "OS_CLOUD": cloud}
        openstack_bin = Path(sys.executable).with_name("openstack")
        result = subprocess.run([str(openstack_bin), *args], env=env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"openstack {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def lift_compute_quotas(self, *, missing_ok: bool = False) -> None:
        """A cloud that a whole test module shares boots more than nova's default ten servers over
        the module's tests: its projects' instance, core and RAM quotas are lifted (-1, as nova allows).
        ``missing_ok``: a Tether from before quotas (404) has nothing to lift."""
        admin = self.connect("tether")
        try:
            if missing_ok and admin.identity.get("/projects").status_code == 404:
                return
            for project in admin.identity.projects():
                answer = admin.compute.put(f"/os-quota-sets/{project.id}",
                                           json={"quota_set": {"instances": -1, "cores": -1, "ram": -1}})
                if missing_ok and answer.status_code == 404:
                    return
                answer.raise_for_status()
        finally:
            admin.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(data_dir: Path, *extra: str, db: str | None = None, deploy_seconds: float = 0.5,
          clean_seconds: float = 0.2, port: int | None = None, python: str = sys.executable) -> LiveCloud:
    """``python``: the interpreter that runs the server (a benchmark's peer build has its own)."""
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "serve.log"
    args = [python, "-m", "tether.cli", "serve", "--port", str(port), "--data-dir", str(data_dir),
            "--deploy-seconds", str(deploy_seconds), "--clean-seconds", str(clean_seconds), *extra]
    if db:
        args += ["--db", db]
    process = subprocess.Popen(args, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    tls = "--tls-cert" in extra
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    # The probe only waits for the port to answer; the clients under test check the certificate.
    probe = ssl._create_unverified_context() if tls else None
    # a first start seeds the cloud (password hashes): on a loaded machine that takes a while
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tether serve exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/compute/v2.1", timeout=1, context=probe):
                break
        except OSError:
            time.sleep(0.05)
    else:
        process.kill()
        raise RuntimeError(f"tether serve did not answer in 120 s: {log.read_text()[-2000:]}")
    return LiveCloud(base, data_dir, data_dir / "clouds.yaml", process, log)
