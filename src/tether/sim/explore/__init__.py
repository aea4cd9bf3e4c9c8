"""The race explorer: every interleaving of a scenario's operations, deterministically.

``explorer`` drives it; ``schedule`` runs one schedule from a seeded cloud and
records what each step touched (``recording``, ``store_footprint``,
``footprint``); ``search`` chooses the schedules (exhaustive with dynamic
partial-order reduction, sleep sets and states seen before, or seeded random); ``durable`` captures what a crash
leaves; ``equivalence`` counts what the reduction skipped; ``trace`` writes a
schedule as a line that ``--replay`` takes back.
"""

from tether.sim.explore.explorer import ExploreOptions, Replayed, explore, explore_many, replay
from tether.sim.explore.report import Exploration, Finding, Tally
from tether.sim.explore.trace import Trace, TraceError

__all__ = ["Exploration", "ExploreOptions", "Finding", "Replayed", "Tally", "Trace", "TraceError", "explore",
           "explore_many", "replay"]
