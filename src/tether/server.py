"""`tether serve`: a whole cloud in one process, on SQLite by default.

First start creates the data directory, seeds a demo cloud and writes
clouds.yaml; later starts recover whatever the last process left
unfinished (design rule 5) and carry on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tether.api.app import create_app
from tether.cloud import Cloud, World
from tether.config import DEFAULT_DATA_DIR, DataDir
from tether.domain.errors import identity as ie
from tether.drivers.hardware import FakeHardware
from tether.drivers.hypervisor import FakeHypervisor
from tether.reconcile.runner import ReconcileLoop
from tether.runtime.bugs import Bugs
from tether.runtime.errors import ControlPlaneCrash
from tether.runtime.faults import FaultPlan
from tether.runtime.runtime import Runtime
from tether.seeding import DemoShape, seed_demo_cloud
from tether.store.database import Database
from tether.store.schema_revision import SchemaChange

log = logging.getLogger("tether.serve")
CRASH_EXIT = 70


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 6080
    data_dir: Path = DEFAULT_DATA_DIR
    db: str | None = None
    faults: list[str] = field(default_factory=list)
    bugs: list[str] = field(default_factory=list)
    deploy_seconds: float = 5.0
    clean_seconds: float = 2.0
    reconcile_interval: float = 10.0
    admin_password: str = "admin"
    demo_password: str = "demo"

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def _crash(crash: ControlPlaneCrash) -> None:
    # A crash fault is a kill -9: nothing of this process may run on.
    sys.stderr.write(f"tether: {crash}; exiting at once\n")
    sys.stderr.flush()
    os._exit(CRASH_EXIT)


async def open_cloud(options: ServeOptions) -> tuple[Cloud, bool, SchemaChange]:
    """The cloud in the data directory; True when this start seeded it; what the start did to its schema."""
    directory = DataDir(options.data_dir).ensure()
    database = Database(options.db or directory.database_url)
    schema = await database.create_schema()
    world = World(database, FakeHypervisor(directory.hypervisor_state),
                  FakeHardware(deploy_seconds=options.deploy_seconds, clean_seconds=options.clean_seconds,
                               path=directory.hardware_state))
    runtime = Runtime(faults=FaultPlan.parse(options.faults), bugs=Bugs(options.bugs), on_crash=_crash)
    cloud = Cloud(world, runtime)
    try:
        await cloud.identity.find_project("admin")
        seeded = False
    except ie.NotFound:
        await seed_demo_cloud(cloud, DemoShape(admin_password=options.admin_password,
                                               demo_password=options.demo_password))
        seeded = True
    if not seeded:
        await cloud.recover()
    return cloud, seeded, schema


def write_clouds_yaml(options: ServeOptions) -> Path:
    directory = DataDir(options.data_dir)

    def entry(user: str, password: str) -> dict[str, object]:
        return {"auth": {"auth_url": f"{options.base_url}/identity", "username": user, "password": password,
                         "project_name": user, "user_domain_name": "Default", "project_domain_name": "Default"},
                "region_name": "RegionOne", "interface": "public", "identity_api_version": 3}

    body = {"clouds": {"tether": entry("admin", options.admin_password),
                       "tether-demo": entry("demo", options.demo_password)}}
    path = directory.clouds_yaml
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    path.chmod(0o600)
    return path


async def serve(options: ServeOptions) -> None:
    import uvicorn

    cloud, seeded, schema = await open_cloud(options)
    if schema.upgraded:
        print(f"Tether {schema}", flush=True)
    app = create_app(cloud, options.base_url)
    clouds_yaml = write_clouds_yaml(options)
    config = uvicorn.Config(app, host=options.host, port=options.port, log_level="warning", access_log=False,
                            lifespan="off")
    server = uvicorn.Server(config)
    reconcilers = ReconcileLoop(cloud, resync_interval=options.reconcile_interval)
    cloud.rt.spawn(reconcilers.work(), name="reconcilers", daemon=True)
    cloud.rt.spawn(reconcilers.resync(), name="reconcilers.resync", daemon=True)

    started = server.startup
    async def announce(sockets: object = None) -> None:
        await started(sockets)  # type: ignore[arg-type]
        state = "seeded a new demo cloud" if seeded else "recovered the existing cloud"
        print(f"Tether {options.base_url} ({state} in {options.data_dir})\n"
              f"  export OS_CLIENT_CONFIG_FILE={clouds_yaml}\n"
              f"  openstack --os-cloud tether server list", flush=True)

    server.startup = announce  # type: ignore[method-assign]
    try:
        await server.serve()
    finally:
        await cloud.rt.cancel_background()
        await cloud.world.database.dispose()


def _event_loop() -> asyncio.AbstractEventLoop:
    # uvloop's transports write in C: each response costs the server about half the CPU
    # that asyncio's selector loop spends on it. uvicorn picks it the same way.
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(options: ServeOptions) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    loop = _event_loop()
    try:
        loop.run_until_complete(serve(options))
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()


__all__ = ["ServeOptions", "open_cloud", "run", "serve"]
