"""Opening a cloud that lives in a data directory: what `check` reads, as `serve` keeps it there.

A check only reads, so it can run beside the server that owns the data dir, on a read-only copy,
or on a backup: the database is opened read-only (SQLite's ``mode=ro``, PostgreSQL's read-only
transactions), the hardware's journals are read and not compacted, and nothing is created, not
even the schema. A database that needs an upgrade is reported, not upgraded.
"""

from __future__ import annotations

from pathlib import Path

from tether.audit.local import collect
from tether.cloud import Cloud, World
from tether.config import DataDir
from tether.domain.invariants import Snapshot, Violation, check_all
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.drivers.image_files import ImageFiles
from tether.exits import ExitCode, Failure
from tether.failures import Opening, explain
from tether.runtime.runtime import Runtime
from tether.store.database import Database


class NoLocalCloud(Failure):
    """The data directory holds no cloud: nothing was ever served from it."""

    def __init__(self, message: str) -> None:
        super().__init__(ExitCode.NOT_TETHERS, message)


def open_world(data_dir: Path, db_url: str | None = None, *, read_only: bool = False, reader: str = "tether check",
               **hardware_options: float) -> World:
    """The store and the hardware a data dir holds; ``read_only`` opens them so that nothing is written."""
    directory = DataDir(data_dir) if read_only else DataDir(data_dir).ensure()
    database = Database(db_url or directory.database_url, read_only=read_only,
                        application_name=reader if read_only else None)
    # The hardware keeps its state in the data directory too, as `tether serve` has it.
    hardware = FakeHardware(path=directory.hardware_state, read_only=read_only, **hardware_options)
    return World(database, FakeHypervisor(directory.hypervisor_state, read_only=read_only), hardware,
                 ImageFiles(directory.images))


async def check_local_cloud(data_dir: Path, db_url: str | None = None) -> list[Violation]:
    """Every invariant violation in the cloud ``data_dir`` holds; raises ``Failure`` when it cannot be read."""
    return check_all(await read_local_cloud(data_dir, db_url))


async def read_local_cloud(data_dir: Path, db_url: str | None = None, *, reader: str = "tether check") -> Snapshot:
    """A snapshot of the cloud ``data_dir`` holds, read only; raises ``Failure`` when it cannot be read."""
    directory = DataDir(data_dir)
    opening = Opening(reader, directory.path, db_url or directory.database_url)
    if db_url is None:
        no_cloud = NoLocalCloud(f"no Tether cloud in {data_dir}: it has no database; `tether serve --data-dir "
                                f"{data_dir}` makes one")
    else:
        no_cloud = NoLocalCloud(f"no Tether cloud in {opening.database}: the database is empty or missing; "
                                f"`tether serve --db URL` makes one")
    # A reader must not create an empty cloud and then call it healthy.
    if opening.is_sqlite and not Path(opening.database).is_file():
        raise no_cloud
    try:
        world = open_world(directory.path, db_url, read_only=True, reader=reader)
    except Exception as error:
        raise explain(error, opening) from error
    try:
        if await world.database.read_schema() == "empty":
            raise no_cloud
        return await collect(Cloud(world, Runtime()))
    except Failure:
        raise
    except Exception as error:
        raise explain(error, opening) from error
    finally:
        await world.database.dispose()
