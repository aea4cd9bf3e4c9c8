"""Opening a cloud that lives in a data directory (what `serve` runs and `check` reads)."""

from __future__ import annotations

from pathlib import Path

from tether.audit.local import collect
from tether.config import DataDir
from tether.domain.invariants import Violation, check_all
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.services.cloud import Cloud, World
from tether.sim.runtime import Runtime
from tether.store.database import Database


def open_world(data_dir: Path, db_url: str | None = None, **hardware_options: float) -> World:
    directory = DataDir(data_dir).ensure()
    database = Database(db_url or directory.database_url)
    return World(database, FakeHypervisor(directory.hypervisor_state), FakeHardware(**hardware_options))


async def check_local_cloud(data_dir: Path, db_url: str | None = None) -> list[Violation]:
    world = open_world(data_dir, db_url)
    try:
        await world.database.create_schema()
        cloud = Cloud(world, Runtime())
        return check_all(await collect(cloud))
    finally:
        await world.database.dispose()
