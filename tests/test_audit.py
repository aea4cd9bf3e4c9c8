"""`tether audit` and `tether repair` against live `tether serve` processes, through their public APIs.

The leaks are made the way the seeds' reproduction steps make them, typed into the real `openstack`
CLI against clouds that emulate the upstream bugs; the auditor is then run as an operator runs it,
`tether audit --os-cloud tether`, with the clouds.yaml the server wrote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.headless_browser import chromium, keep_screenshot
from tests.live import LiveCloud, start
from tests.test_cli_seeds import ATTACH_HELD, POOL, Session

DELETE_HELD = "compute.delete.before_unplug=sleep:3*1"
QUIET = ("--reconcile-interval", "3600")


def tether(cloud: LiveCloud, *args: str, stdin: str | None = None, cwd: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml)}
    return subprocess.run([sys.executable, "-m", "tether.cli", *args], env=env, capture_output=True, text=True,
                          timeout=180, input=stdin, cwd=cwd or cloud.data_dir)


def audit(cloud: LiveCloud, *args: str) -> tuple[int, dict[str, Any]]:
    done = tether(cloud, "audit", "--os-cloud", "tether", "--format", "json", *args)
    assert done.returncode in (0, 3), (done.returncode, done.stdout, done.stderr)
    return done.returncode, json.loads(done.stdout)


def shape(report: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    return sorted((f["invariant"], f["resources"]) for f in report["findings"])


@contextmanager
def session(cloud: LiveCloud, name: str) -> Iterator[Session]:
    term = Session(cloud, name)
    try:
        yield term
    finally:
        term.close()


@contextmanager
def running(*clouds: tuple[Path, tuple[str, ...], dict[str, float]]) -> Iterator[list[LiveCloud]]:
    futures = [POOL.submit(start, data, *extra, "--log-file", str(data / "access.log"), **timing)
               for data, extra, timing in clouds]
    try:
        yield [future.result() for future in futures]
    finally:
        for future in futures:
            if future.exception() is None:
                future.result().stop()


def make_stale_vif(term: Session) -> tuple[str, str]:
    """Seed 000's steps up to the leak: node-1 lists the VIF of a port deleted with its server."""
    node = term.only_node_1()
    term.boot("server1", "--flavor", "baremetal", "--nic", "net-id=private")
    (vif,) = term.lines_of("port", "list", "--server", "server1", "-c", "ID")
    term.run("server", "delete", "server1")
    term.run("port", "delete", vif)  # while the delete is held
    term.until(lambda: term.attempt("server", "show", "server1").stderr, lambda said: "No Server found" in said,
               "server1 deleting")
    term.wait_available("node-1")
    assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == [vif]
    return node, vif


def make_held_mac(term: Session) -> tuple[str, str, str]:
    """Seed 001's steps up to the leak: test-port1, released, keeps node-1's NIC's MAC."""
    node = term.only_node_1()
    (nic,) = term.lines_of("baremetal", "port", "list", "--node", "node-1", "-c", "UUID")
    (nic_mac,) = term.lines_of("baremetal", "port", "list", "--node", "node-1", "-c", "Address")
    port = term.json("port", "create", "--network", "private", "test-port1")
    term.boot("test-server", "--flavor", "baremetal", "--port", "test-port1")
    term.run("server", "delete", "--wait", "test-server")
    term.wait_available("node-1")
    assert term.json("port", "show", "test-port1")["mac_address"] == nic_mac
    return node, port["id"], nic


def api_requests(cloud: LiveCloud, since: int) -> list[str]:
    """The method and path of each request the server logged after byte ``since`` of its log."""
    text = (cloud.data_dir / "access.log").read_text()[since:]
    return re.findall(r'tether\.access .*? "([A-Z]+ [^" ]+)"', text)


def log_size(cloud: LiveCloud) -> int:
    return len((cloud.data_dir / "access.log").read_text())


def test_audit_finds_exactly_the_seeds_leaks_and_repair_mends_them(tmp_path: Path) -> None:
    with (running((tmp_path / "000", ("--emulate-bug", "stale-vif-on-terminate", "--fault", DELETE_HELD, *QUIET),
                   {"clean_seconds": 5.0}),
                  (tmp_path / "001", ("--emulate-bug", "mac-kept-on-unbind", *QUIET), {})) as (c000, c001),
          session(c000, "000") as t000, session(c001, "001") as t001):
        if True:
            stale = POOL.submit(make_stale_vif, t000)
            held = POOL.submit(make_held_mac, t001)
            node0, vif = stale.result()
            node1, port, nic = held.result()

            mark = log_size(c000)
            code, report = audit(c000)
            assert code == 3
            assert shape(report) == [("stale-vif", {"node": node0, "vif": vif, "nic": report["findings"][0]
                                                    ["resources"]["nic"]})]
            finding = report["findings"][0]
            assert finding["repair"]["action"] == "detach-vif" and "no longer exists" in finding["evidence"]
            assert finding["age_seconds"] is not None and report["schema"] == "tether-audit/1"
            # One list call per collection, never a GET per resource.
            calls = [call for call in api_requests(c000, mark) if call.startswith("GET ")
                     and re.search(r"/(servers|ports|nodes|portgroups)\b", call)]
            assert len(calls) == 5 == report["api_calls"], calls
            assert not [call for call in calls if re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", call)], calls
            # The page to share draws the chain the seed broke: the node's NIC still holds the VIF of a
            # port that is gone, and no instance owns the node.
            page = c000.data_dir / "audit.html"
            assert tether(c000, "audit", "--os-cloud", "tether", "--format", "html", "--output", str(page)
                          ).returncode == 3
            chains = check_html_report(page, report, "audit-stale-vif")
            assert chains["stale-vif"] == (f"instance (none) (gone) -[binds]-> port {vif} (gone) -[port gone BROKEN]-> "
                                           f"vif {vif} -[attached to]-> nic {finding['resources']['nic']}"), chains

            code, report = audit(c001)
            assert code == 3
            mac = t001.json("port", "show", "test-port1")["mac_address"]
            assert shape(report) == [("mac-conflict", {"port": port, "mac": mac, "nic": nic})]
            assert report["findings"][0]["repair"]["action"] == "reset-mac"

            for cloud in (c000, c001):
                # The defaults: a dry run, held back while the finding is younger than 10 minutes.
                dry = tether(cloud, "repair", "--os-cloud", "tether")
                assert dry.returncode == 3 and dry.stdout.startswith("HELD BACK"), dry
                assert "younger than --older-than 600 s" in dry.stdout, dry
                dry = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0")
                assert dry.returncode == 3 and dry.stdout.startswith("WOULD REPAIR"), dry
                capped = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0", "--apply",
                                "--max-actions", "0")
                assert capped.returncode == 1 and "ABORTED" in capped.stdout, capped
                assert audit(cloud)[0] == 3  # nothing was done

                textfile = cloud.data_dir / "repair.prom"
                done = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0", "--apply",
                              "--prometheus", str(textfile))
                assert done.returncode == 4 and done.stdout.startswith("REPAIRED"), done
                journal = [json.loads(line) for line in (cloud.data_dir / "tether-repair.jsonl").read_text()
                           .splitlines()]
                assert [entry["status"] for entry in journal] == ["acting", "repaired"], journal
                assert journal[0]["before"] is not None
                samples = metrics(textfile)
                action = journal[0]["action"]["action"]
                assert {key: value for key, value in samples.items() if key[0] == "tether_repair_actions"} == {
                    ("tether_repair_actions", (("action", action), ("outcome", "repaired"))): 1.0}, samples
                assert samples[("tether_repair_applied", ())] == 1.0
                assert samples[("tether_audit_findings", (("invariant", journal[0]["finding"]["invariant"]),))] == 1
                code, report = audit(cloud)
                assert (code, report["findings"]) == (0, []), report

            assert t000.lines_of("baremetal", "node", "vif", "list", "node-1") == []
            assert t001.json("port", "show", "test-port1")["mac_address"].startswith("fa:16:3e:")
            # The node each leak blocked takes a new server again.
            for term, node, how in ((t000, node0, ("--nic", "net-id=private")), (t001, node1, ("--port", port))):
                server = term.boot("again", "--flavor", "baremetal", *how)
                assert (server["status"], server["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), server


def metrics(path: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Each sample of a Prometheus text file, by name and labels (without the cloud's)."""
    return {(sample.name, tuple(sorted((k, v) for k, v in sample.labels.items() if k != "cloud"))): sample.value
            for family in text_string_to_metric_families(path.read_text()) for sample in family.samples}


BROKEN_RED = "rgb(198, 40, 40)"


def check_html_report(page: Path, report: dict[str, Any], name: str) -> dict[str, str]:
    """The page as a person sees it in Chromium: the summary, one body per finding with its chain drawn
    (a visible SVG whose broken link is red), columns that sort, nothing fetched. The screenshot is kept.
    Returns each finding's chain in words (the SVG's accessible name), by invariant."""
    from selenium.webdriver.common.by import By

    with chromium() as driver:
        driver.get(page.as_uri())
        assert driver.title == f"Tether audit of {report['cloud']}"
        summary = {row.get_attribute("data-invariant"): row.find_elements(By.TAG_NAME, "td")[1].text
                   for row in driver.find_elements(By.CSS_SELECTOR, "#summary tbody tr")}
        assert summary == {name: str(count) for name, count in report["summary"].items()}
        bodies = driver.find_elements(By.CSS_SELECTOR, "table.findings tbody.finding")
        assert [b.get_attribute("data-invariant") for b in bodies] == [f["invariant"] for f in report["findings"]]
        chains = {}
        for body, finding in zip(bodies, report["findings"], strict=True):
            facts = body.find_element(By.CSS_SELECTOR, "tr.facts").text
            assert all(value in facts for value in finding["resources"].values()), (facts, finding)
            svg = body.find_element(By.CSS_SELECTOR, "svg.chain")
            assert svg.is_displayed()
            width, height = driver.execute_script("const b = arguments[0].getBBox(); return [b.width, b.height]", svg)
            assert width > 140 and height > 40, (width, height)  # boxes drawn, not an empty element
            broken = svg.find_elements(By.CSS_SELECTOR, ".link.broken line, .box.broken rect")
            assert broken, svg.get_attribute("outerHTML")
            assert {line.value_of_css_property("stroke") for line in broken} == {BROKEN_RED}
            sound = svg.find_elements(By.CSS_SELECTOR, ".link:not(.broken) line")
            assert BROKEN_RED not in {line.value_of_css_property("stroke") for line in sound}
            chains[finding["invariant"]] = svg.get_attribute("aria-label")
        # Nothing was fetched: no style sheet, script, font or image from anywhere.
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        assert not driver.find_elements(By.CSS_SELECTOR, "[src], link[href]")
        keep_screenshot(driver, name)

        heading = driver.find_element(By.XPATH, "//table[contains(@class,'findings')]//th[.//button[.='invariant']]")
        order = [f["invariant"] for f in report["findings"]]
        for expected in (sorted(order), sorted(order, reverse=True)):
            heading.find_element(By.TAG_NAME, "button").click()
            shown = [b.get_attribute("data-invariant") for b in
                     driver.find_elements(By.CSS_SELECTOR, "table.findings tbody.finding")]
            assert shown == expected
        # Each finding's chain moved with its row.
        for body in driver.find_elements(By.CSS_SELECTOR, "table.findings tbody.finding"):
            label = body.find_element(By.CSS_SELECTOR, "svg.chain").get_attribute("aria-label")
            assert chains[body.get_attribute("data-invariant")] == label
    return chains


def make_zombie(term: Session) -> tuple[str, str]:
    """Seed 004's steps: a port deleted while `server add port` is held; the guest keeps its NIC."""
    term.run("server", "create", "--flavor", "m1.small", "--image", "cirros", "--nic", "net-id=private", "myvm")
    port = term.json("port", "create", "--network", "private", "myport")
    server = term.until(lambda: term.server("myvm"), lambda shown: shown["status"] == "ACTIVE", "myvm building")
    attach = term.background("server", "add", "port", "myvm", "myport")
    term.until(lambda: term.lines_of("port", "show", "myport", "-c", "device_id"),
               lambda device: device == [server["id"]], "myport not bound yet", timeout=30)
    term.run("port", "delete", "myport")
    assert attach.result(timeout=60).returncode == 1
    return server["id"], port["mac_address"]


def make_stuck_build(term: Session) -> tuple[str, str]:
    """Seed 003's steps: the node is undeployed while the build waits for its call-back."""
    server_id = term.run("server", "create", "--flavor", "baremetal", "--image", "cirros", "--nic",
                         "net-id=private", "server1", "-f", "value", "-c", "id").strip()
    found = term.until(
        lambda: term.attempt("baremetal", "node", "show", "--instance", server_id, "-f", "value", "-c", "uuid",
                             "-c", "provision_state").stdout.strip().split(maxsplit=1),
        lambda said: said[1:] == ["wait call-back"], "the node reaching wait call-back")
    term.run("baremetal", "node", "undeploy", found[0])
    term.wait_available(found[0])
    assert term.server("server1")["status"] == "BUILD"
    return server_id, found[0]


def test_audit_finds_a_stuck_build_and_a_zombie_interface_and_only_with_guests_read(tmp_path: Path) -> None:
    bugs = ("--emulate-bug", "stuck-build-on-node-teardown", "--emulate-bug", "zombie-interface-on-attach-race",
            "--fault", ATTACH_HELD, *QUIET)
    with running((tmp_path / "cloud", bugs, {"deploy_seconds": 60.0})) as (cloud,), \
            session(cloud, "zombie") as vm_term, session(cloud, "stuck") as bm_term:
        zombie = POOL.submit(make_zombie, vm_term)
        stuck = POOL.submit(make_stuck_build, bm_term)
        (vm, mac), (server, node) = zombie.result(), stuck.result()

        code, report = audit(cloud)
        assert code == 3
        assert shape(report) == [("association", {"instance": server, "node": node}),
                                 ("stuck-transient", {"instance": server, "node": node})], report["findings"]
        stuck_finding = next(f for f in report["findings"] if f["invariant"] == "stuck-transient")
        assert stuck_finding["repair"]["action"] == "reset-state-error"
        assert "is BUILD but its node is available" in stuck_finding["evidence"]

        code, report = audit(cloud, "--guest-interfaces")
        zombies = [f for f in report["findings"] if f["invariant"] == "zombie-interface"]
        assert len(report["findings"]) == 3 and len(zombies) == 1, report["findings"]
        assert zombies[0]["resources"]["instance"] == vm and mac in zombies[0]["evidence"], zombies
        assert "its port no longer exists" in zombies[0]["evidence"]
        assert zombies[0]["repair"]["action"] == "hard-reboot"

        code, report = audit(cloud, "--guest-interfaces", "--only", "zombie-interface")
        assert (code, [f["invariant"] for f in report["findings"]]) == (3, ["zombie-interface"])
        assert report["evaluated"] == ["zombie-interface"]

        # The same audit as a page to share, and as metrics for node_exporter.
        page, textfile = cloud.data_dir / "audit.html", cloud.data_dir / "audit.prom"
        done = tether(cloud, "audit", "--os-cloud", "tether", "--guest-interfaces", "--format", "html", "--output",
                      str(page), "--prometheus", str(textfile))
        assert done.returncode == 3 and page.read_text().startswith("<!DOCTYPE html>"), done
        code, report = audit(cloud, "--guest-interfaces")
        chains = check_html_report(page, report, "audit-stuck-build-and-zombie")
        assert chains["stuck-transient"] == (f"instance {server} -[node is available BROKEN]-> node {node}"), chains
        assert chains["zombie-interface"].startswith(f"instance {vm} -[plugs]-> interface (unnamed)")
        assert chains["zombie-interface"].endswith("BROKEN]-> port (none) (gone)"), chains
        samples = metrics(textfile)
        found = {labels[0][1]: value for (name, labels), value in samples.items() if name == "tether_audit_findings"}
        assert found == {name: float(count) for name, count in report["summary"].items()}
        assert (found["association"], found["stuck-transient"], found["zombie-interface"]) == (1, 1, 1)
        assert {value for (name, _), value in samples.items() if name == "tether_audit_source_up"} == {1.0}
        assert samples[("tether_audit_api_calls", ())] == report["api_calls"]

        # The store read directly, beside its server: it sees what the APIs hide (every guest interface,
        # who made each port), and finds the same leaks.
        done = tether(cloud, "audit", "--data-dir", str(cloud.data_dir), "--format", "json")
        assert done.returncode == 3, done
        store = json.loads(done.stdout)
        assert store["sources"] == [{"name": "tether store", "ok": True, "items": store["sources"][0]["items"],
                                     "calls": 0, "error": None}]
        assert sorted((f["invariant"], f["resources"]["instance"]) for f in store["findings"]) == sorted(
            (f["invariant"], f["resources"]["instance"]) for f in report["findings"]), store["findings"]
        zombie = next(f for f in store["findings"] if f["invariant"] == "zombie-interface")
        assert zombie["resources"]["device"].startswith("tap") and mac in zombie["evidence"], zombie


def test_audit_finds_a_users_port_the_node_kept_when_both_bugs_are_on(tmp_path: Path) -> None:
    """Seeds 000 and 001 together: the server on a user's port is deleted, compute gives the port back
    (unbound, no device) but the node, free again, keeps it as its VIF. Nothing names compute any more,
    yet the node is blocked: the audit must not take it for a standalone ironic user's VIF."""
    bugs = ("--emulate-bug", "stale-vif-on-terminate", "--emulate-bug", "mac-kept-on-unbind", *QUIET)
    with running((tmp_path / "both", bugs, {"clean_seconds": 5.0})) as (cloud,), session(cloud, "both") as term:
        node = term.only_node_1()
        (nic,) = term.lines_of("baremetal", "port", "list", "--node", "node-1", "-c", "UUID")
        port = term.json("port", "create", "--network", "private", "test-port1")["id"]
        term.boot("test-server", "--flavor", "baremetal", "--port", "test-port1")
        term.run("server", "delete", "--wait", "test-server")
        term.wait_available("node-1")
        assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == [port]
        assert term.lines_of("port", "show", "test-port1", "-c", "device_id") == [""]

        code, report = audit(cloud)
        assert code == 3
        assert shape(report) == [("stale-vif", {"node": node, "vif": port, "nic": nic})], report["findings"]
        assert "unbound after the node recorded it" in report["findings"][0]["evidence"]
        assert report["findings"][0]["repair"]["action"] == "detach-vif"
        # The store read directly says the same.
        store = tether(cloud, "audit", "--data-dir", str(cloud.data_dir), "--format", "json")
        assert store.returncode == 3 and shape(json.loads(store.stdout)) == shape(report), store

        # Ironic of the bug's time keeps the NIC's MAC on the port it detaches: the second pass resets it.
        done = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0", "--apply")
        assert done.returncode == 4 and done.stdout.startswith("REPAIRED stale-vif"), done
        code, report = audit(cloud)
        assert [f["invariant"] for f in report["findings"]] in ([], ["mac-conflict"]), report["findings"]
        if report["findings"]:
            done = tether(cloud, "repair", "--os-cloud", "tether", "--older-than", "0", "--apply")
            assert done.returncode == 4, done
        code, report = audit(cloud)
        assert (code, report["findings"]) == (0, []), report
        assert term.lines_of("baremetal", "node", "vif", "list", "node-1") == []
        server = term.boot("again", "--flavor", "baremetal", "--nic", "net-id=private")
        assert (server["status"], server["OS-EXT-SRV-ATTR:hypervisor_hostname"]) == ("ACTIVE", node), server
