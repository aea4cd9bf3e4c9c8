"""Every two operations that can touch the same instance, port or node race in some scenario.

The claim is checked from the scenarios' own declarations: each actor says
which operations it performs (``Timed.operations``).
"""

from __future__ import annotations

from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.operations import CLAIMED, OPERATIONS, raced_pairs, required_pairs


def test_every_actor_declares_known_operations() -> None:
    for scenario in SCENARIOS.values():
        for actor in scenario.timeline:
            assert actor.operations, f"{scenario.name}: actor {actor.name} declares no operation"
            unknown = set(actor.operations) - set(OPERATIONS)
            assert not unknown, f"{scenario.name}: actor {actor.name} declares {sorted(unknown)}"


def test_the_required_pairs_are_those_that_share_a_resource() -> None:
    pairs = required_pairs()
    assert frozenset(("attach", "port-delete")) in pairs  # seed 004
    assert frozenset(("boot", "node-undeploy")) in pairs  # seed 003
    assert frozenset(("port-delete", "node-undeploy")) not in pairs  # a port and a node: nothing shared
    assert len(pairs) == 19
    assert all(len(pair) == 2 and pair <= set(CLAIMED) for pair in pairs)


def test_every_required_pair_races_in_some_scenario() -> None:
    covered: dict[frozenset[str], list[str]] = {}
    for scenario in SCENARIOS.values():
        for pair in raced_pairs(actor.operations for actor in scenario.timeline):
            covered.setdefault(pair, []).append(scenario.name)
    missing = sorted(" + ".join(sorted(pair)) for pair in required_pairs() - set(covered))
    assert not missing, f"no scenario races {missing}"
