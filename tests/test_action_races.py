"""The server actions' races (issue 13), explored: every schedule and every crash keeps every invariant
without a reconciler's help, and the outcome the user sees is the one nova would give."""

from __future__ import annotations

import pytest

from tether.runtime.bugs import Bugs
from tether.runtime.faults import FaultPlan
from tether.sim.explore import ExploreOptions, explore
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import ScenarioRun

RACES = ["rebuild-races-port-delete", "resize-revert-races-interface-attach"]


@pytest.mark.parametrize("name", RACES)
async def test_action_races_explored_exhaustively_with_crashes_are_clean(name: str) -> None:
    report = await explore(SCENARIOS[name], ExploreOptions(exhaustive=True, crashes=True))
    assert report.complete
    assert report.schedules >= 2 and report.crash_states >= 1
    assert report.clean, [f.as_dict() for f in report.violations.values()]
    # rule 4: the port-deleted event is not skipped while an action holds the server; no reconciler mends it
    assert not report.mended, [f.as_dict() for f in report.mended.values()]


async def test_a_port_deleted_while_its_node_redeploys_leaves_no_vif(database) -> None:
    result = await ScenarioRun(SCENARIOS["rebuild-races-port-delete"], database, bugs=Bugs(()),
                               faults=FaultPlan.parse(["compute.rebuild.wait_active=sleep:5*1"])).run()
    assert result.passed, (result.violations, result.unmet, result.errors)
    shown = "\n".join(step["text"] for step in result.steps)
    assert "rebuild server1: accepted" in shown and "server server1: ACTIVE" in shown
