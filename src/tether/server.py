"""`tether serve`: a whole cloud in one process, on SQLite by default.

A start goes in an order that makes every failure cheap: it listens first (a port in use leaves
nothing behind), then owns the data dir and the database (a second server is refused before it
reads or writes anything), then opens the store (creating, upgrading or refusing its schema),
then seeds a demo cloud on a first start or recovers whatever the last process left unfinished
(design rule 5), and answers its first request only once a bare-metal boot would find a node.
Each failure is a ``Failure``: a line saying what to do, and an exit code of its own.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.config import DEFAULT_DATA_DIR, DataDir
from tether.domain.identity import DEFAULT_CREDENTIAL_CACHE_SECONDS, DEFAULT_TOKEN_TTL, Lockout
from tether.exits import ExitCode, Failure
from tether.exposure import DEFAULT_PASSWORDS, is_loopback, refuse_defaults, seed_passwords, strong_password
from tether.listening import listen, port_of
from tether.logs import LogSettings, configure
from tether.ownership import Owned
from tether.tls import TlsFiles

# The rest of Tether (the services, the store, the API: most of a start's CPU) is imported once
# this process owns its data dir, so a refused start ends before it pays for them.
if TYPE_CHECKING:
    from tether.cloud import Cloud
    from tether.failures import Opening
    from tether.runtime.errors import ControlPlaneCrash
    from tether.store.database import Database
    from tether.store.schema_revision import SchemaChange

log = logging.getLogger("tether.serve")
SERVER_NAME = "tether serve"  # how its PostgreSQL sessions are named, with the PID and host
CRASH_EXIT = int(ExitCode.INTERNAL)
# How long the first answer waits for the nodes' cleans that can finish now; past it, serve anyway.
SETTLE_SECONDS = 30.0


WILDCARDS = ("0.0.0.0", "::", "")


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
    # None: the default password on a new cloud, the user's own on one that exists
    admin_password: str | None = None
    demo_password: str | None = None
    generate_passwords: bool = False
    insecure_default_passwords: bool = False
    tls: TlsFiles | None = None
    token_ttl: float = DEFAULT_TOKEN_TTL
    credential_cache_seconds: float = DEFAULT_CREDENTIAL_CACHE_SECONDS
    lockout: Lockout = field(default_factory=Lockout)
    log: LogSettings = field(default_factory=LogSettings)

    @property
    def base_url(self) -> str:
        host = self.host
        if self.tls and host in WILDCARDS:
            # Bound to every address: clients must use a name the certificate is for.
            host = self.tls.host_name() or host
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    @property
    def exposed(self) -> bool:
        """Reachable from other machines: the seeded passwords must not be the defaults."""
        return not is_loopback(self.host)

    def given_passwords(self) -> dict[str, str | None]:
        return {"admin": self.admin_password, "demo": self.demo_password}

    @property
    def database_url(self) -> str:
        return self.db or DataDir(self.data_dir).database_url

    @property
    def opening(self) -> Opening:
        from tether.failures import Opening

        return Opening("tether serve", self.data_dir, self.database_url)


def _crash(crash: ControlPlaneCrash) -> None:
    # A crash fault is a kill -9: nothing of this process may run on.
    sys.stderr.write(f"tether: {crash}; exiting at once\n")
    sys.stderr.flush()
    os._exit(CRASH_EXIT)


async def own(options: ServeOptions, owned: Owned) -> Database:
    """Own the database and the data dir (making it on a first start); the database, not yet opened.

    The database is owned first, the data dir then: a refusal by either leaves everything as it was
    (a data dir is made only by the process that goes on to own it). A database file that does not
    exist yet is nobody's, so it is made and owned once the data dir is.
    """
    directory = DataDir(options.data_dir)
    database_file = _sqlite_file(options.database_url)
    own_database = None if options.db else directory.path
    if database_file is not None and database_file.exists():
        owned.database_file(database_file, in_data_dir=own_database)
    from tether.store.database import Database

    database = Database(options.database_url,
                        application_name=f"{SERVER_NAME} (PID {os.getpid()} on {socket.gethostname()})")
    try:
        if not database.is_sqlite:
            holder = await database.hold_exclusively()
            if holder is not None:
                who = holder.removeprefix(SERVER_NAME).strip(" ()")
                raise Failure(ExitCode.IN_USE,
                              f"the database {options.opening.database} is in use by another tether serve "
                              f"({who}); stop that one first, or give this one another --db")
        owned.data_dir(directory.path)
        _refuse_a_cloud_without_its_database(directory, options)
        if database_file is not None and not owned.holds(database_file):
            owned.database_file(database_file, in_data_dir=own_database)
    except BaseException:
        await database.dispose()
        raise
    return database


async def open_cloud(options: ServeOptions, database: Database) -> tuple[Cloud, bool, SchemaChange]:
    """The cloud in the owned data dir and database; True when this start seeded it; what the start
    did to its schema."""
    from tether.cloud import Cloud, World
    from tether.domain.errors import identity as ie
    from tether.drivers.hardware import FakeHardware
    from tether.drivers.hypervisor import FakeHypervisor
    from tether.drivers.image_files import ImageFiles
    from tether.runtime.bugs import Bugs
    from tether.runtime.faults import FaultPlan
    from tether.runtime.runtime import Runtime
    from tether.seeding import DemoShape, seed_demo_cloud

    directory = DataDir(options.data_dir)
    schema = await database.create_schema()
    world = World(database, FakeHypervisor(directory.hypervisor_state),
                  FakeHardware(deploy_seconds=options.deploy_seconds, clean_seconds=options.clean_seconds,
                               path=directory.hardware_state, new_machines_clean=True),
                  ImageFiles(directory.images))
    runtime = Runtime(faults=FaultPlan.parse(options.faults), bugs=Bugs(options.bugs), on_crash=_crash)
    cloud = Cloud(world, runtime, token_ttl=options.token_ttl, lockout=options.lockout,
                  credential_cache_seconds=options.credential_cache_seconds)
    try:
        await cloud.identity.find_project("admin")
        seeded = False
    except ie.NotFound:
        passwords = new_cloud_passwords(options)
        await seed_demo_cloud(cloud, DemoShape(admin_password=passwords["admin"],
                                               demo_password=passwords["demo"]))
        seeded = True
    if not seeded:
        passwords = await existing_cloud_passwords(options, cloud)
        await cloud.recover()
    options.admin_password, options.demo_password = passwords["admin"], passwords["demo"]
    await cloud.identity.register_own_endpoints(options.base_url)
    return cloud, seeded, schema


def new_cloud_passwords(options: ServeOptions) -> dict[str, str]:
    return seed_passwords(options.given_passwords(), options.host, generate=options.generate_passwords,
                          insecure=options.insecure_default_passwords)


async def existing_cloud_passwords(options: ServeOptions, cloud: Cloud) -> dict[str, str | None]:
    """Set the passwords given (or generated, for a user still on the default) as keystone-manage
    bootstrap does; the ones this start knows (None: the user's own, not known here).

    Beyond loopback a user left with the default password is refused, before anything is changed."""
    chosen = options.given_passwords()
    # Only a start that generates or may refuse needs to know who kept a default: each check is an
    # argon2 hash, which every restart on loopback would otherwise pay.
    asks = options.generate_passwords or (options.exposed and not options.insecure_default_passwords)
    kept_default = [user for user, given in chosen.items() if asks and (
                    (given or "") == DEFAULT_PASSWORDS[user]
                    or (given is None and await cloud.identity.has_password(user, DEFAULT_PASSWORDS[user])))]
    if options.generate_passwords:
        chosen |= {user: strong_password() for user in kept_default if chosen[user] is None}
        kept_default = [user for user in kept_default if chosen[user] == DEFAULT_PASSWORDS[user]]
    if kept_default and options.exposed and not options.insecure_default_passwords:
        raise refuse_defaults(options.host, kept_default)
    if any(chosen.values()):
        await cloud.identity.bootstrap(admin_password=chosen["admin"], demo_password=chosen["demo"])
    return chosen


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (sqlite:///path, as --db takes it), or None."""
    scheme, _, rest = url.partition(":///")
    if scheme.split("+")[0] != "sqlite" or rest.split("?")[0] in ("", ":memory:"):
        return None
    return Path(rest.split("?")[0])


def _refuse_a_cloud_without_its_database(directory: DataDir, options: ServeOptions) -> None:
    """A data dir whose machines outlived its database would be seeded anew beside them: refuse it."""
    if options.db is not None or (directory.database_file.exists() and directory.database_file.stat().st_size):
        return
    kept = [path.name for path in (directory.hardware_state, directory.hypervisor_state)
            if path.exists() and path.stat().st_size]
    if kept:
        raise Failure(ExitCode.NOT_TETHERS,
                      f"{directory.path} holds a cloud's machines ({', '.join(kept)}) but not its database "
                      f"({directory.database_file.name}); restore that from a backup, or move the directory away "
                      f"to start a new cloud")


CLOUD_NAMES = {"admin": "tether", "demo": "tether-demo"}


def write_clouds_yaml(options: ServeOptions) -> Path:
    """clouds.yaml for the seeded users: a password this start does not know is kept from the last one."""
    import yaml

    directory = DataDir(options.data_dir)
    path = directory.clouds_yaml
    try:
        before = yaml.safe_load(path.read_text())["clouds"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        before = {}

    def entry(user: str, password: str | None) -> dict[str, object]:
        if password is None:  # the user's own: the last clouds.yaml knows it, else the default is the guess
            password = str(before.get(CLOUD_NAMES[user], {}).get("auth", {}).get("password", DEFAULT_PASSWORDS[user]))
        cloud: dict[str, object] = {
            "auth": {"auth_url": f"{options.base_url}/identity", "username": user, "password": password,
                     "project_name": user, "user_domain_name": "Default", "project_domain_name": "Default"},
            "region_name": "RegionOne", "interface": "public", "identity_api_version": 3}
        if options.tls and not options.tls.publicly_trusted():
            cloud["cacert"] = str(options.tls.cert.resolve())
        return cloud

    body = {"clouds": {name: entry(user, options.given_passwords()[user]) for user, name in CLOUD_NAMES.items()}}
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    path.chmod(0o600)
    return path


async def serve(options: ServeOptions) -> None:
    """Start (raising ``Failure`` when it cannot, having changed as little as it could), then serve."""
    if options.tls:
        options.tls.check()
    sockets = listen(options.host, options.port)
    options.port = port_of(sockets)  # --port 0: the one the kernel chose
    owned = Owned()
    try:
        try:
            database = await own(options, owned)
        except Failure:
            raise
        except Exception as error:
            raise _explained(error, options) from error
        try:
            cloud, seeded, schema = await open_cloud(options, database)
        except BaseException as error:
            await database.dispose()
            if isinstance(error, Exception) and not isinstance(error, Failure):
                raise _explained(error, options) from error
            raise
        try:
            await _serve(options, sockets, cloud, seeded, schema)
        finally:
            await cloud.rt.cancel_background()
            await cloud.world.database.dispose()
    finally:
        for sock in sockets:
            sock.close()
        owned.release()


def _explained(error: Exception, options: ServeOptions) -> Failure:
    from tether.failures import explain

    return explain(error, options.opening)


async def _serve(options: ServeOptions, sockets: list[socket.socket], cloud: Cloud, seeded: bool,
                 schema: SchemaChange) -> None:
    import uvicorn

    from tether.api.app import create_app
    from tether.readiness import settle_nodes
    from tether.reconcile.runner import ReconcileLoop

    if schema.upgraded:
        print(f"Tether {schema}", flush=True)
    try:
        unsettled = await settle_nodes(cloud, SETTLE_SECONDS)
        app = create_app(cloud, options.base_url)
        clouds_yaml = write_clouds_yaml(options)
    except Exception as error:
        raise _explained(error, options) from error
    if unsettled:
        names = ", ".join(node.name or node.uuid for node in unsettled)
        print(f"Tether: after {SETTLE_SECONDS:.0f} s, nodes {names} are still cleaning; serving anyway",
              file=sys.stderr, flush=True)
    # uvicorn's loggers are left to the configuration made for tether's own (``logs.configure``).
    tls = options.tls
    # Keep-alive longer than the clients' polling: heatclient's --wait polls every 5 s, uvicorn's own
    # default, and a poll that reuses the connection the server is closing is reset. No `Server:`
    # header: upstream's APIs do not name what serves them, and it only helps someone probing.
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", timeout_keep_alive=75,
                            server_header=False,
                            ssl_certfile=tls.cert if tls else None, ssl_keyfile=tls.key if tls else None)
    server = uvicorn.Server(config)
    # What start-up made (modules, routes, models: most of the heap) lives as long as the process. Left
    # in the collector's oldest generation, every full collection walks it: 100 ms stalls in the middle
    # of requests at random (a page's p99 was 90 ms on a p50 of 10). Frozen, a collection walks only
    # what serving made.
    gc.collect()
    gc.freeze()
    reconcilers = ReconcileLoop(cloud, resync_interval=options.reconcile_interval)
    cloud.rt.spawn(reconcilers.work(), name="reconcilers", daemon=True)
    cloud.rt.spawn(reconcilers.resync(), name="reconcilers.resync", daemon=True)

    started = server.startup

    async def announce(sockets: list[socket.socket] | None = None) -> None:
        await started(sockets)
        state = "seeded a new demo cloud" if seeded else "recovered the existing cloud"
        print(f"Tether {options.base_url} ({state} in {options.data_dir})\n"
              f"  export OS_CLIENT_CONFIG_FILE={clouds_yaml}\n"
              f"  openstack --os-cloud tether server list", flush=True)
        _warn_unusual(cloud, options)

    server.startup = announce  # type: ignore[method-assign]
    await server.serve(sockets=sockets)


def _warn_unusual(cloud: Cloud, options: ServeOptions) -> None:
    """Say loudly what makes this cloud misbehave on purpose, or lets anyone in: a user must know why."""
    colour = sys.stdout.isatty()
    texts = [("1;33", f"emulating upstream bug {bug}: {bug.description}") for bug in sorted(cloud.rt.bugs.names)]
    texts += [("1;33", f"fault rule {rule}") for rule in cloud.rt.faults.rules]
    if options.insecure_default_passwords and options.exposed:
        texts.append(("1;31", f"listening on {options.host} with --insecure-default-passwords: anyone who "
                              f"reaches the port may log in as admin"))
    for colour_code, text in texts:
        print(f"\033[{colour_code}m  WARNING {text}\033[0m" if colour else f"  WARNING {text}", flush=True)
        log.warning(text)


def _event_loop() -> asyncio.AbstractEventLoop:
    # uvloop's transports write in C: each response costs the server about half the CPU
    # that asyncio's selector loop spends on it. uvicorn picks it the same way.
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class Terminated(SystemExit):
    """SIGTERM: stop as Ctrl-C stops, the database closed and the locks let go. A SystemExit, which
    asyncio (and uvloop) let out of whatever task it interrupts, as they do KeyboardInterrupt."""


def _terminated(_signal: int, _frame: object) -> None:
    raise Terminated


def run(options: ServeOptions) -> None:
    """Serve until Ctrl-C or SIGTERM; raises ``Failure`` when the cloud cannot start."""
    try:
        configure(options.log)
    except OSError as error:
        raise Failure(ExitCode.USAGE, f"cannot write the log file {options.log.file}: {error.strerror}; "
                                      f"give --log-file a file in a directory that exists and is writable") from error
    # uvicorn handles SIGTERM while it serves, then raises it again once it has stopped: by default
    # that would kill the process before the database is closed (its WAL left to the next start).
    signal.signal(signal.SIGTERM, _terminated)
    loop = _event_loop()
    try:
        loop.run_until_complete(serve(options))
    except (KeyboardInterrupt, Terminated):
        pass
    finally:
        loop.close()


__all__ = ["ServeOptions", "open_cloud", "own", "run", "serve"]
