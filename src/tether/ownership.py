"""One `tether serve` per data dir and per SQLite database: an OS file lock, held for the process's life.

``flock`` locks belong to the open file, so the kernel lets go of them when the process ends, by
kill -9 too: a lock is never stale, and nothing has to be cleaned up after a crash. The lock is
taken without waiting, before anything in the data dir is read or written, so a second server
changes nothing. A SQLite database file is locked itself, wherever it lives, so that two data dirs
pointed at one database (``--db``) are refused too; SQLite's own locks are POSIX record locks,
which on Linux never conflict with ``flock``.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tether.exits import ExitCode, Failure

LOCK_FILE = "tether.lock"


class Owned:
    """The locks this process holds; ``release`` lets go of them (ending the process does as well)."""

    def __init__(self) -> None:
        self._held: list[tuple[int, Path]] = []

    def data_dir(self, path: Path) -> None:
        """Own the data dir ``path``, creating it if it does not exist yet."""
        path.mkdir(parents=True, exist_ok=True)
        lock = path / LOCK_FILE
        fd = self._take(lock, f"the data dir {path}", "another --data-dir")
        # For whoever looks: the holder's PID (a refused server reads the kernel's word first).
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def database_file(self, path: Path, *, in_data_dir: Path | None = None) -> None:
        """Own the SQLite database file ``path`` (made empty if it does not exist: SQLite reads that as new);
        ``in_data_dir``: the data dir it is the database of, named instead when it is refused."""
        if in_data_dir is not None:
            self._take(path, f"the data dir {in_data_dir}", "another --data-dir")
        else:
            self._take(path, f"the database {path}", "another --db")

    def holds(self, path: Path) -> bool:
        return any(held == path for _, held in self._held)

    def release(self) -> None:
        while self._held:
            fd, path = self._held.pop()
            if path.name == LOCK_FILE:
                os.ftruncate(fd, 0)  # no PID left behind to mislead; the lock file itself stays
            os.close(fd)

    def _take(self, path: Path, what: str, instead: str) -> int:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = holder_of(fd)
            os.close(fd)
            raise Failure(ExitCode.IN_USE,
                          f"{what} is in use by another tether serve ({holder}); stop that one first, or give this "
                          f"one {instead}") from None
        except BaseException:
            os.close(fd)
            raise
        self._held.append((fd, path))
        return fd


def holder_of(fd: int) -> str:
    """Who holds the flock on the file open at ``fd``: "PID n" from the kernel's table, or as the file says."""
    pid = _pid_from_proc_locks(fd) or _pid_written_in(fd)
    return f"PID {pid}" if pid else "its PID unknown"


def _pid_from_proc_locks(fd: int) -> int | None:
    stat = os.fstat(fd)
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    for line in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF"
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
            return int(fields[4])
    return None


def _pid_written_in(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None


__all__ = ["LOCK_FILE", "Owned", "holder_of"]
