"""Opening a cloud that lives in a data directory (what `check` reads; `serve` keeps it there)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from tether.audit.local import collect
from tether.cloud import Cloud, World
from tether.config import DataDir
from tether.domain.invariants import Violation, check_all
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.runtime.runtime import Runtime
from tether.store.database import Database


class NoLocalCloud(LookupError):
    """The data directory holds no cloud: nothing was ever served from it."""


def open_world(data_dir: Path, db_url: str | None = None, **hardware_options: float) -> World:
    directory = DataDir(data_dir).ensure()
    database = Database(db_url or directory.database_url)
    # The hardware keeps its state in the data directory too, as `tether serve` has it.
    hardware = FakeHardware(path=directory.hardware_state, **hardware_options)
    return World(database, FakeHypervisor(directory.hypervisor_state), hardware)


async def check_local_cloud(data_dir: Path, db_url: str | None = None) -> list[Violation]:
    database_file = make_url(DataDir(data_dir).database_url).database
    if db_url is None and not (database_file and Path(database_file).is_file()):
        # A check reads; it must not create an empty cloud and then call it healthy.
        raise NoLocalCloud(f"no Tether cloud in {data_dir}: it has no database; `tether serve --data-dir "
                           f"{data_dir}` makes one")
    world = open_world(data_dir, db_url)
    try:
        await world.database.create_schema()
        cloud = Cloud(world, Runtime())
        return check_all(await collect(cloud))
    finally:
        await world.database.dispose()
