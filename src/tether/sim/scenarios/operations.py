"""The operations scenarios race, what each one touches, and which pairs must race somewhere.

Every actor of a scenario declares the operations it performs. Two
operations that can touch the same instance, port or node must run
concurrently, in some scenario, in two different actors: that is the
explorer's coverage claim, and ``tests/test_scenario_coverage.py`` checks it
against these declarations.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

# operation -> the kinds of resource it changes or depends on
OPERATIONS: dict[str, frozenset[str]] = {
    "boot": frozenset({"instance", "port", "node"}),
    "delete": frozenset({"instance", "port", "node"}),
    "attach": frozenset({"instance", "port"}),
    "detach": frozenset({"instance", "port"}),
    "port-delete": frozenset({"port"}),
    "node-undeploy": frozenset({"node"}),
    "node-delete": frozenset({"node"}),
    "node-maintenance": frozenset({"node"}),
    # not in the coverage claim, but what some seed's race needs
    "cache-refresh": frozenset({"instance"}),
    "rebuild": frozenset({"instance", "port", "node"}),
    "resize-revert": frozenset({"instance", "port"}),
    "stack-create": frozenset({"stack", "instance", "port", "node"}),
    "stack-update": frozenset({"stack", "instance", "port", "node"}),
    "stack-delete": frozenset({"stack", "instance", "port", "node"}),
    # a row, a device or an event changed or lost behind the services' backs: what a reconciler is for
    "out-of-band": frozenset({"instance", "port", "node"}),
}
CLAIMED = ("boot", "delete", "attach", "detach", "port-delete", "node-undeploy", "node-delete", "node-maintenance")


def required_pairs() -> set[frozenset[str]]:
    """Every pair of claimed operations that share a kind of resource."""
    return {frozenset(pair) for pair in combinations(CLAIMED, 2) if OPERATIONS[pair[0]] & OPERATIONS[pair[1]]}


def raced_pairs(actors: Iterable[tuple[str, ...]]) -> set[frozenset[str]]:
    """The pairs of operations that two different actors of one scenario perform concurrently."""
    pairs = set()
    for first, second in combinations(list(actors), 2):
        pairs |= {frozenset((a, b)) for a in first for b in second if a != b}
    return pairs
