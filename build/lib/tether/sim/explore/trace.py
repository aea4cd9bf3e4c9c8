"""A schedule written as one line: the checkpoints it passed, in order, and where it crashed.

Each step is ``ACTOR@POINT``: the actor that ran and the checkpoint it ran
from. A trailing ``crash`` kills the control plane after the last step.
``tether explore SCENARIO --replay TRACE`` runs exactly that schedule again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tether.sim.explore.schedule import Move

CRASH_WORD = "crash"


class TraceError(ValueError):
    """A trace that cannot be read."""


@dataclass(frozen=True)
class Trace:
    steps: tuple[tuple[str, str], ...]  # (actor, point)
    crash: bool = False

    @classmethod
    def of(cls, moves: Sequence[Move], crash: bool = False) -> Trace:
        return cls(tuple((move.actor, move.point) for move in moves), crash)

    @classmethod
    def parse(cls, text: str) -> Trace:
        words = text.split()
        crash = bool(words) and words[-1] == CRASH_WORD
        if crash:
            words = words[:-1]
        steps = []
        for word in words:
            actor, at, point = word.rpartition("@")
            if not at or not actor or not point:
                raise TraceError(f"Invalid step {word!r} in trace: expected ACTOR@POINT, or a final {CRASH_WORD!r}")
            steps.append((actor, point))
        return cls(tuple(steps), crash)

    def __str__(self) -> str:
        words = [f"{actor}@{point}" for actor, point in self.steps]
        return " ".join([*words, CRASH_WORD] if self.crash else words)
