"""What `tether serve` logs, and where: oslo.log's line, with the request it serves.

Every line names the request it was written for, as OpenStack services' logs do
(``[req-... USER PROJECT - - -]``, or ``[-]`` outside any request), so that an operator can follow
one call from its access line through the state changes it caused: a build spawned by a request
carries the request's ``RequestLog`` along, because a task starts with a copy of its creator's
context variables.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ACCESS = "tether.access"
TERMINAL_LEVEL = logging.WARNING  # the terminal shows the banner and what needs attention
FILE_LEVEL = logging.INFO  # a log file holds the requests and the state changes too
FORMAT = "%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [%(request)s] %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass
class RequestLog:
    """The request a line is written for; the caller is filled in once the token is validated."""

    request_id: str
    user_id: str = "-"
    project_id: str = "-"

    def __str__(self) -> str:
        return f"{self.request_id} {self.user_id} {self.project_id} - - -"


current_request: ContextVar[RequestLog | None] = ContextVar("current_request", default=None)


def caller_known(user_id: str, project_id: str | None) -> None:
    """The request being served is this caller's (for its access line and every line after)."""
    request = current_request.get()
    if request is not None:
        request.user_id, request.project_id = user_id, project_id or "-"


class _WithRequest(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        request = current_request.get()
        record.request = "-" if request is None else str(request)
        return True


@dataclass(frozen=True)
class LogSettings:
    level: str | None = None  # None: INFO into a log file, WARNING on the terminal
    file: Path | None = None

    @property
    def threshold(self) -> int:
        """The lowest level anything is written at."""
        if self.level is not None:
            return logging.getLevelName(self.level.upper())
        return FILE_LEVEL if self.file is not None else TERMINAL_LEVEL


def configure(settings: LogSettings) -> None:
    """Send the log to the terminal (stderr) and, when asked, to a file.

    With a file, the terminal stays at WARNING whatever ``--log-level`` says: the file is where
    the detail goes. Raises ``OSError`` when the file cannot be opened for appending.
    """
    formatter = logging.Formatter(FORMAT, DATE_FORMAT)
    handlers: list[logging.Handler] = []
    terminal = logging.StreamHandler(sys.stderr)
    terminal.setLevel(TERMINAL_LEVEL if settings.file is not None else settings.threshold)
    handlers.append(terminal)
    if settings.file is not None:
        # WatchedFileHandler reopens the file when logrotate moves it away, as oslo.log's does.
        from logging.handlers import WatchedFileHandler

        written = WatchedFileHandler(settings.file, encoding="utf-8")
        written.setLevel(settings.threshold)
        handlers.append(written)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(_WithRequest())
        root.addHandler(handler)
    root.setLevel(settings.threshold)
    # uvicorn's own lines (at INFO: "Started server process", ...) belong to the file, not the terminal.
    logging.getLogger("uvicorn").setLevel(max(settings.threshold, logging.INFO))
    logging.getLogger("uvicorn.access").disabled = True  # tether.access writes the access line


def access_line(client: str, method: str, target: str, status: int, length: int, seconds: float) -> str:
    """The access line, as nova-api's and neutron-server's WSGI servers write it."""
    return f'{client} "{method} {target}" status: {status} len: {length} time: {seconds:.7f}'


__all__ = ["ACCESS", "LogLevel", "LogSettings", "RequestLog", "access_line", "caller_known", "configure",
           "current_request"]
