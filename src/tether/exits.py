"""How `tether serve` and `tether check` end: one exit code per kind of failure, each with its line.

Where a BSD ``sysexits.h`` value means the same thing it is used (73 EX_CANTCREAT, 75 EX_TEMPFAIL,
...), so scripts and service managers read them as they read other daemons'. Imported by the CLI
to print ``--help``: it imports nothing heavy.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1  # nova-manage's "an error": the audit could not read what it needs
    USAGE = 2  # click's own code for a wrong option
    VIOLATIONS = 3
    INCOMPLETE = 4  # a budget stopped the search: neither a pass nor a failure
    REPAIRED = 4  # tether repair: what INCOMPLETE is to explore (each command says what its codes mean)
    CORRUPT_DATABASE = 65  # EX_DATAERR
    NOT_TETHERS = 66  # EX_NOINPUT
    DATABASE_UNREACHABLE = 69  # EX_UNAVAILABLE
    INTERNAL = 70  # EX_SOFTWARE
    IN_USE = 73  # EX_CANTCREAT
    IO_ERROR = 74  # EX_IOERR
    PORT_IN_USE = 75  # EX_TEMPFAIL
    DATABASE_REFUSED = 76  # EX_PROTOCOL
    READ_ONLY = 77  # EX_NOPERM
    SCHEMA_TOO_NEW = 78  # EX_CONFIG
    SCHEMA_TOO_OLD = 79


# What each code means, in each command's words (one help line each: under 72 characters).
SERVE_EXITS = {
    ExitCode.OK: "stopped by Ctrl-C or SIGTERM",
    ExitCode.USAGE: "an option is wrong, or default passwords beyond loopback",
    ExitCode.CORRUPT_DATABASE: "the database is corrupt, or not a SQLite database",
    ExitCode.NOT_TETHERS: "not a Tether data dir (a file, another application's database)",
    ExitCode.DATABASE_UNREACHABLE: "PostgreSQL cannot be reached",
    ExitCode.INTERNAL: "a crash fault fired (--fault POINT=crash), or a bug in Tether",
    ExitCode.IN_USE: "another tether serve owns the data dir or the database (PID named)",
    ExitCode.IO_ERROR: "the data dir cannot be read or written (disk full, I/O error)",
    ExitCode.PORT_IN_USE: "the port is in use (nothing was created or changed)",
    ExitCode.DATABASE_REFUSED: "PostgreSQL refused: unknown database or user, password, privilege",
    ExitCode.READ_ONLY: "the data dir or the database is read-only",
    ExitCode.SCHEMA_TOO_NEW: "the database was upgraded by a newer Tether: upgrade Tether",
}
CHECK_EXITS = {
    ExitCode.OK: "no violations",
    ExitCode.USAGE: "an option is wrong",
    ExitCode.VIOLATIONS: "an invariant is violated",
    ExitCode.CORRUPT_DATABASE: "the database is corrupt, or not a SQLite database",
    ExitCode.NOT_TETHERS: "no Tether cloud there, or another application's database",
    ExitCode.DATABASE_UNREACHABLE: "PostgreSQL cannot be reached",
    ExitCode.INTERNAL: "a bug in Tether (--debug shows where)",
    ExitCode.IO_ERROR: "the data dir cannot be read (I/O error, no permission)",
    ExitCode.DATABASE_REFUSED: "PostgreSQL refused: unknown database or user, password, privilege",
    ExitCode.SCHEMA_TOO_NEW: "the database was upgraded by a newer Tether: upgrade Tether",
    ExitCode.SCHEMA_TOO_OLD: "the database needs the upgrade the next `tether serve` makes",
}
INTERRUPTED = 130  # what a shell reports for a process that Ctrl-C (SIGINT, 2) stopped: 128 + 2
EXPLORE_EXITS = {
    ExitCode.OK: "every scenario explored in full, nothing violated",
    ExitCode.USAGE: "an option is wrong, or a trace does not replay",
    ExitCode.VIOLATIONS: "a schedule failed: an invariant, an expectation, a mend",
    ExitCode.INCOMPLETE: "nothing violated, but a budget stopped a scenario early",
    ExitCode.INTERNAL: "a scenario could not be explored (a bug in Tether)",
    INTERRUPTED: "stopped by Ctrl-C (what finished is printed)",
}
AUDIT_EXITS = {
    ExitCode.OK: "no findings, every source read",
    ExitCode.ERROR: "no findings, but a source failed or answered incompletely",
    ExitCode.USAGE: "an option is wrong",
    ExitCode.VIOLATIONS: "findings",
}
REPAIR_EXITS = {
    ExitCode.OK: "nothing to repair, every source read",
    ExitCode.ERROR: "a source failed, an action failed, or more actions than --max-actions",
    ExitCode.USAGE: "an option is wrong",
    ExitCode.VIOLATIONS: "findings, none repaired (a dry run, or each held back by a gate)",
    ExitCode.REPAIRED: "something was repaired",
}


class Failure(Exception):
    """Why a command cannot go on, in one or two lines that say what to do, and the code it exits with."""

    def __init__(self, code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def exit_codes_help(codes: dict[ExitCode, str] | dict[int, str]) -> str:
    """The codes as a block of help text (click's \\b keeps its lines as they are)."""
    rows = "\n".join(f"{int(code):>3}  {meaning}" for code, meaning in codes.items())
    return f"\b\nExit codes:\n{rows}"


__all__ = ["AUDIT_EXITS", "CHECK_EXITS", "EXPLORE_EXITS", "INTERRUPTED", "REPAIR_EXITS", "SERVE_EXITS", "ExitCode",
           "Failure", "exit_codes_help"]
