"""Shared fixtures: every store-backed test runs on SQLite and on a real PostgreSQL.

PostgreSQL is found at ``TETHER_TEST_PG_URL`` (default: the local server's
``test`` database). Without a server those runs are skipped, unless
``TETHER_REQUIRE_PG=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest

from tether.store.database import Database

PG_URL = os.environ.get("TETHER_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRE_PG = os.environ.get("TETHER_REQUIRE_PG") == "1"

_pg_reachable: bool | None = None


async def _probe_pg() -> bool:
    import asyncpg

    try:
        conn = await asyncpg.connect(PG_URL.replace("postgresql://", "postgres://"), timeout=3)
    except (OSError, asyncpg.PostgresError):
        return False
    await conn.close()
    return True


async def pg_available() -> bool:
    global _pg_reachable
    if _pg_reachable is None:
        _pg_reachable = await _probe_pg()
    return _pg_reachable


@pytest.fixture(params=["sqlite", "postgresql"])
async def empty_database(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[Database]:
    """A fresh database without a single table."""
    if request.param == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'tether.db'}")
        yield db
        await db.dispose()
        return
    if not await pg_available():
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required but not reachable at {PG_URL}")
        pytest.skip(f"no PostgreSQL at {PG_URL}")
    import asyncpg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = await asyncpg.connect(PG_URL.replace("postgresql://", "postgres://"))
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    db = Database(PG_URL, schema=schema, pool_size=4)
    try:
        yield db
    finally:
        await db.dispose()
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()


@pytest.fixture
async def database(empty_database: Database) -> Database:
    """A fresh, empty database with Tether's schema."""
    await empty_database.create_schema()
    return empty_database


@pytest.fixture(scope="session")
def live_cloud(tmp_path_factory: pytest.TempPathFactory):
    """One `tether serve` for the session (SQLite); tests name their resources uniquely."""
    from tests.live import start

    cloud = start(tmp_path_factory.mktemp("live"))
    cloud.lift_compute_quotas()
    yield cloud
    cloud.stop()


@pytest.fixture(scope="session")
def sdk(live_cloud):
    """openstacksdk, as the admin of the live cloud."""
    connection = live_cloud.connect("tether")
    yield connection
    connection.close()


# With ``--dist loadgroup`` (pyproject's addopts) a test shares a worker with the rest of its module only
# when it must: when it uses a fixture made once per module or class (a live ``tether serve``, a seeded
# cloud). Every other test is handed out on its own, so one file of long independent tests (a crash at
# every checkpoint of every scenario, on two backends) is spread over the workers instead of queuing on one.
_SHARED_SCOPES = frozenset({"module", "class", "package"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(definitions and definitions[-1].scope in _SHARED_SCOPES
               for definitions in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
