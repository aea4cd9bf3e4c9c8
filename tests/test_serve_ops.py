"""Operating `tether serve`, as a user does it: each test runs the real commands in processes of their own.

One server per data dir (a second exits 73 and changes nothing), the port bound before anything
is touched (75, nothing left behind), every start-up failure in one line with an exit code of its
own, a `tether check` that only reads, and a banner that means a bare-metal boot will schedule.

Read-only data dirs are made so that root cannot write through them either (the tests run as
root here): a copy in an ext4 image mounted read-only through a loop device (EROFS), or, where
mounting is not allowed, a copy made immutable with ``chattr +i`` (EPERM). ``read_only`` proves
whichever it used by failing to create a file in it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tether.config import DataDir
from tether.domain.baremetal import TENANT_VIF_KEY
from tether.domain.ids import new_uuid
from tether.exits import SERVE_EXITS, ExitCode
from tether.store import repos
from tether.store.database import Database
from tether.store.schema_revision import HEAD

from .conftest import PG_URL, REQUIRE_PG, pg_available
from .live import start

TETHER = Path(sys.executable).with_name("tether")
BANNER = re.compile(r"^Tether (http://\S+) \(")


def tether(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TETHER), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1"})


def one_line_error(result: subprocess.CompletedProcess[str], code: ExitCode, *words: str) -> str:
    """The command failed with ``code``, saying so in one line on stderr, with no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert "Tether http" not in result.stdout, result.stdout  # it never served
    [line] = result.stderr.splitlines()
    assert line.startswith("error: "), line
    for word in words:
        assert word in line, (word, line)
    return line


def snapshot(path: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``path``: its size, modification time and content."""
    return {str(file.relative_to(path)): (file.stat().st_size, file.stat().st_mtime_ns,
                                          hashlib.sha256(file.read_bytes()).hexdigest())
            for file in sorted(path.rglob("*")) if file.is_file()}


@contextlib.contextmanager
def read_only(source: Path, scratch: Path) -> Iterator[Path]:
    """A copy of ``source`` that nobody, root included, can write, for as long as the block runs."""
    scratch.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        copy = _mounted_read_only(source, scratch, stack) or _immutable_copy(source, scratch, stack)
        try:
            (copy / "probe").write_text("x")
        except OSError as error:
            assert error.errno in (errno.EROFS, errno.EPERM, errno.EACCES), error
        else:
            pytest.fail(f"{copy} is not read-only")
        yield copy


def _mounted_read_only(source: Path, scratch: Path, stack: contextlib.ExitStack) -> Path | None:
    if os.geteuid() != 0 or not (shutil.which("mkfs.ext4") and shutil.which("mount")):
        return None
    image, mountpoint = scratch / "ro.img", scratch / "ro"
    mountpoint.mkdir()
    size = sum(f.stat().st_size for f in source.rglob("*") if f.is_file())
    made = subprocess.run(["mkfs.ext4", "-q", "-F", "-d", str(source), str(image), f"{max(16384, size // 256)}k"],
                          capture_output=True)
    if made.returncode != 0:
        return None
    if subprocess.run(["mount", "-o", "loop,ro", str(image), str(mountpoint)], capture_output=True).returncode:
        return None
    stack.callback(subprocess.run, ["umount", str(mountpoint)], check=True)
    return mountpoint


def _immutable_copy(source: Path, scratch: Path, stack: contextlib.ExitStack) -> Path:
    copy = scratch / "immutable"
    shutil.copytree(source, copy)
    if os.geteuid() != 0:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        return copy
    subprocess.run(["chattr", "-R", "+i", str(copy)], check=True)
    stack.callback(subprocess.run, ["chattr", "-R", "-i", str(copy)], check=True)
    return copy


class Client:
    """Just enough of the compute API to boot a server and watch it."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"name": "Default"}, "password": "admin"}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}}
        response = httpx.post(f"{base_url}/identity/v3/auth/tokens", json=auth, timeout=60)
        assert response.status_code == 201, response.text
        self.headers = {"X-Auth-Token": response.headers["X-Subject-Token"]}

    def get(self, path: str) -> Any:
        response = httpx.get(f"{self.base_url}{path}", headers=self.headers, timeout=60)
        assert response.status_code == 200, response.text
        return response.json()

    def boot(self, flavor: str) -> str:
        (image,) = self.get("/image/v2/images?name=cirros")["images"]
        (network,) = self.get("/network/v2.0/networks?name=private")["networks"]
        body = {"server": {"name": f"ops-{uuid.uuid4().hex[:8]}", "flavorRef": flavor, "imageRef": image["id"],
                           "networks": [{"uuid": network["id"]}]}}
        response = httpx.post(f"{self.base_url}/compute/v2.1/servers", json=body, headers=self.headers, timeout=60)
        assert response.status_code == 202, response.text
        return str(response.json()["server"]["id"])

    def wait_active(self, server_id: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            server = self.get(f"/compute/v2.1/servers/{server_id}")["server"]
            if server["status"] != "BUILD" or time.monotonic() > deadline:
                assert server["status"] == "ACTIVE", server
                return dict(server)
            time.sleep(0.05)


def serve_process(data_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """`tether serve` on any free port; returns once it prints its banner, with the URL it names."""
    process = subprocess.Popen([str(TETHER), "serve", "--data-dir", str(data_dir), "--port", "0", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        match = BANNER.match(line)
        if match:
            return process, match.group(1)
    process.wait()
    raise AssertionError(f"tether serve exited with {process.returncode}: {''.join(lines)}")


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


async def plant_stale_vif(data_dir: Path) -> str:
    """A VIF for a port that does not exist, written straight into node-1's NIC (a live server's too)."""
    vif = new_uuid(random.Random(7))
    database = Database(DataDir(data_dir).database_url)
    try:
        async with database.begin() as conn:
            (node,) = await repos.nodes.find(conn, name="node-1")
            (nic,) = await repos.node_ports.find(conn, node_uuid=node.uuid)
            await repos.node_ports.update(conn, nic.uuid, internal_info={**nic.internal_info, TENANT_VIF_KEY: vif})
    finally:
        await database.dispose()
    return vif


@pytest.fixture(scope="module")
def stopped_cloud(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data dir of a cloud that served a VM and was stopped (SIGTERM): no -wal left beside its database."""
    data_dir = tmp_path_factory.mktemp("stopped") / "data"
    process, url = serve_process(data_dir, "--deploy-seconds", "0.2", "--clean-seconds", "0.2")
    try:
        client = Client(url)
        client.wait_active(client.boot("1"))
    finally:
        assert stop(process) == 0
    assert not DataDir(data_dir).path.joinpath("tether.db-wal").exists()
    return data_dir


# -- one owner per data dir ----------------------------------------------------------------------


def test_a_second_serve_is_refused_with_73_and_the_first_ones_build_goes_on_to_active(tmp_path: Path) -> None:
    data_dir = tmp_path / "cloud"
    first = start(data_dir, "--reconcile-interval", "3600", deploy_seconds=3.0)
    try:
        client = Client(first.base_url)
        building = client.boot("3")  # bare metal: deploying for 3 s
        clouds_yaml = first.clouds_yaml.read_text()
        files = sorted(path.name for path in data_dir.iterdir())

        second = tether("serve", "--data-dir", str(data_dir), "--port", "0")
        one_line_error(second, ExitCode.IN_USE, f"the data dir {data_dir} is in use by another tether serve "
                                                f"(PID {first.process.pid})")
        elsewhere = tmp_path / "elsewhere"
        same_database = tether("serve", "--data-dir", str(elsewhere), "--port", "0",
                               "--db", DataDir(data_dir).database_url)
        one_line_error(same_database, ExitCode.IN_USE, f"the database {DataDir(data_dir).database_file} is in use",
                       f"PID {first.process.pid}")

        assert not elsewhere.exists()
        assert first.clouds_yaml.read_text() == clouds_yaml  # still the first server's port
        assert sorted(path.name for path in data_dir.iterdir()) == files
        server = client.wait_active(building)
        assert "fault" not in server, server  # not "the control plane restarted during the build"
        assert first.process.poll() is None
    finally:
        first.stop()


def test_the_lock_goes_with_the_process_even_when_it_is_killed(tmp_path: Path) -> None:
    data_dir = tmp_path / "cloud"
    process, _ = serve_process(data_dir)
    process.kill()  # SIGKILL: nothing of it runs on, and the kernel lets go of its locks
    process.wait()
    again, url = serve_process(data_dir)
    try:
        assert Client(url).get("/baremetal/v1/nodes")["nodes"]
    finally:
        assert stop(again) == 0


async def test_a_second_serve_on_the_same_postgresql_database_is_refused_with_73(tmp_path: Path) -> None:
    if not await pg_available():
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_URL}")
        pytest.skip(f"no PostgreSQL at {PG_URL}")
    import asyncpg

    name = f"tether_serve_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_URL.replace("postgresql://", "postgres://"))
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = PG_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        process, _ = serve_process(tmp_path / "first", "--db", url)
        try:
            second = tether("serve", "--data-dir", str(tmp_path / "second"), "--port", "0", "--db", url)
            one_line_error(second, ExitCode.IN_USE, f"the database {url} is in use by another tether serve",
                           f"PID {process.pid}")
            assert not (tmp_path / "second").exists()
            # A check is no second server: it reads, in read-only transactions, beside the first.
            checked = tether("check", "--data-dir", str(tmp_path / "first"), "--db", url)
            assert (checked.returncode, checked.stdout.strip()) == (0, "no violations"), checked
        finally:
            assert stop(process) == 0
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


# -- bind first ------------------------------------------------------------------------------------


def test_a_port_in_use_exits_75_and_leaves_no_data_dir(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = tether("serve", "--data-dir", str(tmp_path / "new"), "--port", str(port))
    one_line_error(result, ExitCode.PORT_IN_USE, f"port {port} on 127.0.0.1 is in use")
    assert list(tmp_path.iterdir()) == []


# -- every start-up failure in a line ----------------------------------------------------------------


def _corrupt(path: Path) -> Path:
    path.mkdir()
    DataDir(path).database_file.write_bytes(random.Random(0).randbytes(16384))
    return path


def _a_file(path: Path) -> Path:
    path.write_text("not a directory\n")
    return path


def _foreign(path: Path) -> Path:
    path.mkdir()
    with sqlite3.connect(DataDir(path).database_file) as connection:
        connection.execute("CREATE TABLE recipes (name TEXT)")
    return path


def _newer(path: Path) -> Path:
    path.mkdir()
    with sqlite3.connect(DataDir(path).database_file) as connection:
        connection.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY)")
        connection.execute("INSERT INTO alembic_version VALUES ('9999_from_a_newer_tether')")
    return path


@pytest.mark.parametrize(("make", "code", "words"), [
    (_corrupt, ExitCode.CORRUPT_DATABASE, ("tether.db is not a SQLite database, or is damaged (file is not a "
                                           "database); restore it from a backup",)),
    (_a_file, ExitCode.NOT_TETHERS, ("is not a directory, so not a Tether data dir",)),
    (_foreign, ExitCode.NOT_TETHERS, ("holds another application's tables (recipes) and none of Tether's",)),
    (_newer, ExitCode.SCHEMA_TOO_NEW, ("schema revision 9999_from_a_newer_tether", HEAD, "upgrade Tether")),
], ids=["corrupt", "a-file", "foreign-database", "newer-schema"])
def test_a_data_dir_it_cannot_serve_is_one_line_and_its_own_exit_code(tmp_path: Path, make: Any, code: ExitCode,
                                                                      words: tuple[str, ...]) -> None:
    data_dir = make(tmp_path / "data")
    before = snapshot(tmp_path)
    one_line_error(tether("serve", "--data-dir", str(data_dir), "--port", "0"), code, *words)
    changed = {name for name, state in snapshot(tmp_path).items() if before.get(name) != state}
    assert changed <= {"data/tether.lock"}, changed  # the database is left exactly as it was

    debug = tether("serve", "--data-dir", str(data_dir), "--port", "0", "--debug")
    assert debug.returncode == code and "Traceback (most recent call last)" in debug.stderr, debug.stderr
    assert debug.stderr.splitlines()[-1].startswith("error: "), debug.stderr


def test_a_read_only_data_dir_is_one_line_and_77(stopped_cloud: Path, tmp_path: Path) -> None:
    with read_only(stopped_cloud, tmp_path / "ro") as data_dir:
        one_line_error(tether("serve", "--data-dir", str(data_dir), "--port", "0"), ExitCode.READ_ONLY,
                       f"the data dir {data_dir} is read-only", "`tether check` reads it as it is")


@pytest.mark.parametrize(("url", "code", "words"), [
    ("postgresql://postgres@127.0.0.1:1/test", ExitCode.DATABASE_UNREACHABLE,
     ("cannot reach PostgreSQL at 127.0.0.1:1", "is it running")),
    ("postgresql://postgres@no-such-host.invalid:5432/test", ExitCode.DATABASE_UNREACHABLE,
     ("cannot reach PostgreSQL at no-such-host.invalid:5432",)),
], ids=["refused-connection", "unknown-host"])
def test_postgresql_out_of_reach_is_one_line_and_69(tmp_path: Path, url: str, code: ExitCode,
                                                    words: tuple[str, ...]) -> None:
    one_line_error(tether("serve", "--data-dir", str(tmp_path / "d"), "--port", "0", "--db", url), code, *words)
    assert not (tmp_path / "d").exists()


async def test_postgresql_refusing_is_one_line_and_76(tmp_path: Path) -> None:
    if not await pg_available():
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_URL}")
        pytest.skip(f"no PostgreSQL at {PG_URL}")
    url = PG_URL.rsplit("/", 1)[0] + "/no_such_database_here"
    one_line_error(tether("serve", "--data-dir", str(tmp_path / "d"), "--port", "0", "--db", url),
                   ExitCode.DATABASE_REFUSED, 'database "no_such_database_here" does not exist', "--db")


def test_serve_help_lists_every_exit_code() -> None:
    shown = tether("serve", "--help").stdout
    for code, meaning in SERVE_EXITS.items():
        assert re.search(rf"^\W*{int(code)}\s+{re.escape(meaning)}", shown, re.MULTILINE), (code, shown)


# -- check only reads ----------------------------------------------------------------------------


def test_check_on_a_read_only_copy_of_a_live_cloud_reports_what_the_live_one_does(tmp_path: Path) -> None:
    live = start(tmp_path / "live", "--reconcile-interval", "3600")  # no reconciler mends the planted VIF
    try:
        client = Client(live.base_url)
        client.wait_active(client.boot("1"))
        import asyncio

        vif = asyncio.run(plant_stale_vif(live.data_dir))
        reports = {kind: tether("check", "--data-dir", str(live.data_dir), *flags)
                   for kind, flags in (("text", ()), ("json", ("--json",)))}
        copy = tmp_path / "copy"
        shutil.copytree(live.data_dir, copy)  # as a backup is made: the server running, its -wal and -shm too
        with read_only(copy, tmp_path / "ro") as frozen:
            copied = {kind: tether("check", "--data-dir", str(frozen), *flags)
                      for kind, flags in (("text", ()), ("json", ("--json",)))}
        assert live.process.poll() is None
    finally:
        live.stop()
    for kind in ("text", "json"):
        assert reports[kind].returncode == copied[kind].returncode == ExitCode.VIOLATIONS, (reports, copied)
        assert copied[kind].stdout == reports[kind].stdout
        assert copied[kind].stderr == reports[kind].stderr == ""
    (violation,) = json.loads(reports["json"].stdout)["violations"]
    assert (violation["invariant"], violation["vif"]) == ("stale-vif", vif)


def test_check_writes_nothing_and_reports_an_upgrade_rather_than_making_it(stopped_cloud: Path,
                                                                         tmp_path: Path) -> None:
    before = snapshot(stopped_cloud)
    result = tether("check", "--data-dir", str(stopped_cloud))
    assert (result.returncode, result.stdout.strip()) == (0, "no violations"), result
    assert snapshot(stopped_cloud) == before  # no schema, no compacted journal, no -wal or -shm

    from .test_migrations import previous_release_data_dir

    old = previous_release_data_dir(tmp_path / "old")
    before = snapshot(old)
    one_line_error(tether("check", "--data-dir", str(old)), ExitCode.SCHEMA_TOO_OLD,
                   "older than this Tether", "`tether serve` upgrades it on its next start")
    assert snapshot(old) == before

    newer = _newer(tmp_path / "newer")
    one_line_error(tether("check", "--data-dir", str(newer)), ExitCode.SCHEMA_TOO_NEW, "upgrade Tether")
    corrupt = _corrupt(tmp_path / "corrupt")
    one_line_error(tether("check", "--data-dir", str(corrupt)), ExitCode.CORRUPT_DATABASE, "is not a SQLite database")
    assert sorted(path.name for path in corrupt.iterdir()) == ["tether.db"]


# -- ready means ready ----------------------------------------------------------------------------


def test_a_bare_metal_boot_sent_the_moment_the_banner_appears_goes_active(tmp_path: Path) -> None:
    data_dir = tmp_path / "cloud"
    # Cleaning takes 15 s here: the demo's new machines have nothing to wipe, and the banner waits for them.
    options = ("--clean-seconds", "15", "--deploy-seconds", "0.5")
    for start_kind in ("first start", "restart"):
        process, url = serve_process(data_dir, *options)
        try:
            client = Client(url)
            server = client.wait_active(client.boot("3"))
            assert server["status"] == "ACTIVE", (start_kind, server)
        finally:
            assert stop(process) == 0
