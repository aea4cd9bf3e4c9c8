"""Schema migrations: what each kind of database becomes when Tether opens it.

The previous release's data directory (``data/previous_release``) was written by the code
before migrations existed, so these tests open what real installations hold.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, create_engine, inspect, update
from sqlalchemy.schema import CreateTable

from tether.config import DataDir
from tether.exits import ExitCode
from tether.store import alembic_runner, name_search
from tether.store.database import Database
from tether.store.schema_revision import (
    BASELINE,
    HEAD,
    LEGACY_TABLE,
    SchemaChange,
    SchemaTooNew,
    SchemaUnrecognised,
)
from tether.store.tables import metadata
from tether.store.upgrade import version_table

from .live import free_port, start

PREVIOUS_RELEASE = Path(__file__).parent / "data" / "previous_release"
TETHER = Path(sys.executable).with_name("tether")
FUTURE = "9999_from_a_newer_tether"


def previous_release_data_dir(path: Path) -> Path:
    """A data directory as the release before migrations left it."""
    path.mkdir(parents=True)
    connection = sqlite3.connect(DataDir(path).database_file)
    connection.executescript((PREVIOUS_RELEASE / "tether.sql").read_text())
    connection.close()
    for state in ("hypervisor.jsonl", "hardware.jsonl"):
        shutil.copy(PREVIOUS_RELEASE / state, path / state)
    return path


async def on(database: Database, fn: Callable[[Connection], Any]) -> Any:
    """Run ``fn`` on the database's sync connection, in one committed transaction."""
    async with database.begin() as conn:
        return await conn.run_sync(fn)


def revisions(connection: Connection) -> tuple[str, ...]:
    return tuple(connection.scalars(version_table.select()))


def differences(connection: Connection) -> list[Any]:
    # The server names' substring index lives outside the metadata (FTS5 tables, a GIN index): see
    # test_name_search for it.
    def declared(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
        return not name_search.is_ours(name)

    return compare_metadata(MigrationContext.configure(connection, opts={"include_object": declared}), metadata)


def tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def test_head_is_the_newest_revision_and_the_baseline_the_first() -> None:
    assert alembic_runner.scripts().get_current_head() == HEAD
    assert alembic_runner.known_revisions()[0] == BASELINE
    assert alembic_runner.scripts().get_revision(BASELINE).down_revision is None


async def test_a_fresh_database_is_created_at_the_head_then_left_alone(empty_database: Database) -> None:
    assert await empty_database.create_schema() == SchemaChange("created", HEAD)
    assert await empty_database.create_schema() == SchemaChange("current", HEAD)
    assert str(SchemaChange("current", HEAD)) == f"the database schema is already current (revision {HEAD})"
    # Stamped without Alembic, yet what Alembic reads and would have written itself.
    assert await on(empty_database, lambda c: MigrationContext.configure(c).get_current_revision()) == HEAD

    def alembic_version_ddl(connection: Connection) -> tuple[str, str]:
        alembics = MigrationContext.configure(connection).impl.version_table_impl(
            version_table="alembic_version", version_table_schema=None, version_table_pk=True)
        return (str(CreateTable(alembics).compile(dialect=connection.dialect)),
                str(CreateTable(version_table).compile(dialect=connection.dialect)))

    theirs, ours = await on(empty_database, alembic_version_ddl)
    assert ours == theirs
    assert await on(empty_database, differences) == []


async def test_the_migrations_make_the_schema_the_code_declares(empty_database: Database) -> None:
    def migrate(connection: Connection) -> None:
        command.upgrade(alembic_runner.config(connection), "head")

    await on(empty_database, migrate)
    assert await on(empty_database, differences) == []
    assert await on(empty_database, revisions) == (HEAD,)
    assert await empty_database.create_schema() == SchemaChange("current", HEAD)


async def test_a_database_at_an_older_revision_is_upgraded(empty_database: Database) -> None:
    await on(empty_database, lambda c: command.upgrade(alembic_runner.config(c), BASELINE))
    assert LEGACY_TABLE in await on(empty_database, tables)

    change = await empty_database.create_schema()

    assert change == SchemaChange("upgraded", HEAD, BASELINE)
    assert str(change) == f"upgraded the database schema from {BASELINE} to {HEAD}"
    assert await on(empty_database, differences) == []
    assert LEGACY_TABLE not in await on(empty_database, tables)


async def test_a_failed_upgrade_leaves_the_database_as_it_was(empty_database: Database,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    await on(empty_database, lambda c: command.upgrade(alembic_runner.config(c), BASELINE))
    upgrade = command.upgrade

    def upgrade_then_fail(*args: Any, **kwargs: Any) -> None:
        upgrade(*args, **kwargs)
        raise RuntimeError("the disk filled up")

    monkeypatch.setattr(alembic_runner.command, "upgrade", upgrade_then_fail)
    with pytest.raises(RuntimeError, match="the disk filled up"):
        await empty_database.create_schema()

    # On SQLite too: the DDL ran inside the transaction, not statement by statement.
    assert await on(empty_database, revisions) == (BASELINE,)
    assert LEGACY_TABLE in await on(empty_database, tables)


async def test_a_database_from_a_newer_tether_is_refused(empty_database: Database) -> None:
    await empty_database.create_schema()
    await on(empty_database, lambda c: c.execute(update(version_table).values(version_num=FUTURE)))

    with pytest.raises(SchemaTooNew) as refused:
        await empty_database.create_schema()

    message = str(refused.value)
    assert "\n" not in message
    assert FUTURE in message and HEAD in message and "upgrade Tether" in message
    assert await on(empty_database, revisions) == (FUTURE,)  # untouched


def test_the_baseline_is_exactly_the_schema_the_previous_release_wrote(tmp_path: Path) -> None:
    previous = previous_release_data_dir(tmp_path / "previous")
    engine = create_engine(f"sqlite:///{tmp_path / 'baseline.db'}")
    with engine.begin() as connection:
        command.upgrade(alembic_runner.config(connection), BASELINE)
    engine.dispose()

    def schema(path: Path) -> list[tuple[str, ...]]:
        with sqlite3.connect(path) as connection:
            return connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                                      "WHERE tbl_name != 'alembic_version' ORDER BY name").fetchall()

    assert schema(tmp_path / "baseline.db") == schema(DataDir(previous).database_file)


async def test_tables_without_any_version_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tether.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE nodes (uuid VARCHAR(255) PRIMARY KEY)")
    database = Database(f"sqlite:///{path}")
    try:
        with pytest.raises(SchemaUnrecognised, match=r"holds some of Tether.s tables \(nodes\) but no record"):
            await database.create_schema()
    finally:
        await database.dispose()


async def test_a_legacy_version_no_release_wrote_is_refused(tmp_path: Path) -> None:
    directory = previous_release_data_dir(tmp_path / "d")
    with sqlite3.connect(DataDir(directory).database_file) as connection:
        connection.execute(f"UPDATE {LEGACY_TABLE} SET version = 7")
    database = Database(DataDir(directory).database_url)
    try:
        with pytest.raises(SchemaUnrecognised, match="says schema version 7, which no Tether release wrote"):
            await database.create_schema()
    finally:
        await database.dispose()


def test_the_previous_release_data_dir_is_upgraded_by_tether_serve_and_keeps_its_cloud(tmp_path: Path) -> None:
    directory = previous_release_data_dir(tmp_path / "data")
    cloud = start(directory)
    try:
        log = cloud.log.read_text()
        assert f"Tether upgraded the database schema from {BASELINE} to {HEAD}" in log, log
        assert "seeded a new demo cloud" not in log
        sdk = cloud.connect("tether")
        try:
            servers = {server.name: server.status for server in sdk.compute.servers()}
            images = {image.name for image in sdk.image.images()}
            nodes = {node.name: node.provision_state for node in sdk.baremetal.nodes()}
            flavors = {flavor.name for flavor in sdk.compute.flavors()}
        finally:
            sdk.close()
    finally:
        cloud.stop()
    assert servers == {"vm-1": "ACTIVE"}
    assert images == {"cirros"}
    assert nodes == {f"node-{n}": "available" for n in range(1, 5)}
    assert flavors == {"m1.tiny", "m1.small", "baremetal"}
    with sqlite3.connect(DataDir(directory).database_file) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        assert not connection.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (LEGACY_TABLE,)).fetchall()


async def test_tether_serve_and_check_refuse_a_newer_database_in_one_line(tmp_path: Path) -> None:
    directory = DataDir(tmp_path / "data").ensure()
    database = Database(directory.database_url)
    await database.create_schema()
    await on(database, lambda c: c.execute(update(version_table).values(version_num=FUTURE)))
    await database.dispose()
    env = {**os.environ, "NO_COLOR": "1"}

    for args in (["serve", "--port", str(free_port())], ["check"]):
        result = subprocess.run([str(TETHER), *args, "--data-dir", str(directory.path)], capture_output=True,
                                text=True, timeout=120, env=env)
        assert result.returncode == ExitCode.SCHEMA_TOO_NEW, (args, result.returncode, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr + result.stdout, result.stderr
        assert "Tether http" not in result.stdout  # never served
        [line] = result.stderr.splitlines()
        assert line.startswith("error: the database is at schema revision " + FUTURE), line
        assert HEAD in line and "upgrade Tether" in line, line


def test_opening_a_new_or_current_database_does_not_import_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tether.db'}"
    script = f"""
import asyncio, sys
from tether.store.database import Database

async def main():
    for url in ("sqlite:///:memory:", {url!r}, {url!r}):
        database = Database(url)
        print((await database.create_schema()).action)
        await database.dispose()

asyncio.run(main())
print(sorted(name for name in sys.modules if name.split(".")[0] in ("alembic", "mako")))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["created", "created", "current", "[]"]
