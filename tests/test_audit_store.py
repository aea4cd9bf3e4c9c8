"""`tether audit` reading a Tether store directly (`--data-dir`, `--db`) instead of a cloud's APIs.

The store is made the way a user makes one: `tether scenario run` of seed 001 whole (heat replaces a
failed bare-metal server and orphans its internal port, which keeps the node's NIC's MAC) with the
upstream bugs emulated, into a SQLite file. The store knows what no public API tells, which stack made
a port, so its report draws the stack -> port chain the cloud collector cannot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_audit import check_html_report, metrics


def tether(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def test_the_store_audit_finds_the_stacks_orphan_port_and_draws_its_chain(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'seed001.db'}"
    ran = tether("scenario", "run", "stack-replace-failed-baremetal-server", "--emulate-bug",
                 "orphan-internal-ports", "--db", db, cwd=tmp_path)
    assert ran.returncode == 3, ran  # the scenario fails the upstream way

    done = tether("audit", "--db", db, "--data-dir", str(tmp_path), "--format", "json", cwd=tmp_path)
    assert done.returncode == 3, done
    report = json.loads(done.stdout)
    assert report["sources"][0]["name"] == "tether store" and report["api_calls"] == 0
    assert report["cloud"] == db
    shape = sorted((f["invariant"], sorted(f["resources"])) for f in report["findings"])
    assert shape == [("mac-conflict", ["mac", "nic", "port"]), ("orphan-port", ["port", "resource", "stack"])]
    orphan = next(f for f in report["findings"] if f["invariant"] == "orphan-port")
    held = next(f for f in report["findings"] if f["invariant"] == "mac-conflict")
    assert held["resources"]["port"] == orphan["resources"]["port"]
    # The store says a stack made it: deleted, not merely released as a port of unknown origin would be.
    assert orphan["repair"]["action"] == "delete-port"

    # What `tether check` says of the same store, the auditor says too.
    checked = tether("check", "--db", db, "--data-dir", str(tmp_path), "--json", cwd=tmp_path)
    assert checked.returncode == 3, checked
    assert sorted(v["invariant"] for v in json.loads(checked.stdout)["violations"]) == sorted(
        f["invariant"] for f in report["findings"])

    only = tether("audit", "--db", db, "--data-dir", str(tmp_path), "--only", "orphan-port", "--format", "json",
                  cwd=tmp_path)
    assert [f["invariant"] for f in json.loads(only.stdout)["findings"]] == ["orphan-port"], only

    page, textfile = tmp_path / "store.html", tmp_path / "store.prom"
    done = tether("audit", "--db", db, "--data-dir", str(tmp_path), "--format", "html", "--output", str(page),
                  "--prometheus", str(textfile), cwd=tmp_path)
    assert done.returncode == 3, done
    chains = check_html_report(page, report, "audit-store-stack-orphan-port")
    stack, port = orphan["resources"]["stack"], orphan["resources"]["port"]
    assert chains["orphan-port"].startswith(f"stack {stack} -[no longer lists it BROKEN]-> port {port}"), chains
    assert chains["mac-conflict"].endswith(f"-[keeps its MAC BROKEN]-> nic {held['resources']['nic']}"), chains
    samples = metrics(textfile)
    assert samples[("tether_audit_findings", (("invariant", "orphan-port"),))] == 1
    assert samples[("tether_audit_source_up", (("source", "tether store"),))] == 1
    assert samples[("tether_audit_api_calls", ())] == 0


def test_a_data_dir_with_no_store_is_an_error_and_not_a_clean_audit(tmp_path: Path) -> None:
    done = tether("audit", "--data-dir", str(tmp_path / "nothing"), cwd=tmp_path)
    assert done.returncode == 1 and "no Tether cloud in" in done.stderr, done
    assert not (tmp_path / "nothing").exists()  # a reader creates nothing
    both = tether("audit", "--data-dir", str(tmp_path), "--os-cloud", "tether", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr, both
