"""`tether repair`'s gates against live clouds that move while it runs.

Two of the issue's promises, driven as they happen in production: a finding that somebody fixes (or
that the cloud reuses) between the analysis and the action is skipped and journalled as skipped; and a
healthy cloud in the middle of builds and deletes gives nothing the gates would act on. Nothing here
reaches inside the auditor: the cloud is changed through its API while `tether repair --confirm` waits
for its operator's answer, exactly where a person at the terminal would leave it waiting.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import openstack.connection

from tests.live import LiveCloud
from tests.test_audit import DELETE_HELD, QUIET, audit, make_held_mac, make_stale_vif, running, session, tether
from tests.test_cli_seeds import POOL, Session


class AtTheTerminal:
    """`tether repair --apply --confirm`, asking its operator before each action; the test answers."""

    def __init__(self, cloud: LiveCloud, journal: Path) -> None:
        env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tether.cli", "repair", "--os-cloud", "tether", "--older-than", "0", "--apply",
             "--confirm", "--journal", str(journal)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            cwd=cloud.data_dir)
        self.said: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stderr is not None
        # A question ends with no newline: read it a character at a time.
        for char in iter(lambda: self.process.stderr.read(1), ""):  # type: ignore[union-attr]
            self.said.put(char)
        self.said.put(None)

    def question(self, timeout: float = 180) -> str:
        text = ""
        while not text.endswith("[y/N]:"):  # click writes the blank after it with the answer
            try:
                char = self.said.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"tether repair asked nothing in {timeout} s: {text!r}") from None
            if char is None:
                raise AssertionError(f"tether repair ended without asking: {text!r}")
            text += char
        return text

    def answer_yes_and_finish(self) -> tuple[int, str]:
        out, _ = self.process.communicate("y\n", timeout=180)
        return self.process.returncode, out


def journal_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def fixed_meanwhile(term: Session, cloud: LiveCloud) -> None:
    """Seed 000's stale VIF; while repair asks, the operator detaches it by hand."""
    node, vif = make_stale_vif(term)
    journal = cloud.data_dir / "fixed.jsonl"
    repair = AtTheTerminal(cloud, journal)
    asked = repair.question()
    assert asked.lstrip().startswith("stale-vif: ") and vif in asked, asked
    term.run("baremetal", "node", "vif", "detach", "node-1", vif)
    code, out = repair.answer_yes_and_finish()
    assert code == 3 and out.lstrip().startswith("SKIPPED stale-vif") and "(no longer holds)" in out, (code, out)
    (entry,) = journal_of(journal)
    assert (entry["status"], entry["reason"], entry["action"]["action"]) == ("skipped", "no longer holds",
                                                                                 "detach-vif"), entry
    assert entry["finding"]["resources"]["vif"] == vif and entry["before"]["node"]["uuid"] == node, entry
    code, report = audit(cloud)
    assert (code, report["findings"]) == (0, []), report


def reused_meanwhile(term: Session, cloud: LiveCloud) -> None:
    """Seed 001's port that keeps node-1's NIC's MAC; while repair asks, a new server takes that very
    port on node-1, so the MAC is the NIC's VIF's again and must not be reset under the running server."""
    node, port, nic = make_held_mac(term)
    nic_mac = term.json("port", "show", "test-port1")["mac_address"]
    journal = cloud.data_dir / "reused.jsonl"
    repair = AtTheTerminal(cloud, journal)
    asked = repair.question()
    assert asked.lstrip().startswith("mac-conflict: ") and port in asked, asked
    server = term.boot("reuse", "--flavor", "baremetal", "--port", "test-port1")
    assert (server["status"], server["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), server
    code, out = repair.answer_yes_and_finish()
    assert code == 3 and out.lstrip().startswith("SKIPPED mac-conflict") and "(no longer holds)" in out, (code, out)
    (entry,) = journal_of(journal)
    assert (entry["status"], entry["reason"], entry["action"]["action"]) == ("skipped", "no longer holds",
                                                                                 "reset-mac"), entry
    assert entry["before"]["port"]["device_id"] == server["id"], entry
    assert term.json("port", "show", "test-port1")["mac_address"] == nic_mac
    assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == [port]
    assert nic in term.lines_of("baremetal", "port", "list", "--node", "node-1", "-c", "UUID")


def test_a_finding_fixed_or_reused_before_the_action_is_skipped_and_journalled(tmp_path: Path) -> None:
    with (running((tmp_path / "000", ("--emulate-bug", "stale-vif-on-terminate", "--fault", DELETE_HELD, *QUIET),
                   {"clean_seconds": 5.0}),
                  (tmp_path / "001", ("--emulate-bug", "mac-kept-on-unbind", *QUIET), {})) as (c000, c001),
          session(c000, "000") as t000, session(c001, "001") as t001):
        fixed = POOL.submit(fixed_meanwhile, t000, c000)
        reused = POOL.submit(reused_meanwhile, t001, c001)
        fixed.result()
        reused.result()


# -- a healthy cloud under load ----------------------------------------------------------------------

# The load stops by itself after this many rounds or seconds, if the test has not stopped it first.
ROUNDS, LOAD_SECONDS = 300, 400.0
KEEP = 3  # servers kept alive at once; older ones are deleted, building or not


def churn(cloud: LiveCloud, stop: threading.Event, issued: list[str]) -> list[str]:
    """Builds and deletes, bare metal and VMs, until stopped: the ordinary traffic of a busy cloud."""
    conn = cloud.connect()
    try:
        flavors = [conn.compute.find_flavor(name, ignore_missing=False) for name in ("baremetal", "m1.small")]
        image = conn.image.find_image("cirros", ignore_missing=False)
        network = conn.network.find_network("private", ignore_missing=False)
        alive: list[str] = []
        deadline = time.monotonic() + LOAD_SECONDS
        for round_ in range(ROUNDS):
            if stop.is_set() or time.monotonic() > deadline:
                break
            for flavor in flavors:
                server = conn.compute.create_server(name=f"load-{round_}-{flavor.name}", flavor_id=flavor.id,
                                                    image_id=image.id, networks=[{"uuid": network.id}])
                alive.append(server.id)
                issued.append(f"create {server.id}")
            while len(alive) > KEEP:
                victim = alive.pop(0)
                conn.compute.delete_server(victim, ignore_missing=True)
                issued.append(f"delete {victim}")
            stop.wait(1.0)
        return alive
    finally:
        conn.close()


def settle(conn: openstack.connection.Connection, servers: list[str]) -> None:
    """Delete what the load left and wait until every server is gone and every node available."""
    for server in servers:
        conn.compute.delete_server(server, ignore_missing=True)
    deadline = time.monotonic() + 240
    while True:
        left = [s.id for s in conn.compute.servers(all_projects=True)]
        busy = [n.name for n in conn.baremetal.nodes(fields=["name", "provision_state"])
                if n.provision_state != "available"]
        if not left and not busy:
            return
        assert time.monotonic() < deadline, f"the cloud did not settle: servers {left}, nodes {busy}"
        time.sleep(1)


def in_flight(conn: openstack.connection.Connection) -> set[str]:
    """The servers building or with a task (a delete) under way."""
    return {s.id for s in conn.compute.servers(all_projects=True) if s.status == "BUILD" or s.task_state}


def test_a_healthy_cloud_under_load_gives_nothing_the_gates_would_act_on(tmp_path: Path) -> None:
    # No bug emulated, reconcilers at their usual pace: a healthy cloud, with real deploy and clean times.
    with running((tmp_path / "healthy", (), {"deploy_seconds": 3.0, "clean_seconds": 3.0})) as (cloud,):
        cloud.lift_compute_quotas()
        stop, issued = threading.Event(), []
        load = POOL.submit(churn, cloud, stop, issued)
        conn = cloud.connect()
        try:
            deadline = time.monotonic() + 120
            while len(issued) < 4:
                assert not load.done(), load.exception()
                assert time.monotonic() < deadline, issued
                time.sleep(0.2)
            runs = []
            for _ in range(3):
                # Start while something is under way (the load issues in bursts, a second apart).
                deadline = time.monotonic() + 60
                while not (busy := in_flight(conn)):
                    assert not load.done(), load.exception()
                    assert time.monotonic() < deadline, issued
                    time.sleep(0.1)
                before = len(issued)
                # The age gate off: only the task-in-flight gate and the live re-read stand between an
                # operation under way and an action.
                done = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0", "--guest-interfaces",
                              "--json")
                runs.append((done, before, len(issued), busy & in_flight(conn)))
        finally:
            stop.set()
        alive = load.result()
        try:
            for done, before, after, spanned in runs:
                assert done.returncode in (0, 3), (done.returncode, done.stdout, done.stderr)
                body = json.loads(done.stdout)
                assert [s for s in body["sources"] if not s["ok"]] == [] and body["aborted"] is None, body
                acted = [o for o in body["outcomes"] if o["status"] == "would repair"]
                assert acted == [], acted
                # Builds and deletes were under way while it read and judged the cloud: issued meanwhile,
                # or in flight from before it started until after it ended (a run can be shorter than the
                # load's pause between bursts).
                assert after > before or spanned, (before, after, spanned)
            settle(conn, alive)
        finally:
            conn.close()
        code, report = audit(cloud, "--guest-interfaces")
        assert (code, report["findings"]) == (0, []), report
