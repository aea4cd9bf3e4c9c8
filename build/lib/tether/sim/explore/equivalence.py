"""How many interleavings one explored schedule stands for.

Two schedules are equivalent when one turns into the other by swapping
adjacent independent steps of different actors: they end in the same state
and every step behaves the same. The schedules equivalent to one run are the
orderings of its steps that keep each actor's own order, every dependent pair
in order, and every clock move in place (the clock moves on only when nobody
can run, so no step crosses one). Counting them tells how many interleavings
the reduction did not need to run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import groupby

from tether.sim.explore.footprint import independent
from tether.sim.explore.schedule import Move

STATE_CAP = 200_000  # past this many partial orderings the count is not worth its time


def interleavings(moves: Sequence[Move]) -> int | None:
    """The number of schedules equivalent to ``moves`` (itself included); None if too costly to count."""
    total = 1
    for _, group in groupby(moves, key=lambda move: move.epoch):
        count = _orderings(list(group))
        if count is None:
            return None
        total *= count
    return total


def _orderings(moves: list[Move]) -> int | None:
    actors = list(dict.fromkeys(move.actor for move in moves))
    column = {actor: index for index, actor in enumerate(actors)}
    lengths = [0] * len(actors)
    position = []
    for move in moves:
        position.append(lengths[column[move.actor]])
        lengths[column[move.actor]] += 1
    # need[actor][k]: how many steps of each actor must come before that actor's k-th step
    need: list[list[list[int]]] = [[] for _ in actors]
    for j, move in enumerate(moves):
        required = [0] * len(actors)
        for i in range(j):
            earlier = moves[i]
            if earlier.actor != move.actor and not independent(earlier.footprint, move.footprint):
                a = column[earlier.actor]
                required[a] = max(required[a], position[i] + 1)
        need[column[move.actor]].append(required)
    ways: dict[tuple[int, ...], int] = {tuple([0] * len(actors)): 1}
    seen = 0
    for _ in range(len(moves)):
        following: dict[tuple[int, ...], int] = defaultdict(int)
        for state, count in ways.items():
            for a, done in enumerate(state):
                if done == lengths[a]:
                    continue
                if all(state[b] >= wanted for b, wanted in enumerate(need[a][done])):
                    following[(*state[:a], done + 1, *state[a + 1:])] += count
        seen += len(following)
        if seen > STATE_CAP:
            return None
        ways = following
    return ways.get(tuple(lengths), 0) or None
