"""Bringing a database to the schema this Tether writes: create it, upgrade it, or refuse it.

Alembic keeps the schema's history (``migrations/``) and, in ``alembic_version``, the revision
each database is at. Importing Alembic costs ~150 ms, and most opens need none of it: an empty
database is created from ``tables.metadata`` and stamped at the head (Alembic's own recipe for a
new database; the scenarios and the explorer make hundreds of them), and a database already at
the head is left as it is. Only a database at another revision, or one written before
migrations, loads Alembic (``alembic_runner``).
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import Column, Connection, MetaData, PrimaryKeyConstraint, String, Table, column, inspect, select, table

from tether.store.schema_revision import (
    HEAD,
    LEGACY_TABLE,
    LEGACY_VERSION,
    SchemaChange,
    SchemaTooNew,
    SchemaTooOld,
    SchemaUnrecognised,
)
from tether.store.tables import metadata

legacy_version_table = table(LEGACY_TABLE, column("version"))

# Alembic's version table as Alembic makes it (``DefaultImpl.version_table_impl``), so a new
# database is stamped without importing Alembic; test_migrations checks the two agree.
version_table = Table(
    "alembic_version", MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)


def upgrade_schema(connection: Connection) -> SchemaChange:
    """Bring the database on ``connection`` to ``HEAD``, inside the caller's transaction."""
    tables = set(inspect(connection).get_table_names())
    revisions = _revisions(connection, tables)
    if revisions == (HEAD,):
        return SchemaChange("current", HEAD)
    if revisions:
        return _with_alembic(connection, revisions)
    if _empty(tables):
        begin_ddl(connection)
        # Every table is known to be absent: no need to ask about each one first.
        metadata.create_all(connection, checkfirst=False)
        version_table.create(connection, checkfirst=True)
        connection.execute(version_table.insert().values(version_num=HEAD))
        return SchemaChange("created", HEAD)
    if _from_before_migrations(connection, tables):
        return _with_alembic(connection, None)
    raise _unrecognised(tables)


def read_schema(connection: Connection) -> Literal["empty", "current"]:
    """Where the database stands, found without writing anything: empty, or at ``HEAD``.

    Raises ``SchemaTooOld`` for one an upgrade would bring to the head (a reader does not upgrade),
    ``SchemaTooNew`` and ``SchemaUnrecognised`` as ``upgrade_schema`` does.
    """
    tables = set(inspect(connection).get_table_names())
    revisions = _revisions(connection, tables)
    if revisions == (HEAD,):
        return "current"
    if revisions:
        from tether.store import alembic_runner

        if set(revisions) <= set(alembic_runner.known_revisions()):
            raise SchemaTooOld(", ".join(revisions), HEAD)
        raise SchemaTooNew(revisions, HEAD)
    if _empty(tables):
        return "empty"
    if _from_before_migrations(connection, tables):
        raise SchemaTooOld(f"{LEGACY_VERSION} of the {LEGACY_TABLE} table (from before migrations)", HEAD)
    raise _unrecognised(tables)


def _revisions(connection: Connection, tables: set[str]) -> tuple[str, ...]:
    if version_table.name not in tables:
        return ()
    # An empty version table is Alembic's "nothing applied yet": the tables decide, as with none.
    return tuple(connection.scalars(select(version_table.c.version_num)))


def _empty(tables: set[str]) -> bool:
    return not tables - {version_table.name}


def _from_before_migrations(connection: Connection, tables: set[str]) -> bool:
    """Whether the tables are the previous release's (which kept its version in its own table)."""
    if LEGACY_TABLE not in tables:
        return False
    versions = list(connection.scalars(select(legacy_version_table.c.version)))
    # No row: a first start stopped after making the tables (this one last) and before writing
    # the version, which that release wrote on its next start. Stamping writes it here.
    if versions in ([], [LEGACY_VERSION]):
        return True
    raise SchemaUnrecognised(
        f"the database's {LEGACY_TABLE} table says schema version {', '.join(map(str, versions))}, which no "
        f"Tether release wrote (the last one before migrations wrote {LEGACY_VERSION}); open it with the "
        f"Tether that made it")


def _unrecognised(tables: set[str]) -> SchemaUnrecognised:
    ours = sorted(tables & set(metadata.tables))
    if not ours:
        # Someone else's database: adding Tether's tables to it would mix two applications' data.
        others = sorted(tables - {version_table.name})
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        return SchemaUnrecognised(
            f"the database holds another application's tables ({shown}) and none of Tether's; give Tether an "
            f"empty database, or a new data dir")
    return SchemaUnrecognised(
        f"the database holds some of Tether's tables ({', '.join(ours)}) but no record of their schema "
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
