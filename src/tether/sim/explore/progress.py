"""What `tether explore` shows while it runs: scenarios done, schedules per second, and an estimate.

``Board`` keeps the counts and does the arithmetic; ``ProgressBar`` draws them
with Rich, on a terminal only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.table import Column
from rich.text import Text

from tether.sim.explore.report import Exploration, Tally


class Board:
    """How far a run of `tether explore` has got, over all its scenarios.

    The bar's thread reads it while the main thread updates it: every value it
    reads is an int, a float or a tuple, replaced whole, never changed in place.
    """

    def __init__(self, scenarios: int, runs_each: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = scenarios
        self.runs_each = runs_each  # schedules per scenario when they are random; None: exhaustive, unknown
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.schedules = 0  # run to the end, the finished scenarios' and the running ones' so far
        self.running: tuple[str, ...] = ()
        self.stopping = False
        self._finished: set[str] = set()
        self._finished_schedules = 0
        self._current: dict[str, Tally] = {}  # the main thread's alone
        self._running: tuple[Tally, ...] = ()  # the same, for the bar's thread

    def update(self, tally: Tally) -> None:
        if tally.scenario in self._finished:  # a worker's last update can come after its report
            return
        self._current[tally.scenario] = tally
        self._recount()

    def finished(self, report: Exploration) -> None:
        self._finished.add(report.scenario)
        self._current.pop(report.scenario, None)
        self._finished_schedules += report.schedules
        self.done = len(self._finished)
        self._recount()

    def _recount(self) -> None:
        self._running = tuple(self._current.values())
        self.schedules = self._finished_schedules + sum(tally.schedules for tally in self._running)
        self.running = tuple(tally.scenario for tally in self._running)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def rate(self) -> float:
        """Schedules per second since the start."""
        elapsed = self.elapsed()
        return self.schedules / elapsed if elapsed > 0 else 0.0

    def fraction(self) -> float:
        """How much of the whole run is done, as far as can be told.

        An exhaustive search cannot tell how many schedules it has left (the
        reduction finds the branches it must take as it goes), so a running
        scenario counts for nothing until it ends. Random schedules are
        counted out: a scenario is done after ``runs_each`` of them.
        """
        if not self.total:
            return 1.0
        partial = 0.0
        if self.runs_each:
            partial = sum(min(1.0, (tally.schedules + tally.pruned) / self.runs_each) for tally in self._running)
        return min(1.0, (self.done + partial) / self.total)

    def seconds_left(self) -> float | None:
        """At the pace so far; None until anything can be told."""
        fraction = self.fraction()
        if fraction <= 0.0:
            return None
        return self.elapsed() * (1.0 - fraction) / fraction


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"


def describe(board: Board) -> str:
    """The bar's words after "N/M scenarios": schedules, their rate, the time so far and the time left."""
    said = f"{board.schedules:,} schedules, {board.rate():,.0f}/s · {_duration(board.elapsed())}"
    if board.stopping:
        return f"{said} · stopping (Ctrl-C again: now)"
    left = board.seconds_left()
    return f"{said} · " + ("no estimate yet" if left is None else f"~{_duration(left)} left")


class ProgressBar:
    """The live bar, drawn on ``console`` when it is a terminal; nothing otherwise.

    Into a pipe or a file nobody watches a bar, and its redrawing would be
    noise in what a machine reads. Results printed on the same console while
    the bar is up appear above it; the bar is gone when the run ends.
    """

    def __init__(self, console: Console | None, board: Board) -> None:
        self.board = board
        self.console = console if console is not None and console.is_terminal else None
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        if self.console is None:
            return self
        board = self.board
        self._progress = Progress(
            # Narrow enough for 80 columns; what does not fit is cut at the end of the line, never wrapped
            # onto a second one; the names of the scenarios running are the first to give way.
            SpinnerColumn(), BarColumn(bar_width=12), MofNCompleteColumn(), TextColumn("scenarios ·"),
            _Live(lambda: describe(board), Column(no_wrap=True)),
            _Live(lambda: ", ".join(board.running), Column(no_wrap=True, overflow="ellipsis", ratio=1), "dim"),
            console=self.console, transient=True, expand=True,
            # Results go through the console, above the bar; nothing else is written to the terminal.
            redirect_stdout=False, redirect_stderr=False,
        )
        self._task = self._progress.add_task("explore", total=board.total)
        self._progress.start()
        return self

    def refresh(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.board.done, refresh=True)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None  # stopped once, whether by the run's end or by a second Ctrl-C


class _Live(ProgressColumn):
    """A column whose text is worked out afresh at every redraw (the rate and the estimate move on their own)."""

    def __init__(self, text: Callable[[], str], table_column: Column | None = None, style: str = "") -> None:
        super().__init__(table_column=table_column)
        self.text = text
        self.style = style

    def render(self, task: Task) -> Text:
        return Text(self.text(), style=self.style)
