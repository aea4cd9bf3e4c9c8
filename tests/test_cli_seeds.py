"""The seeds' own reproduction steps, typed into the real `openstack` CLI against a real `tether serve`.

Each test starts two clouds that differ only in ``--emulate-bug``: "tether"
(the fix) and "upstream" (the seed's bug). The same steps run on both at
once, and each ends in its own assertions: the correct outcome on the first,
the symptom the seed reports on the second. A race is held open with a
``--fault POINT=sleep:N`` rule, as the seeds' authors held it open with a
``time.sleep`` in nova.

Nothing here talks to the cloud except the CLI (python-openstackclient and
python-ironicclient, with the clouds.yaml the server wrote and ``OS_CLOUD=tether``).
Most steps are typed into an interactive `openstack` session: one start-up
and one token for a whole seed, instead of one start-up (a second or more of
CPU, several under load) per command. What the seed runs in the background
(``openstack server add port myvm myport &``) is a process of its own. The
clouds' periodic reconcilers are put to sleep: what is tested is the request
path itself, not a repair made ten seconds later.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from tests.live import LiveCloud, start

T = TypeVar("T")
OPENSTACK = Path(sys.executable).with_name("openstack")
FLAVOURS = ("tether", "upstream")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Every other node goes into maintenance, so that the scheduler has only node-1: "boot a second
# instance on the same ironic node".
OTHER_NODES = ("node-2", "node-3", "node-4")
POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="terminal")


@dataclass
class Said:
    """What one command printed: the session gives no exit status, so an error is what reaches stderr."""

    stdout: str
    stderr: str


class Session:
    """An interactive `openstack` shell, one command a line, driven like a user at a terminal.

    After each command the session runs ``shell echo MARK`` on stdout and on
    stderr, so the test knows where the command's output ends. (The session
    splits lines on blanks without honouring quotes: no argument may hold one.)
    """

    def __init__(self, cloud: LiveCloud, flavour: str) -> None:
        self.cloud, self.flavour = cloud, flavour
        # Unbuffered: the marker comes from a child process and must not overtake the command's output.
        env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml), "OS_CLOUD": "tether",
               "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([str(OPENSTACK)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
        self.lines: dict[str, queue.Queue[str | None]] = {"stdout": queue.Queue(), "stderr": queue.Queue()}
        for name, stream in (("stdout", self.process.stdout), ("stderr", self.process.stderr)):
            threading.Thread(target=self._pump, args=(stream, self.lines[name]), daemon=True).start()

    @staticmethod
    def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
        assert stream is not None
        for line in stream:
            lines.put(line)
        lines.put(None)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def attempt(self, *args: str) -> Said:
        assert not any(" " in arg for arg in args), args
        mark = f"end-of-output-{uuid.uuid4().hex}"
        assert self.process.stdin is not None
        self.process.stdin.write(f"{shlex.join(args)}\nshell echo {mark}\nshell sh -c 'echo {mark} >&2'\n")
        self.process.stdin.flush()
        return Said(self._read("stdout", mark, args), self._read("stderr", mark, args))

    def _read(self, name: str, mark: str, args: tuple[str, ...]) -> str:
        said: list[str] = []
        while True:
            try:
                line = self.lines[name].get(timeout=120)
            except queue.Empty:
                raise AssertionError(f"[{self.flavour}] openstack {' '.join(args)}: no answer in 120 s") from None
            if line is None:
                raise AssertionError(f"[{self.flavour}] the openstack session ended: {''.join(said)}")
            if line.strip() == mark.strip():
                return "".join(said)
            said.append(line)

    def run(self, *args: str) -> str:
        said = self.attempt(*args)
        assert not said.stderr, f"[{self.flavour}] openstack {' '.join(args)}: {said.stderr}"
        return said.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-f", "json"))

    def lines_of(self, *args: str) -> list[str]:
        return self.run(*args, "-f", "value").splitlines()

    def background(self, *args: str) -> Future[subprocess.CompletedProcess[str]]:
        """``openstack ARGS &`` from a second terminal: a process of its own, with its exit status."""
        return POOL.submit(self.cloud.cli, "--os-cloud", "tether", *args, check=False)

    def until(self, probe: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float = 60) -> T:
        """Ask again and again until ``done``; the last answer."""
        deadline = time.monotonic() + timeout
        while True:
            answer = probe()
            if done(answer):
                return answer
            assert time.monotonic() < deadline, f"[{self.flavour}] {what}: still {answer!r} after {timeout} s"
            time.sleep(0.2)

    # -- steps every seed takes -----------------------------------------------------------------

    def server(self, name: str) -> dict[str, Any]:
        return self.json("server", "show", name)

    def boot(self, name: str, *how: str) -> dict[str, Any]:
        """``server create``, then ``server show`` until the build ends, ACTIVE or not."""
        self.run("server", "create", "--image", "cirros", *how, name, "-f", "value", "-c", "id")
        return self.until(lambda: self.server(name), lambda shown: shown["status"] != "BUILD",
                          f"server {name} building")

    def only_node_1(self) -> str:
        """Every other node into maintenance, as an operator pins a test to one node: node-1's UUID."""
        self.run("baremetal", "node", "maintenance", "set", *OTHER_NODES, "--reason", "seed-reproduction")
        return self.run("baremetal", "node", "show", "node-1", "-f", "value", "-c", "uuid").strip()

    def node_state(self, node: str) -> str:
        return self.run("baremetal", "node", "show", node, "-f", "value", "-c", "provision_state").strip()

    def wait_available(self, node: str) -> None:
        self.until(lambda: self.node_state(node), lambda state: state == "available", f"{node} not available")


@contextmanager
def clouds(data: Path, bug: str, *extra: str, deploy_seconds: float = 0.5,
           clean_seconds: float = 0.2) -> Iterator[dict[str, LiveCloud]]:
    """A "tether" and an "upstream" (``--emulate-bug BUG``) `tether serve`, otherwise identical."""
    options = (*extra, "--reconcile-interval", "3600")
    started = {
        "tether": POOL.submit(start, data / "tether", *options, deploy_seconds=deploy_seconds,
                              clean_seconds=clean_seconds),
        "upstream": POOL.submit(start, data / "upstream", *options, "--emulate-bug", bug,
                                deploy_seconds=deploy_seconds, clean_seconds=clean_seconds),
    }
    try:
        yield {flavour: future.result() for flavour, future in started.items()}
    finally:
        for future in started.values():
            if future.exception() is None:
                future.result().stop()


def on_both(steps: Callable[[Session, bool], None], running: dict[str, LiveCloud]) -> None:
    """Type the same ``steps`` into both clouds at once; fail if either ends wrong."""

    def session(flavour: str) -> None:
        terminal = Session(running[flavour], flavour)
        try:
            steps(terminal, flavour == "upstream")
        finally:
            terminal.close()

    futures = {flavour: POOL.submit(session, flavour) for flavour in FLAVOURS}
    failures = {flavour: future.exception() for flavour, future in futures.items()}
    for flavour, error in failures.items():
        if error is not None:
            log = running[flavour].log.read_text()[-3000:]
            raise AssertionError(f"[{flavour}] {error}\n--- tether serve log ({flavour}) ---\n{log}") from error


# -- seed 004: a port deleted while `server add port` is held before the driver attach ----------------

ATTACH_HELD = "compute.attach_interface.before_driver_attach=sleep:4*1"


def seed_004(term: Session, upstream: bool) -> None:
    term.run("server", "create", "--flavor", "m1.small", "--image", "cirros", "--nic", "net-id=private", "myvm")
    port = term.json("port", "create", "--network", "private", "myport")
    server = term.until(lambda: term.server("myvm"), lambda shown: shown["status"] == "ACTIVE", "myvm building")

    attach = term.background("server", "add", "port", "myvm", "myport")
    # The seed sleeps 4 s against an 8-s hold; here the port is watched until the attach has bound
    # it (just before the hold), so that the delete surely lands inside the 4-s hold.
    term.until(lambda: term.lines_of("port", "show", "myport", "-c", "device_id"),
               lambda device: device == [server["id"]], "myport not bound yet", timeout=30)
    term.run("port", "delete", "myport")
    attached = attach.result(timeout=60)

    # As in the seed: "Exit 1 openstack server add port myvm myport / Port id ... could not be found."
    assert attached.returncode == 1, (attached.stdout, attached.stderr)
    assert "404" in attached.stderr and f"Port id {port['id']} could not be found." in attached.stderr, \
        attached.stderr
    assert sorted(term.lines_of("server", "event", "list", "myvm", "-c", "Action")) == ["attach_interface", "create"]

    diagnostics = term.json("server", "show", "--diagnostics", "myvm")
    nics = sorted(nic["mac_address"] for nic in diagnostics["nic_details"])
    live = sorted(listed["MAC Address"] for listed in term.json("port", "list", "--server", "myvm"))
    assert len(live) == 1 and port["mac_address"] not in live, live  # only the boot port is left
    assert diagnostics["num_nics"] == len(nics), diagnostics
    if upstream:
        # "zombie interface is attached to guest": a NIC whose port no longer exists
        assert nics == sorted([*live, port["mac_address"]]), (nics, live)
    else:
        assert nics == live, (nics, live)


def test_seed_004_port_deleted_during_server_add_port(tmp_path: Path) -> None:
    with clouds(tmp_path, "zombie-interface-on-attach-race", "--fault", ATTACH_HELD) as running:
        on_both(seed_004, running)


# -- seed 001: two pre-created ports, one bare-metal server after the other on the same node -------------


def seed_001(term: Session, upstream: bool) -> None:
    node = term.only_node_1()
    (nic_mac,) = term.lines_of("baremetal", "port", "list", "--node", "node-1", "-c", "Address")
    term.run("port", "create", "--network", "private", "test-port1")
    term.run("port", "create", "--network", "private", "test-port2")

    first = term.boot("test-server", "--flavor", "baremetal", "--port", "test-port1")
    assert (first["status"], first["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), first
    term.run("server", "delete", "--wait", "test-server")
    term.wait_available("node-1")  # `delete --wait` ends with the instance; the node cleans a moment longer

    second = term.boot("test-server", "--flavor", "baremetal", "--port", "test-port2")
    port1 = term.json("port", "show", "test-port1")
    if upstream:
        # "The mac address 52:54:00:53:b5:b9 is in use.": test-port1 kept the NIC's MAC
        assert second["status"] == "ERROR", second
        assert f"The mac address {nic_mac} is in use." in second["fault"]["message"], second["fault"]
        assert port1["mac_address"] == nic_mac, port1
    else:
        assert (second["status"], second["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), second
        assert "fault" not in second, second["fault"]
        # The user's port is handed back whole: unbound, no device, and a MAC of neutron's own.
        assert (port1["device_id"], port1["binding_host_id"], port1["status"]) == ("", "", "DOWN"), port1
        assert port1["mac_address"] != nic_mac, port1


def test_seed_001_reusing_precreated_ports_on_the_same_node(tmp_path: Path) -> None:
    with clouds(tmp_path, "mac-kept-on-unbind") as running:
        on_both(seed_001, running)


# -- seed 000: the port is deleted while its bare-metal server is being deleted --------------------------

DELETE_HELD = "compute.delete.before_unplug=sleep:3*1"


def seed_000(term: Session, upstream: bool) -> None:
    node = term.only_node_1()
    first = term.boot("server1", "--flavor", "baremetal", "--nic", "net-id=private")
    assert (first["status"], first["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), first
    (vif,) = term.lines_of("port", "list", "--server", "server1", "-c", "ID")
    assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == [vif]

    term.run("server", "delete", "server1")
    term.run("port", "delete", vif)  # while the delete is held (3 s)
    term.until(lambda: term.attempt("server", "show", "server1").stderr, lambda said: "No Server found" in said,
               "server1 deleting")
    vifs = term.lines_of("baremetal", "node", "vif", "list", "node-1")
    term.wait_available("node-1")

    second = term.boot("server2", "--flavor", "baremetal", "--nic", "net-id=private")
    if upstream:
        # "The ironic node's VIF is still attached" ... "Unable to attach VIF ..., not enough free physical ports."
        assert vifs == [vif], vifs
        assert second["status"] == "ERROR", second
        assert re.search(rf"Unable to attach VIF {UUID}, not enough free physical ports\.",
                         second["fault"]["message"]), second["fault"]
        assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == [vif]
    else:
        assert vifs == [], vifs
        assert (second["status"], second["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), second
        assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == \
            term.lines_of("port", "list", "--server", "server2", "-c", "ID")


def test_seed_000_port_deleted_while_its_baremetal_server_is_deleted(tmp_path: Path) -> None:
    # Cleaning (5 s) outlasts the port-deleted event's wait for the node lock (3 s): upstream's detach
    # from that event fails with NodeLocked and is ignored, its cache entry already dropped.
    with clouds(tmp_path, "stale-vif-on-terminate", "--fault", DELETE_HELD, clean_seconds=5.0) as running:
        on_both(seed_000, running)


# -- seed 003: the operator undeploys the node while the instance's deploy waits for its call-back --------


def seed_003(term: Session, upstream: bool) -> None:
    server_id = term.run("server", "create", "--flavor", "baremetal", "--image", "cirros", "--nic",
                         "net-id=private", "server1", "-f", "value", "-c", "id").strip()
    # "Determine to which node the instance has been scheduled ... Wait for ... 'wait call-back'"
    found = term.until(
        lambda: term.attempt("baremetal", "node", "show", "--instance", server_id, "-f", "value", "-c", "uuid",
                             "-c", "provision_state").stdout.strip().split(maxsplit=1),
        lambda said: said[1:] == ["wait call-back"], "the node reaching wait call-back")
    node = found[0]
    term.run("baremetal", "node", "undeploy", node)
    term.wait_available(node)

    if upstream:
        time.sleep(2.0)  # whatever the build was going to do about the tear-down, it has done
    server = term.until(lambda: term.server("server1"), lambda shown: upstream or shown["status"] != "BUILD",
                        "server1 building")
    if upstream:
        # "cleans up the instance's networks, and stays in the BUILD state"
        assert (server["status"], server["OS-EXT-STS:vm_state"], server["addresses"]) == ("BUILD", "building", {})
        assert "fault" not in server, server["fault"]
    else:
        assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ERROR", None), server
        message = server["fault"]["message"]
        assert message.startswith(f"Failed to provision instance {server_id}: ") and "torn down" in message, message
        assert server["OS-EXT-SRV-ATTR:hypervisor_hostname"] is None and server["addresses"] == {}, server
    assert term.run("baremetal", "node", "show", node, "-f", "value", "-c", "instance_uuid").strip() == "None"


def test_seed_003_node_undeployed_during_the_build(tmp_path: Path) -> None:
    # A minute in wait call-back: ample time to find the node and undeploy it.
    with clouds(tmp_path, "stuck-build-on-node-teardown", deploy_seconds=60.0) as running:
        on_both(seed_003, running)
