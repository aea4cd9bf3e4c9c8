"""What `tether explore` shows while it runs, and how it stops: the bar's arithmetic, its drawing, Ctrl-C."""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import time

import pytest
from rich.console import Console

from tether.sim.explore import ExploreOptions, explore_many
from tether.sim.explore.command import _Interrupt, trace_lines
from tether.sim.explore.progress import Board, ProgressBar, describe
from tether.sim.explore.report import Exploration, Tally


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def finished(name: str, schedules: int) -> Exploration:
    return Exploration(name, "exhaustive", schedules=schedules)


def test_an_exhaustive_runs_estimate_comes_from_the_scenarios_done() -> None:
    clock = Clock()
    board = Board(4, clock=clock)
    board.update(Tally("a", 30, 0, 0, 0))
    clock.now += 10
    assert board.schedules == 30 and board.rate() == 3.0
    assert board.seconds_left() is None  # a running exhaustive search cannot tell how far it is
    assert "no estimate yet" in describe(board)
    board.finished(finished("a", 40))
    board.update(Tally("b", 20, 0, 0, 0))
    board.update(Tally("a", 35, 0, 0, 0))  # a worker's last update, come after its report: ignored
    assert (board.done, board.schedules, board.running) == (1, 60, ("b",))
    assert board.seconds_left() == pytest.approx(30.0)  # a quarter done in 10 s
    assert describe(board) == "60 schedules, 6/s · 0:10 · ~0:30 left"
    board.stopping = True
    assert describe(board).endswith("stopping (Ctrl-C again: now)")


def test_random_schedules_are_counted_out_towards_the_estimate() -> None:
    clock = Clock()
    board = Board(2, runs_each=100, clock=clock)
    clock.now += 5
    board.update(Tally("a", 40, 10, 0, 0))  # a schedule cut short is a run all the same
    assert board.fraction() == pytest.approx(0.25)
    assert board.seconds_left() == pytest.approx(15.0)


def test_the_bar_is_drawn_on_a_terminal_only() -> None:
    board = Board(2)
    board.update(Tally("port-deleted-during-attach", 7, 0, 0, 0))
    screen = io.StringIO()
    with ProgressBar(Console(file=screen, force_terminal=True, width=160), board) as bar:
        bar.refresh()
    drawn = screen.getvalue()
    assert "0/2" in drawn and "scenarios" in drawn and "7 schedules, " in drawn, drawn
    assert "port-deleted-during-attach" in drawn

    piped = io.StringIO()
    with ProgressBar(Console(file=piped), board) as bar:  # not a terminal
        bar.refresh()
    assert piped.getvalue() == "" and bar.console is None


def test_a_trace_is_one_step_a_line_with_its_crash_last() -> None:
    assert trace_lines("user@task.start agent.plugged:1@network.agent.before_port_active crash") == [
        "   1  user             task.start",  # the actors padded to the longest
        "   2  agent.plugged:1  network.agent.before_port_active",
        "      crash: the control plane dies here, and a new one recovers from what it left",
    ]


class StopNow(Exception):
    pass


def test_the_first_ctrl_c_asks_to_stop_and_the_second_stops_now() -> None:
    told = []

    def second() -> None:
        told.append("now")
        raise StopNow  # the real one exits the process

    # Python's own handler, as in a terminal (a test runner's worker may have started with SIGINT ignored)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with _Interrupt(lambda: told.append("first"), second) as interrupt:
            assert not interrupt.requested()
            os.kill(os.getpid(), signal.SIGINT)
            assert interrupt.requested() and interrupt.requested() and told == ["first"]  # told once
            with pytest.raises(StopNow):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler's turn, should it not have run yet
        assert told == ["first", "now"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_leaving_the_reports_early_kills_the_workers() -> None:
    names = ["port-deleted-during-attach", "delete-races-undeploy-and-node-delete", "port-deleted-during-boot"]
    stream = explore_many(names, ExploreOptions(exhaustive=True, crashes=True), jobs=2)
    first = next(stream)
    assert first.scenario in names and first.complete
    stream.close()  # what a second Ctrl-C does, while the other scenarios are still running
    assert multiprocessing.active_children() == []


def test_a_stop_ends_the_running_scenario_and_starts_no_other() -> None:
    names = ["port-deleted-during-attach", "port-deleted-during-boot"]
    heard: list[Tally] = []
    reports = list(explore_many(names, ExploreOptions(exhaustive=True, crashes=True), jobs=1,
                                progress=heard.append, stop=lambda: len(heard) >= 3))
    (report,) = reports  # the second never started
    assert report.scenario == names[0] and report.schedules + report.pruned == 3
    assert report.interrupted and not report.complete and report.as_dict()["interrupted"] is True
    assert "  INCOMPLETE: interrupted after" in "\n".join(report.summary_lines())


def test_a_scenario_stopped_before_its_first_schedule_counts_as_not_started() -> None:
    answers = iter([False])  # go on when asked whether to start it; stop when asked before its first schedule
    assert list(explore_many(["port-deleted-during-attach"], ExploreOptions(), jobs=1,
                             stop=lambda: next(answers, True))) == []
