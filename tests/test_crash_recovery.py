"""Design rule 5: a crash at any checkpoint a scenario passes, then a restart on the same store.

For every scenario, a first run records which named checkpoints its
operations pass; then the scenario is run once per checkpoint with a
``crash`` rule there. After recovery and the reconcilers, no invariant may be
violated and nothing may be left in a transient state.
"""

from __future__ import annotations

import pytest

from tether.runtime.bugs import Bugs
from tether.runtime.checkpoints import is_checkpoint
from tether.runtime.faults import FaultPlan
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import ScenarioRun, fresh_database


async def checkpoints_passed(name: str) -> list[str]:
    scenario = SCENARIOS[name]
    async with fresh_database(None) as database:
        result = await ScenarioRun(scenario, database, bugs=Bugs(),
                                   faults=FaultPlan()).run()
    assert result.passed
    points = {entry.split("@", 1)[1] for entry in result.trace}
    return sorted(p for p in points if is_checkpoint(p) and not p.startswith(("lock.", "task.")))


# A scenario that plants a disagreement out of band passes no checkpoint; the explorer crashes it instead.
@pytest.mark.parametrize("name", sorted(n for n, s in SCENARIOS.items() if "out-of-band" not in s.tags))
async def test_a_crash_at_every_checkpoint_recovers_cleanly(name: str, database) -> None:
    scenario = SCENARIOS[name]
    points = await checkpoints_passed(name)
    assert points, "the scenario passes no checkpoint"
    crashed = []
    for point in points:
        plan = FaultPlan.parse([f"{point}=crash*1"])
        async with fresh_database(database.url if not database.is_sqlite else None) as store:
            result = await ScenarioRun(scenario, store, bugs=Bugs(), faults=plan).run()
        if result.crashed_at:
            crashed.append(point)
        assert result.errors == [], (point, result.errors)
        assert result.violations == [], (point, [v.evidence for v in result.violations])
        assert result.leftovers == [], (point, result.leftovers)
        # Recovery itself must put things right; the reconcilers are only the backstop.
        assert result.unexpected_mends == [], (point, [v.evidence for v in result.unexpected_mends])
    assert crashed, f"no crash rule fired in {name}"
