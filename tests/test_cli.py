"""The real `tether` command, run as a user runs it: in a process of its own.

Subprocesses are slow, so each run checks as much as it can.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.cloud import Cloud
from tether.config import DataDir
from tether.domain.baremetal import TENANT_VIF_KEY
from tether.domain.ids import new_uuid
from tether.drivers.hypervisor import FakeHypervisor
from tether.local_cloud import open_world
from tether.runtime.bugs import Bug
from tether.runtime.checkpoints import CHECKPOINTS, PROTECTIONS
from tether.runtime.clock import VirtualClock
from tether.seeding import DemoShape, seed_demo_cloud, wait_for_nodes
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scheduler import Scheduler, scheduled_runtime
from tether.store import repos
from tether.store.database import Database

from .conftest import PG_URL, REQUIRE_PG, pg_available

TETHER = Path(sys.executable).with_name("tether")
SCENARIO = "port-deleted-during-attach"


def tether(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    assert TETHER.exists(), f"the console script is not installed at {TETHER}"
    return subprocess.run([str(TETHER), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1"})


def refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """A clean refusal: non-zero, no traceback, and the words (in any wrapping) on stderr or stdout."""
    assert result.returncode not in (0, 3), (result.returncode, result.stdout, result.stderr)
    shown = result.stderr + result.stdout
    assert "Traceback" not in shown, shown
    flat = " ".join(line.strip(" │╭╮╰╯─") for line in shown.splitlines())
    flat = " ".join(flat.split())
    for word in words:
        assert word in flat, (word, shown)


def lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return result.stdout.splitlines()


# -- listing ------------------------------------------------------------------------------


def test_faults_list_prints_one_name_a_line_and_nothing_else() -> None:
    assert lines(tether("faults", "list")) == sorted(CHECKPOINTS) + [f"{name}=off" for name in sorted(PROTECTIONS)]


BY_SEED = sorted(Bug, key=lambda bug: bug.upstream.seed)


def test_bugs_list_prints_a_row_per_bug_with_its_seed_upstream_report_and_description() -> None:
    listed = lines(tether("bugs", "list"))
    assert len(Bug) == 5
    header = next(line for line in listed if " name " in line)
    assert all(f" {column} " in header for column in ("seed", "upstream", "what emulating it does")), header
    for bug in Bug:
        # Into a pipe the table is not wrapped: a bug's first line holds its name, seed, report and description.
        (row,) = [line for line in listed if f" {bug.value} " in line]
        upstream = bug.upstream
        assert upstream.seed in row and f"{upstream.project}: {upstream.title}" in row and bug.description in row, row
        for reference in upstream.references:
            assert any(reference in line for line in listed), reference
    rows = [bug for line in listed for bug in Bug if f" {bug.value} " in line]
    assert rows == BY_SEED  # in the order the README tells them


def _seeds_folder() -> Path | None:
    """The project's shared seeds (``../shared/seeds`` of a checkout, or of a folder above a worktree)."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "shared" / "seeds").is_dir():
            return folder / "shared" / "seeds"
    return None


def test_bugs_list_json_names_every_bug_with_references_its_seed_quotes() -> None:
    listed = json.loads("\n".join(lines(tether("bugs", "list", "--json"))))
    assert [entry["name"] for entry in listed["bugs"]] == BY_SEED
    for entry in listed["bugs"]:
        assert set(entry) == {"name", "seed", "project", "title", "references", "description"}, entry
        bug = Bug(entry["name"])
        assert entry["seed"] == bug.upstream.seed and entry["description"] == bug.description
        assert entry["project"] and entry["title"] and isinstance(entry["references"], list)
    (seed_003,) = [entry for entry in listed["bugs"] if entry["seed"].startswith("003")]
    assert seed_003["references"] == [], "seed 003 quotes no number: none is made up"
    seeds = _seeds_folder()
    if seeds is None:
        pytest.skip("no shared/seeds folder above this checkout to check the references against")
    for entry in listed["bugs"]:
        text = (seeds / f"{entry['seed']}.txt").read_text()
        assert text.splitlines()[0].strip() == entry["title"], entry
        for reference in entry["references"]:
            link = reference.split()[-1]  # "fix proposed: https://..."
            assert link in text, (entry["seed"], link)


def test_scenario_list_names_every_scenario_with_its_seed() -> None:
    listed = {line.split("\t")[0]: line.split("\t")[1:] for line in lines(tether("scenario", "list"))}
    assert set(listed) == set(SCENARIOS)
    for name, scenario in SCENARIOS.items():
        assert listed[name] == [f"seed {scenario.seed}", scenario.summary]


# -- running a scenario -----------------------------------------------------------------------


def scenario_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = tether("scenario", "run", SCENARIO, "--json", *args)
    assert "Traceback" not in result.stderr, result.stderr
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"not one JSON object: {result.stdout!r} {result.stderr!r}") from None
    assert {"scenario", "passed", "violations", "steps", "unmet", "errors"} <= set(report), report.keys()
    assert report["scenario"] == SCENARIO
    for step in report["steps"]:
        assert set(step) == {"at", "actor", "text"} and isinstance(step["at"], (int, float)), step
    return result.returncode, report


def test_scenario_run_passes_and_reports_json() -> None:
    code, report = scenario_json()
    assert code == 0, report
    assert report["passed"] is True
    assert report["violations"] == [] and report["unmet"] == [] and report["errors"] == []
    assert any("attach myport to myvm failed" in step["text"] for step in report["steps"]), report["steps"]


def test_scenario_run_with_the_upstream_bug_exits_3_and_lists_the_zombie_interface() -> None:
    code, report = scenario_json("--emulate-bug", "zombie-interface-on-attach-race")
    assert code == 3, report
    assert report["passed"] is False
    zombies = [v for v in report["violations"] if v["invariant"] == "zombie-interface"]
    assert zombies, report["violations"]
    assert all("guest interface" in v["evidence"] or "not plugged" in v["evidence"] for v in zombies)


async def test_scenario_run_on_postgresql() -> None:
    if not await pg_available():
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_URL}")
        pytest.skip(f"no PostgreSQL at {PG_URL}")
    code, report = scenario_json("--db", PG_URL)
    assert code == 0 and report["passed"] is True, report


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("no-such-scenario",), ("unknown scenario 'no-such-scenario'", "tether scenario list")),
        ((SCENARIO, "--emulate-bug", "no-such-bug"), ("Unknown bug 'no-such-bug'", "tether bugs list")),
        ((SCENARIO, "--fault", "compute.build.after_schedule=explode"),
         ("Invalid fault rule 'compute.build.after_schedule=explode'",)),
        ((SCENARIO, "--fault", "compute.no.such.point=crash"), ("Unknown checkpoint 'compute.no.such.point'",)),
        ((SCENARIO, "--db", "mysql://root@localhost/tether"), ("Unsupported database 'mysql'",)),
        ((SCENARIO, "--db", "postgresql://postgres@127.0.0.1:1/test"), ("error:", "Connect call failed")),
    ],
    ids=["scenario", "bug", "fault", "checkpoint", "db-kind", "db-unreachable"],
)
def test_scenario_run_refuses_what_it_does_not_know_without_a_traceback(args: tuple[str, ...],
                                                                       words: tuple[str, ...]) -> None:
    refused(tether("scenario", "run", *args), *words)


# -- checking a data directory --------------------------------------------------------------


async def seed_data_dir(path: Path) -> dict[str, str]:
    """A demo cloud in ``path`` with a running VM and bare-metal server, made in virtual time."""
    world = open_world(path, deploy_seconds=60.0, clean_seconds=30.0)
    await world.database.create_schema()
    runtime = scheduled_runtime(Scheduler(VirtualClock()))
    cloud = Cloud(world, runtime, random.Random(0), fast_passwords=True)
    scheduler = runtime.executor.scheduler
    assert scheduler is not None

    async def act(coro: Any) -> Any:
        # One actor, and everything it starts (the builds), run to the end.
        actor = scheduler.spawn(coro, "seed")
        await scheduler.run()
        assert not [a.error for a in scheduler.actors if a.error is not None]
        return actor.result

    async def seed() -> tuple[Any, dict[str, str]]:
        seeded = await seed_demo_cloud(cloud, DemoShape(nodes=2, hypervisors=1))
        await wait_for_nodes(cloud, seeded)
        names = dict(seeded.names)
        for name, flavor in (("vm", "1"), ("bm", "3")):
            server = await cloud.compute.create_server(seeded.admin.fresh(), name=name, flavor_id=flavor,
                                                       image_id=names["cirros"],
                                                       networks=[{"uuid": names["private"]}])
            names[name] = server.uuid
        return seeded.admin, names

    async def settled(admin: Any, names: dict[str, str]) -> None:
        for name in ("vm", "bm"):
            assert (await cloud.compute.server_record(admin.fresh(), names[name])).instance.status == "ACTIVE"
        (free,) = [n for n in await cloud.baremetal.list_nodes(admin.fresh()) if n.instance_uuid is None]
        names["free-node"] = free.uuid

    try:
        admin, names = await act(seed())
        await act(settled(admin, names))
    finally:
        await world.database.dispose()
    return names


async def plant_stale_vif(path: Path, node_uuid: str) -> tuple[str, str]:
    """A VIF for a port that does not exist, written straight into a free node's NIC: (vif, nic)."""
    vif = new_uuid(random.Random(1))
    database = Database(DataDir(path).database_url)
    try:
        async with database.begin() as conn:
            (nic,) = await repos.node_ports.find(conn, node_uuid=node_uuid)
            await repos.node_ports.update(conn, nic.uuid, internal_info={**nic.internal_info, TENANT_VIF_KEY: vif})
    finally:
        await database.dispose()
    return vif, nic.uuid


async def test_check_reads_a_data_directory_and_lists_what_is_planted(tmp_path: Path) -> None:
    data_dir = tmp_path / "cloud"
    names = await seed_data_dir(data_dir)
    assert DataDir(data_dir).hardware_state.exists()  # the machines' state lives with the cloud

    fresh = tether("check", "--data-dir", str(data_dir))
    assert fresh.returncode == 0, (fresh.stdout, fresh.stderr)
    assert "no violations" in fresh.stdout

    vif, nic = await plant_stale_vif(data_dir, names["free-node"])
    as_json = tether("check", "--data-dir", str(data_dir), "--json")
    assert as_json.returncode == 3, (as_json.stdout, as_json.stderr)
    assert json.loads(as_json.stdout)["violations"] == [{
        "invariant": "stale-vif", "node": names["free-node"], "vif": vif, "nic": nic,
        "evidence": f"node {names['free-node']} lists VIF {vif} but its port no longer exists"}]

    ghost = new_uuid(random.Random(2))
    FakeHypervisor(DataDir(data_dir).hypervisor_state).plug("compute-1", names["vm"], ghost, "fa:16:3e:00:00:99")
    as_text = tether("check", "--data-dir", str(data_dir))
    assert as_text.returncode == 3, (as_text.stdout, as_text.stderr)
    # One line per violation, whole: the ids are there to be copied, never wrapped or cut short.
    stale, zombie = sorted(as_text.stdout.splitlines())
    assert stale.startswith("VIOLATION stale-vif: ") and vif in stale and nic in stale, stale
    assert zombie.startswith("VIOLATION zombie-interface: ") and ghost in zombie and names["vm"] in zombie, zombie
    assert "its port no longer exists" in zombie


def test_check_refuses_a_data_directory_that_holds_no_cloud_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no-cloud-here"
    refused(tether("check", "--data-dir", str(missing)), f"no Tether cloud in {missing}")
    assert not missing.exists()


def test_scenario_run_never_reuses_a_store_it_did_not_create(tmp_path: Path) -> None:
    existing = tmp_path / "mine.db"
    existing.write_bytes(b"someone's data")
    refused(tether("scenario", "run", SCENARIO, "--db", f"sqlite:///{existing}"), f"{existing} already exists")
    assert existing.read_bytes() == b"someone's data"


def test_serve_reports_a_database_it_cannot_reach_in_a_line(tmp_path: Path) -> None:
    result = tether("serve", "--db", "postgresql://postgres@127.0.0.1:1/test", "--data-dir", str(tmp_path))
    refused(result, "error:")
    assert len(result.stderr.splitlines()) == 1, result.stderr
