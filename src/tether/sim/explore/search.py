"""Ways through a scenario's schedules: all of them (reduced), or a seeded sample.

``DepthFirst`` enumerates schedules as a tree whose nodes are the states
between two steps and whose branches are the ready actors. Each schedule is
a fresh run from the seeded cloud that replays the path to the deepest node
with a branch left untried, then takes it.

The reduction is dynamic partial-order reduction with source sets
(``_Races``) and sleep sets (Godefroid, 1996), over the footprints the
runs record. A node tries a second actor only when a finished schedule
showed a step racing with (dependent on, and not ordered after) the step
taken there, and no actor tried there yet can run that race the other way. When the
search has tried actor ``u`` at a node and moves on to actor ``t``, ``u`` is
put to sleep in ``t``'s subtree as long as the steps there are independent
of ``u``'s step: any schedule that runs ``u`` next is one swap away from one
already explored. A schedule whose every ready actor sleeps is cut short
(``pruned``). Each class of equivalent schedules is run at least once, and
no two runs to the end are equivalent.

States seen before are not explored again (stateful DPOR, after Yang,
Chen, Gopalakrishnan and Kirby, 2008). A node is keyed by everything its
future depends on (``ExploredRun.state_key``: the store, the hardware, the
shared tables in memory, the time, and each live actor's point and the
history of what it has read). Once a node's subtree is done, its key is kept
with a *summary*: for each actor, one footprint that covers every step the
actor took in that subtree before the clock moved on. A later node with the
same key, whose sleep set holds every actor the first one's did, is cut short
(``pruned``), and the races the cut subtree would have shown against the
steps before it are found from the summary, as if each actor's summarised
steps came next. Merging an actor's steps into one can only add races, never
lose one.

``--max-switches`` bounds how often a schedule may take the turn from an
actor that could have gone on (a preemption); most real races need only one
or two. Together with the reduction it is a heuristic: a sleeping actor may
be the only way to stay within the bound.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from itertools import chain

from tether.sim.explore.footprint import Footprint, independent
from tether.sim.explore.schedule import CRASH, STOP, Move, ScheduleDiverged
from tether.sim.explore.trace import Trace


def _in_order(ready: tuple[str, ...], last: str | None) -> list[str]:
    """The actor that just ran first (no switch), then the others by name."""
    if last in ready:
        return [last, *(name for name in ready if name != last)]  # type: ignore[list-item]
    return list(ready)


@dataclass
class _Node:
    ready: tuple[str, ...]
    sleep: dict[str, Footprint]
    last: str | None  # who ran the step before this node
    switches: int  # preemptions on the way here
    chosen: str
    backtrack: set[str] = field(default_factory=set)  # actors a race says must run first here too
    done: dict[str, Footprint] = field(default_factory=dict)
    key: Hashable | None = None  # the state here, when states are cached
    epoch: int = 0
    summary: dict[str, Footprint] = field(default_factory=dict)  # per actor, its steps below, this epoch

    absorbed: set[int] = field(default_factory=set)  # ids of the footprints in the summary (kept alive elsewhere)

    def absorb(self, summary: dict[str, Footprint]) -> None:
        for actor, footprint in summary.items():
            if id(footprint) not in self.absorbed:
                self.absorbed.add(id(footprint))
                self.summary.setdefault(actor, Footprint()).absorb(footprint)


@dataclass(frozen=True)
class _Seen:
    """A state whose every schedule has been explored: what slept there, and what its subtree did."""

    sleep: frozenset[str]
    summary: dict[str, Footprint]


@dataclass
class _Cut:
    """A schedule cut short at a state seen before."""

    ready: tuple[str, ...]
    epoch: int
    summary: dict[str, Footprint]


class DepthFirst:
    """Every schedule, once per class of equivalent ones (or every single one, without reduction)."""

    def __init__(self, *, reduction: bool = True, max_switches: int | None = None,
                 state_caching: bool = True) -> None:
        self.reduction = reduction
        self.max_switches = max_switches
        # A bound on switches makes what lies below a node depend on the way there.
        self.state_caching = state_caching and reduction and max_switches is None
        self.state_of: Callable[[], tuple[Hashable, int]] | None = None  # the current node's key and epoch
        self._stack: list[_Node] = []
        self._started = False
        self._seen: dict[Hashable, _Seen] = {}
        self._cut: _Cut | None = None
        self._branch = 0  # the node where the next schedule leaves the last one's path
        self._races = _Races()
        self.shared_prefix = 0

    # ``shared_prefix``: how many of the states the next schedule starts through (the one before
    # its first step, and so on) the schedules before it have already passed through. Each
    # schedule repeats the choices of the last up to the node where it takes a new branch.

    def next_schedule(self) -> bool:
        """Whether a schedule is left to run."""
        if not self._started:
            self._started = True
            return True
        return bool(self._stack)

    def known_footprint(self, index: int) -> Footprint | None:
        """The footprint of step ``index`` of this schedule, if an earlier one took it from the same state."""
        if index < len(self._stack):
            node = self._stack[index]
            return node.done.get(node.chosen)
        return None

    def _allowed(self, node_ready: tuple[str, ...], last: str | None, switches: int, name: str) -> bool:
        if self.max_switches is None or last not in node_ready or name == last:
            return True
        return switches < self.max_switches

    def decide(self, index: int, ready: tuple[str, ...], moves: list[Move]) -> str:
        if index < len(self._stack):
            node = self._stack[index]
            if node.ready != ready:
                raise ScheduleDiverged(f"step {index}: ready {ready}, last time {node.ready}")
            return node.chosen
        last = moves[-1].actor if moves else None
        sleep: dict[str, Footprint] = {}
        switches = 0
        if self._stack:
            parent = self._stack[-1]
            switches = parent.switches + (parent.chosen != parent.last and parent.last in parent.ready)
            if self.reduction:
                taken = moves[-1].footprint
                for name, footprint in chain(parent.sleep.items(), parent.done.items()):
                    if name in ready and name != parent.chosen and independent(footprint, taken):
                        sleep[name] = footprint
        key, epoch = None, 0
        if self.state_caching and self.state_of is not None:
            key, epoch = self.state_of()
            seen = self._seen.get(key)
            if seen is not None and seen.sleep <= sleep.keys():
                self._cut = _Cut(ready, epoch, seen.summary)
                return STOP
        options = [name for name in _in_order(ready, last)
                   if name not in sleep and self._allowed(ready, last, switches, name)]
        if not options:
            return STOP
        # Without the reduction every ready actor is tried at every node; with it, only those
        # that a race found later adds (``_Races``).
        backtrack = set(options) if not self.reduction else {options[0]}
        self._stack.append(_Node(ready, sleep, last, switches, options[0], backtrack, key=key, epoch=epoch))
        return options[0]

    def finished(self, moves: list[Move]) -> None:
        """Record the branches the last schedule took and find the next one left untried."""
        cut, self._cut = self._cut, None
        if self.reduction:
            self._races.add(self._stack, moves, self._branch, cut)
        if cut is not None and self._stack and len(moves) == len(self._stack) \
                and self._stack[-1].epoch == cut.epoch:
            self._stack[-1].absorb(cut.summary)  # the seen state lies below the last node
        for depth in range(self._branch, len(self._stack)):
            node = self._stack[depth]  # the nodes this schedule reached first, or took a new branch at
            node.done[node.chosen] = moves[depth].footprint
        while self._stack:
            depth = len(self._stack) - 1
            node = self._stack[depth]
            step = moves[depth]
            if self.state_caching and step.epoch == node.epoch:
                node.absorb({step.actor: step.footprint})
            untried = [name for name in _in_order(node.ready, node.last)
                       if name in node.backtrack and name not in node.sleep and name not in node.done
                       and self._allowed(node.ready, node.last, node.switches, name)]
            if untried:
                node.chosen = untried[0]
                self.shared_prefix, self._branch = depth + 1, depth
                return
            self._stack.pop()
            if self.state_caching:
                if node.key is not None:
                    self._seen[node.key] = _Seen(frozenset(node.sleep), node.summary)
                if self._stack and self._stack[-1].epoch == node.epoch:
                    self._stack[-1].absorb(node.summary)


class _Races:
    """Dynamic partial-order reduction with source sets (Abdulla, Aronis, Jonsson, Sagonas, 2014).

    Two steps of different actors *race* when they are dependent and nothing
    else orders them. For each race, the node before the earlier step must
    also try a schedule in which the later one comes first: it needs one of
    the actors that can start that other order (the *initials* of the steps
    after the earlier one that do not depend on it, then the later step). If
    none of them is tried there yet, one is added. Happens-before is kept in
    vector clocks; a clock move orders everything before it before
    everything after it (nobody could run while the clock moved). A race with
    the step that spawned or woke the later actor cannot be reversed and is left.

    The clocks are kept along the current path: a schedule repeats the last
    one's steps up to where it branches off, and those steps' races were
    handled then, so only the steps from there on are compared.

    A schedule ``cut`` at a state seen before ends with the summary of that
    state's subtree: each actor's summarised steps are tried as the next step.
    """

    def __init__(self) -> None:
        self.clocks: list[dict[str, int]] = []  # per step: for each actor, how many of its steps happen before it
        self.prefix: list[dict[str, int]] = []  # per step: for each actor, how many of its steps ran up to it
        # per step, after it: each actor's last clock, step counts, the clock at the epoch's start,
        # the join of all clocks, the epoch
        self._after: list[tuple[dict[str, dict[str, int]], dict[str, int], dict[str, int], dict[str, int], int]] = []

    def add(self, stack: list[_Node], moves: list[Move], start: int, cut: _Cut | None) -> None:
        """Find the races of ``moves[start:]`` (the steps before are the last schedule's)."""
        clocks, prefix = self.clocks, self.prefix
        del clocks[start:], prefix[start:], self._after[start:]
        if start:
            before = self._after[start - 1]
            latest, counts, epoch_floor, everything, epoch = dict(before[0]), dict(before[1]), *before[2:]
        else:
            latest, counts, epoch_floor, everything = {}, {}, {}, {}
            epoch = moves[0].epoch if moves else 0
        for j in range(start, len(moves)):
            move = moves[j]
            if move.epoch != epoch:
                epoch, epoch_floor = move.epoch, dict(everything)
            actor = move.actor
            clock = _join(latest.get(actor, {}), epoch_floor)
            races = []
            for i in range(j - 1, -1, -1):
                earlier = moves[i]
                if earlier.epoch != move.epoch:
                    break  # an earlier epoch: everything from here back happens before
                if earlier.actor == actor or independent(earlier.footprint, move.footprint):
                    continue
                if clock.get(earlier.actor, 0) < clocks[i][earlier.actor]:
                    races.append(i)  # not ordered before this step by anything else
                clock = _join(clock, clocks[i])
            counts[actor] = counts.get(actor, 0) + 1
            clock[actor] = counts[actor]
            clocks.append(clock)
            prefix.append(dict(counts))
            latest[actor] = clock
            everything = _join(everything, clock)
            self._after.append((dict(latest), dict(counts), epoch_floor, everything, epoch))
            for i in races:
                if i < len(stack) and not _enabled_by(i, actor, moves) and not _stutters_before(moves[i], move):
                    _reverse(stack[i], i, j, moves, clocks, prefix)
        if cut is None:
            return
        j = len(moves)
        if cut.epoch != epoch:
            epoch_floor = dict(everything)
        for actor, footprint in cut.summary.items():
            # Not the stutter rule here: the summary cannot tell which of its steps wakes a loop.
            move = Move(actor, "(seen)", cut.ready, cut.epoch, footprint)
            clock = _join(latest.get(actor, {}), epoch_floor)
            races = []
            for i in range(j - 1, -1, -1):
                earlier = moves[i]
                if earlier.epoch != cut.epoch:
                    break
                if earlier.actor == actor or independent(earlier.footprint, footprint):
                    continue
                if clock.get(earlier.actor, 0) < clocks[i][earlier.actor]:
                    races.append(i)
                clock = _join(clock, clocks[i])
            clock[actor] = counts.get(actor, 0) + 1
            extended = [*moves, move]
            for i in races:
                if i < len(stack) and not _enabled_by(i, actor, extended):
                    _reverse(stack[i], i, j, extended, [*clocks, clock], prefix)


def _stutters_before(earlier: Move, later: Move) -> bool:
    """Whether ``earlier`` is a memoryless loop's turn that changed nothing and ``later`` wakes its loop.

    The order with ``later`` first needs no schedule of its own: in this one,
    ``later`` wakes the loop, whose next turn reads what ``later`` left, as
    the turn would have had it come second; the turn itself left no trace.
    A race with the turn second is reversed as usual: before the step, the
    turn may see what makes its loop go on.
    """
    key = earlier.footprint.stutter
    return key is not None and later.footprint.notifies(key)


def _enabled_by(i: int, actor: str, moves: list[Move]) -> bool:
    """Whether step ``i`` made ``actor`` ready (spawned or woke it): then no order puts the actor first."""
    return actor not in moves[i].ready and actor in moves[i + 1].ready


def _reverse(node: _Node, i: int, j: int, moves: list[Move], clocks: list[dict[str, int]],
             prefix: list[dict[str, int]]) -> None:
    """Make sure the node before step ``i`` tries an order in which step ``j`` comes first."""
    first = moves[i].actor
    own = clocks[i][first]
    # the steps between that do not happen after step i, then step j
    between = [t for t in range(i + 1, j) if clocks[t].get(first, 0) < own]
    starts: dict[str, int] = {}
    for t in [*between, j]:
        starts.setdefault(moves[t].actor, t)
    initials = []
    for actor, t in starts.items():
        if t == j:
            preceded = any(moves[u].actor != actor and clocks[j].get(moves[u].actor, 0) >= clocks[u][moves[u].actor]
                           for u in between)
        else:
            # a step of another actor after i that happens before t cannot happen after i (t does
            # not), so it lies between: t is an initial only if there is none
            preceded = any(count > prefix[i].get(other, 0) for other, count in clocks[t].items() if other != actor)
        if not preceded:
            initials.append(actor)
    candidates = [actor for actor in initials if actor in node.ready]
    if not candidates:
        node.backtrack |= set(node.ready)  # cannot tell which actor leads there: try them all
        return
    if any(actor in node.backtrack or actor in node.done for actor in candidates):
        return
    later = moves[j].actor
    node.backtrack.add(later if later in candidates else sorted(candidates)[0])


def _join(first: dict[str, int], second: dict[str, int]) -> dict[str, int]:
    if not second:
        return dict(first)
    joined = dict(first)
    for actor, count in second.items():
        if joined.get(actor, 0) < count:
            joined[actor] = count
    return joined


class RandomWalk:
    """``runs`` schedules, each choice drawn from a stream seeded by ``seed`` and the run's number."""

    def __init__(self, *, runs: int, seed: int, max_switches: int | None = None) -> None:
        self.runs = runs
        self.seed = seed
        self.max_switches = max_switches
        self._run = 0
        self._rng = random.Random()
        self._switches = 0

    def next_schedule(self) -> bool:
        if self._run >= self.runs:
            return False
        self._rng = random.Random(f"{self.seed}/{self._run}")
        self._switches = 0
        self._run += 1
        return True

    def decide(self, index: int, ready: tuple[str, ...], moves: list[Move]) -> str:
        last = moves[-1].actor if moves else None
        if last in ready and self.max_switches is not None and self._switches >= self.max_switches:
            return last  # type: ignore[return-value]
        choice = self._rng.choice(ready)
        if last in ready and choice != last:
            self._switches += 1
        return choice

    def finished(self, moves: list[Move]) -> None:
        pass


class Replay:
    """One given schedule, step by step; any difference from it is an error, not a new schedule."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._done = False

    def next_schedule(self) -> bool:
        if self._done:
            return False
        self._done = True
        return True

    def decide(self, index: int, ready: tuple[str, ...], moves: list[Move]) -> str:
        if moves:
            self._check(len(moves) - 1, moves[-1])
        if index < len(self.trace.steps):
            actor, _ = self.trace.steps[index]
            if actor not in ready:
                raise ScheduleDiverged(
                    f"step {index}: {actor!r} is not ready (ready: {', '.join(ready)}); "
                    "the trace is from another scenario, bug set or version")
            return actor
        if self.trace.crash:
            return CRASH
        last = moves[-1].actor if moves else None
        return _in_order(ready, last)[0]

    def _check(self, index: int, move: Move) -> None:
        if index < len(self.trace.steps) and self.trace.steps[index] != (move.actor, move.point):
            actor, point = self.trace.steps[index]
            raise ScheduleDiverged(f"step {index}: the trace has {actor}@{point}, the run {move.token}")

    def finished(self, moves: list[Move]) -> None:
        for index, move in enumerate(moves[: len(self.trace.steps)]):
            self._check(index, move)
