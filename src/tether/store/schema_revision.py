"""Which schema revision a database is at, and what opening it did or why it is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tether import __version__

# The newest revision in migrations/versions, known here without asking Alembic so that a current
# database opens at once; test_migrations checks that it is the script directory's head.
HEAD = "0018_write_path_indexes"
# What a database written before migrations holds, recognised by its own version table.
BASELINE = "0001_baseline"
LEGACY_TABLE = "tether_schema"
LEGACY_VERSION = 1


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
        self.revisions = revisions
        self.head = head
        super().__init__(
            f"the database is at schema revision {', '.join(revisions)}, which this Tether {__version__} does not "
            f"know (its newest is {head}); upgrade Tether to open it")


class SchemaTooOld(SchemaError):
    """The database needs an upgrade, and whoever opened it only reads (``tether check``)."""

    def __init__(self, revision: str, head: str) -> None:
        self.revision = revision
        self.head = head
        super().__init__(
            f"the database is at schema revision {revision}, older than this Tether {__version__}'s {head}; "
            f"`tether serve` upgrades it on its next start, and a check reads only the current schema")


class SchemaUnrecognised(SchemaError):
    """The database holds tables but no version Tether can place them at."""
