"""How Alembic reaches a Tether database.

Tether hands over the connection it holds, inside its open transaction (``tether.store.upgrade``),
so an upgrade commits or rolls back as a whole. The ``alembic`` command, run from the repository
(``[tool.alembic]`` in pyproject.toml), names a database with ``-x db=URL`` instead, and opens it
as Tether does; see README.md beside this file.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from tether.store.tables import metadata

# batch: SQLite alters a table by copying it, so autogenerate writes revisions that work there too.
OPTIONS = {"target_metadata": metadata, "render_as_batch": True}


def migrate(connection: Connection) -> None:
    context.configure(connection=connection, **OPTIONS)
    with context.begin_transaction():
        context.run_migrations()


def database_url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("db")
    if not url:
        raise SystemExit("name the database: alembic -x db=sqlite:///path/to/tether.db ...")
    return url


async def migrate_database(url: str) -> None:
    from tether.store.database import Database
    from tether.store.upgrade import begin_ddl

    database = Database(url)
    try:
        async with database.begin() as conn:
            await conn.run_sync(lambda connection: (begin_ddl(connection), migrate(connection)))
    finally:
        await database.dispose()


if context.config.attributes.get("connection") is not None:
    migrate(context.config.attributes["connection"])
elif context.is_offline_mode():
    context.configure(url=database_url(), literal_binds=True, **OPTIONS)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(migrate_database(database_url()))
