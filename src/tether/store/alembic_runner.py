"""Alembic, run on the connection and inside the transaction Tether already holds.

Imported only when a database is not at the head (see ``upgrade``): Alembic takes ~150 ms to import.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from tether.store.schema_revision import BASELINE, SchemaChange, SchemaTooNew

MIGRATIONS = Path(__file__).with_name("migrations")


def config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for Tether's migrations; ``env.py`` runs them on ``connection``."""
    settings = Config()
    # configparser would read a % in the path as the start of a substitution.
    settings.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    settings.attributes["connection"] = connection
    return settings


@cache
def scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(config())


def known_revisions() -> tuple[str, ...]:
    """Every revision this Tether has, oldest first."""
    return tuple(reversed([script.revision for script in scripts().walk_revisions()]))


def upgrade(connection: Connection, revisions: tuple[str, ...] | None) -> SchemaChange:
    """Upgrade from ``revisions`` (``None``: a database from before migrations) to the head."""
    head = scripts().get_current_head() or ""
    if revisions == (head,):  # reached only if upgrade.HEAD lags the scripts, which a test forbids
        return SchemaChange("current", head)
    if revisions is not None and not set(revisions) <= set(known_revisions()):
        raise SchemaTooNew(revisions, head)
    settings = config(connection)
    if revisions is None:
        command.stamp(settings, BASELINE)
        revisions = (BASELINE,)
    command.upgrade(settings, "head")
    return SchemaChange("upgraded", head, ", ".join(revisions))
