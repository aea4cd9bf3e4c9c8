"""Every scenario passes as Tether runs it, and fails the upstream way with the upstream bug.

These run the real services under the deterministic scheduler, on SQLite and
on PostgreSQL (the ``database`` fixture).
"""

from __future__ import annotations

import pytest

from tether.runtime.bugs import Bugs
from tether.runtime.faults import FaultPlan
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import ScenarioRun

SYMPTOMS = {
    "stale-vif-on-terminate": "not enough free physical ports",
    "mac-kept-on-unbind": "is in use",
    "stuck-build-on-node-teardown": ": BUILD",
    "zombie-interface-on-attach-race": "guest interface",
    "orphan-internal-ports": "and no live stack lists it",
}


async def test_heat_and_ironic_before_their_fixes_leave_the_replacement_no_usable_node(database) -> None:
    """Seed 001 whole, as its reporter saw it: heat's orphaned port keeps the NIC's MAC (ironic's half,
    which heat's bug implies), so the replacement of the failed server cannot use the node that is free."""
    result = await run("stack-replace-failed-baremetal-server", database, bugs=["orphan-internal-ports"])
    assert {"orphan-port", "mac-conflict"} <= {v.invariant for v in result.violations}
    shown = "\n".join(step["text"] for step in result.steps)
    assert "Unable to attach VIF" in shown and "stack fleet: UPDATE_FAILED" in shown, shown


async def run(name: str, database, bugs=(), faults=()):
    scenario = SCENARIOS[name]
    plan = FaultPlan.parse(list(faults))
    return await ScenarioRun(scenario, database, bugs=Bugs(bugs), faults=plan).run()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_scenario_passes_without_emulated_bugs(name: str, database) -> None:
    result = await run(name, database)
    assert result.errors == []
    assert result.violations == [], [v.evidence for v in result.violations]
    assert result.unmet == []
    assert result.leftovers == []
    assert result.passed


@pytest.mark.parametrize("name", sorted(n for n, s in SCENARIOS.items() if s.bug))
async def test_scenario_fails_the_upstream_way_with_its_bug(name: str, database) -> None:
    scenario = SCENARIOS[name]
    result = await run(name, database, bugs=[scenario.bug])
    assert not result.passed
    assert scenario.invariant in {v.invariant for v in result.violations}
    shown = "\n".join(step["text"] for step in result.steps) + "\n".join(v.evidence for v in result.violations)
    assert SYMPTOMS[scenario.bug] in shown
