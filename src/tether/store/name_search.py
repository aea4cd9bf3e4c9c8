"""A substring index on server names: nova's name filter is a regular expression search, not a prefix.

``?name=web`` finds every server whose name holds "web" anywhere, which no
B-tree index answers; on a large cloud the list read every server to find one
(the SDK's and the CLI's find-by-name do exactly that). A trigram index
answers "holds this text" from the index:

- PostgreSQL: pg_trgm's GIN index on the name, which serves ``ILIKE``;
- SQLite: an FTS5 table with the trigram tokenizer (which serves ``LIKE``),
  kept in step with ``instances`` by triggers. FTS5 rows are found by an
  integer rowid, which an ``instances`` row does not have stably (VACUUM may
  renumber a table without an integer key), so a small table gives each
  instance a number of its own.

Both are pre-filters, ignoring case: the exact test (the regular expression,
case and all) is still the service's. A text the index cannot serve (under
three characters, or holding LIKE's wildcards) is looked for the plain way.
Nothing here is declared in ``tables.metadata``: the schema's creation and the
migration install it, and the schema comparison leaves out ``OBJECTS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, text
from sqlalchemy.exc import DBAPIError, OperationalError

if TYPE_CHECKING:
    from tether.store.connection import StoreConnection

KEYS = "instance_search_keys"
FTS = "instance_search"
INDEX = "ix_instances_name_trgm"
# Everything installed here, by name prefix (FTS5's own shadow tables included): not in the metadata.
OBJECTS = (KEYS, FTS, INDEX)

_SQLITE = (
    f"CREATE TABLE {KEYS} (id INTEGER PRIMARY KEY, uuid VARCHAR(255) NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(name, tokenize='trigram')",
    f"INSERT INTO {KEYS} (uuid) SELECT uuid FROM instances",
    f"INSERT INTO {FTS} (rowid, name) SELECT k.id, i.name FROM {KEYS} k JOIN instances i ON i.uuid = k.uuid",
    f"""CREATE TRIGGER {FTS}_insert AFTER INSERT ON instances BEGIN
        INSERT INTO {KEYS} (uuid) VALUES (new.uuid);
        INSERT INTO {FTS} (rowid, name) VALUES ((SELECT id FROM {KEYS} WHERE uuid = new.uuid), new.name);
    END""",
    f"""CREATE TRIGGER {FTS}_rename AFTER UPDATE OF name ON instances BEGIN
        UPDATE {FTS} SET name = new.name WHERE rowid = (SELECT id FROM {KEYS} WHERE uuid = new.uuid);
    END""",
    f"""CREATE TRIGGER {FTS}_delete AFTER DELETE ON instances BEGIN
        DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE uuid = old.uuid);
        DELETE FROM {KEYS} WHERE uuid = old.uuid;
    END""",
)


def install(connection: Any) -> None:
    """Create the index on a database whose ``instances`` table exists (a sync SQLAlchemy connection)."""
    if connection.dialect.name == "sqlite":
        for statement in _SQLITE:
            connection.exec_driver_sql(statement)
        return
    if connection.dialect.name != "postgresql":
        return
    available = connection.execute(text(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first() is not None
    if not available:
        return  # a PostgreSQL without contrib: names are looked for the plain way
    try:
        # in public, not the schema on the search path: a schema dropped with its objects (a test's) would
        # take the extension, and every other schema's index with it
        with connection.begin_nested():
            connection.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
    except DBAPIError:
        pass  # not ours to create (privileges, no public schema): use it if someone did
    schema = connection.execute(text(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'pg_trgm'")).scalar()
    if schema is not None:
        connection.exec_driver_sql(f'CREATE INDEX {INDEX} ON instances USING gin (name "{schema}".gin_trgm_ops)')


def uninstall(connection: Any) -> None:
    if connection.dialect.name == "sqlite":
        for name in ("insert", "rename", "delete"):
            connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {FTS}_{name}")
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS}")
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS {KEYS}")
    elif connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"DROP INDEX IF EXISTS {INDEX}")


def is_ours(name: str | None) -> bool:
    """Whether a schema object is one of this module's (for the schema comparison)."""
    return name is not None and name.startswith(OBJECTS)


async def matching(conn: StoreConnection, table: Table, column: str, wanted: str, most: int) -> list[str] | None:
    """The keys of the rows whose ``column`` holds ``wanted``, ignoring case, found through the index; None
    where there is no index for that column, it cannot serve that text, or more than ``most`` rows match
    (the page is then read in its own order, where matches that common are soon found)."""
    if table.name != "instances" or column != "name" or len(wanted) < 3 or {"%", "_", "\\"} & set(wanted):
        return None
    pattern = f"%{wanted}%"
    dialect = conn.dialect.name
    if dialect == "sqlite":
        # from the index outwards: asked as a condition on ``instances``, SQLite's planner walks the
        # page's order index instead and tests every row
        statement = text(f"SELECT k.uuid FROM {FTS} s JOIN {KEYS} k ON k.id = s.rowid "
                         f"WHERE s.name LIKE :pattern LIMIT :most")
    elif dialect == "postgresql":
        statement = text("SELECT uuid FROM instances WHERE name ILIKE :pattern LIMIT :most")
    else:
        return None
    try:
        found = [row[0] for row in await conn.execute(statement, {"pattern": pattern, "most": most + 1})]
    except OperationalError as error:
        if FTS not in str(error):
            raise
        return None  # a store made without the index: the explorer's (see ``RecordingDatabase``)
    return found if len(found) <= most else None
