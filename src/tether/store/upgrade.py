"""Bringing a database to the schema this Tether writes: create it, upgrade it, or refuse it.

Alembic keeps the schema's history (``migrations/``) and, in ``alembic_version``, the revision
each database is at. Importing Alembic costs ~150 ms, and most opens need none of it: an empty
database is created from ``tables.metadata`` and stamped at the head (Alembic's own recipe for a
new database; the scenarios and the explorer make hundreds of them), and a database already at
the head is left as it is. Only a database at another revision, or one written before
migrations, loads Alembic (``alembic_runner``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Column, Connection, MetaData, PrimaryKeyConstraint, String, Table, column, inspect, select, table

from tether.store.tables import metadata

# The newest revision in migrations/versions, known here without asking Alembic so that a current
# database opens at once; test_migrations checks that it is the script directory's head.
HEAD = "0002_drop_tether_schema"
# What a database written before migrations holds, recognised by its own version table.
BASELINE = "0001_baseline"
LEGACY_TABLE = "tether_schema"
LEGACY_VERSION = 1
legacy_version_table = table(LEGACY_TABLE, column("version"))

# Alembic's version table as Alembic makes it (``DefaultImpl.version_table_impl``), so a new
# database is stamped without importing Alembic; test_migrations checks the two agree.
version_table = Table(
    "alembic_version", MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)


@dataclass(frozen=True)
class SchemaChange:
    """What opening a database did to its schema."""

    action: Literal["created", "upgraded", "current"]
    revision: str
    previous: str | None = None

    @property
    def upgraded(self) -> bool:
        return self.action == "upgraded"

    def __str__(self) -> str:
        if self.action == "created":
            return f"created the database schema at revision {self.revision}"
        if self.action == "upgraded":
            return f"upgraded the database schema from {self.previous} to {self.revision}"
        return f"the database schema is already current (revision {self.revision})"


class SchemaError(Exception):
    """A database this Tether will not open; the message says why and what to do, in one line."""


class SchemaTooNew(SchemaError):
    """The database was upgraded by a newer Tether: this one cannot know what its schema holds."""

    def __init__(self, revisions: tuple[str, ...], head: str) -> None:
        from tether import __version__

        self.revisions = revisions
        self.head = head
        super().__init__(
            f"the database is at schema revision {', '.join(revisions)}, which this Tether {__version__} does not "
            f"know (its newest is {head}); upgrade Tether to open it")


class SchemaUnrecognised(SchemaError):
    """The database holds tables but no version Tether can place them at."""


def upgrade_schema(connection: Connection) -> SchemaChange:
    """Bring the database on ``connection`` to ``HEAD``, inside the caller's transaction."""
    tables = set(inspect(connection).get_table_names())
    revisions: tuple[str, ...] = ()
    if version_table.name in tables:
        revisions = tuple(connection.scalars(select(version_table.c.version_num)))
        if revisions == (HEAD,):
            return SchemaChange("current", HEAD)
    if revisions:
        return _with_alembic(connection, revisions)
    # An empty version table is Alembic's "nothing applied yet": the tables decide, as with none.
    ours = tables & (set(metadata.tables) | {LEGACY_TABLE})
    if not ours:
        begin_ddl(connection)
        # Every table is known to be absent: no need to ask about each one first.
        metadata.create_all(connection, checkfirst=False)
        version_table.create(connection, checkfirst=True)
        connection.execute(version_table.insert().values(version_num=HEAD))
        return SchemaChange("created", HEAD)
    if LEGACY_TABLE in tables:
        versions = list(connection.scalars(select(legacy_version_table.c.version)))
        # No row: a first start stopped after making the tables (this one last) and before writing
        # the version, which that release wrote on its next start. Stamping writes it here.
        if versions in ([], [LEGACY_VERSION]):
            return _with_alembic(connection, None)
        raise SchemaUnrecognised(
            f"the database's {LEGACY_TABLE} table says schema version {', '.join(map(str, versions))}, which no "
            f"Tether release wrote (the last one before migrations wrote {LEGACY_VERSION}); open it with the "
            f"Tether that made it")
    raise SchemaUnrecognised(
        f"the database holds some of Tether's tables ({', '.join(sorted(ours))}) but no record of their schema "
        f"version (no alembic_version or {LEGACY_TABLE} table); it was not made by Tether, so start from an "
        f"empty database or restore it from a backup")


def _with_alembic(connection: Connection, revisions: tuple[str, ...] | None) -> SchemaChange:
    from tether.store import alembic_runner

    begin_ddl(connection)
    return alembic_runner.upgrade(connection, revisions)


def begin_ddl(connection: Connection) -> None:
    """Make the schema changes that follow commit or roll back as one, on SQLite too.

    Python's sqlite3 opens a transaction before a DML statement only, so each CREATE or ALTER
    would commit on its own, and a failure midway would leave a schema no revision describes.
    SQLite itself can roll DDL back once a transaction is open; PostgreSQL's is open already.
    """
    if connection.dialect.name == "sqlite" and not connection.connection.driver_connection.in_transaction:
        connection.exec_driver_sql("BEGIN")
