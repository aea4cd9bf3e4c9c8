"""What went wrong opening a cloud, told in a line with what to do, and the exit code that says which.

Errors arrive as the libraries raise them (sqlite3's inside SQLAlchemy's, asyncpg's inside
SQLAlchemy's adaptor, OSError from a file or a socket); ``explain`` walks each chain to the error
that names the cause. Anything it does not recognise is a bug in Tether, and says so.
"""

from __future__ import annotations

import errno
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.exits import ExitCode, Failure
from tether.store.schema_revision import SchemaError, SchemaTooNew, SchemaTooOld

_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_UNREACHABLE_ERRNOS = {errno.ECONNREFUSED, errno.ETIMEDOUT, errno.EHOSTUNREACH, errno.ENETUNREACH,
                       errno.ECONNRESET, errno.EHOSTDOWN, errno.ENETDOWN}
# asyncpg's names for a server that answered and said no (SQLSTATE classes 28 and 3D, and 42501).
_REFUSALS = {"InvalidPasswordError", "InvalidAuthorizationSpecificationError", "InvalidCatalogNameError",
             "InsufficientPrivilegeError"}
_UNAVAILABLE = {"CannotConnectNowError", "TooManyConnectionsError", "ConnectionDoesNotExistError"}


@dataclass(frozen=True)
class Opening:
    """What was being opened, for the messages: ``tether serve`` or ``tether check``, on which store."""

    command: str
    data_dir: Path
    database_url: str

    @property
    def is_sqlite(self) -> bool:
        return self._url().get_backend_name() == "sqlite"

    @property
    def database(self) -> str:
        url = self._url()
        if self.is_sqlite:
            return str(url.database)
        return str(url.render_as_string(hide_password=True))

    @property
    def server(self) -> str:
        url = self._url()
        return f"PostgreSQL at {url.host or 'localhost'}:{url.port or 5432}"

    def _url(self) -> Any:
        # Imported when a message needs it: a refused start names no database and loads no SQLAlchemy.
        from sqlalchemy.engine import make_url

        return make_url(self.database_url)


def explain(error: BaseException, opening: Opening) -> Failure:
    """The failure ``error`` is, in a line that says what to do."""
    for cause in _chain(error):
        failure = _recognise(cause, opening)
        if failure is not None:
            return failure
    return Failure(ExitCode.INTERNAL,
                   f"{opening.command} failed: {type(error).__name__}: {_one_line(error)}; this is a bug in "
                   f"Tether: run it again with --debug for the traceback, and report it")


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)  # SQLAlchemy's DBAPIError holds the driver's error here
        if isinstance(orig, BaseException) and id(orig) not in seen:
            yield from _chain(orig)
        current = current.__cause__ or current.__context__


def _recognise(error: BaseException, opening: Opening) -> Failure | None:
    if isinstance(error, Failure):
        return error
    if isinstance(error, SchemaError):
        return _schema(error)
    if isinstance(error, sqlite3.Error):
        return _sqlite(error, opening)
    if type(error).__module__.startswith("asyncpg"):
        return _postgresql(error, opening)
    if isinstance(error, OSError):
        return _os(error, opening)
    return None


def _schema(error: SchemaError) -> Failure:
    if isinstance(error, SchemaTooNew):
        return Failure(ExitCode.SCHEMA_TOO_NEW, str(error))
    if isinstance(error, SchemaTooOld):
        return Failure(ExitCode.SCHEMA_TOO_OLD, str(error))
    return Failure(ExitCode.NOT_TETHERS, str(error))


def _sqlite(error: sqlite3.Error, opening: Opening) -> Failure | None:
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    database = opening.database
    if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
        return Failure(ExitCode.CORRUPT_DATABASE,
                       f"{database} is not a SQLite database, or is damaged ({error}); restore it from a backup, "
                       f"or move it away and start a new cloud")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN):
        return _read_only(database, str(error), opening)
    if code == sqlite3.SQLITE_FULL:
        return Failure(ExitCode.IO_ERROR, f"cannot write {database}: the disk is full; free some space")
    if code == sqlite3.SQLITE_IOERR:
        return Failure(ExitCode.IO_ERROR, f"cannot read or write {database}: {error}; check the disk it is on")
    return None


def _postgresql(error: BaseException, opening: Opening) -> Failure | None:
    name = type(error).__name__
    if name in _REFUSALS:
        return Failure(ExitCode.DATABASE_REFUSED,
                       f"{opening.server} refused {opening.database}: {_one_line(error)}; check the user, "
                       f"password and database name in --db")
    if name in _UNAVAILABLE:
        return Failure(ExitCode.DATABASE_UNREACHABLE,
                       f"{opening.server} is not taking connections: {_one_line(error)}; try again once it is")
    return None


def _os(error: OSError, opening: Opening) -> Failure:
    if isinstance(error, socket.gaierror | TimeoutError) or error.errno in _UNREACHABLE_ERRNOS:
        # Only a database server is reached over the network while a cloud opens.
        return Failure(ExitCode.DATABASE_UNREACHABLE,
                       f"cannot reach {opening.server}: {error.strerror or _one_line(error)}; is it running, and "
                       f"is --db right?")
    where = error.filename or opening.data_dir
    if error.errno in _READ_ONLY_ERRNOS:
        return _read_only(where, error.strerror or str(error), opening)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return Failure(ExitCode.IO_ERROR, f"cannot write {where}: {error.strerror}; free some space")
    if error.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR) and where == str(opening.data_dir):
        return Failure(ExitCode.NOT_TETHERS, f"{where} is not a directory, so not a Tether data dir; give "
                                             f"--data-dir a directory (a new one starts a new cloud)")
    return Failure(ExitCode.IO_ERROR, f"cannot use {where}: {error.strerror or _one_line(error)}")


def _read_only(where: object, reason: str, opening: Opening) -> Failure:
    if opening.command == "tether check":
        return Failure(ExitCode.IO_ERROR, f"cannot read {where}: {reason}")
    path = Path(str(where))
    if opening.data_dir in (path, path.parent):
        what = f"the data dir {opening.data_dir} is read-only ({reason}: {path.name})"
    else:
        what = f"{path} is read-only ({reason})"
    return Failure(ExitCode.READ_ONLY,
                   f"{what}, and {opening.command} keeps its cloud there; make it writable, or copy the data dir "
                   f"somewhere that is (`tether check` reads it as it is)")


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


__all__ = ["Opening", "explain"]
