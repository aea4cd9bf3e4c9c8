"""What the explorer found in Tether's own services, each kept as the schedule that showed it.

Before the fixes, each of these ended with a leak that only a reconciler
mended, or with an operation failing: an operator's undeploy or node delete
under a running bare-metal server left the server naming a node that no
longer named it, and a restart during a tear-down made the recovery resync
try to plug VIFs back onto the node the tear-down held.
"""

from __future__ import annotations

import pytest

from tether.domain import baremetal_states as bms
from tether.runtime.bugs import Bugs
from tether.runtime.faults import FaultPlan
from tether.sim.explore import Trace, replay
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.model import Scenario, Timed
from tether.sim.scenarios.runner import ScenarioRun, fresh_database

NODE = "09319e17-9c07-405c-9827-d585b9e13925"  # node-1 of every seeded bare-metal scenario


@pytest.mark.parametrize(("scenario", "trace"), [
    # the node's tear-down held its lock when the restarted control plane resynced the server
    ("delete-races-undeploy-and-node-delete",
     f"operator@task.start baremetal.teardown:{NODE}@task.start "
     f"baremetal.teardown:{NODE}@baremetal.teardown.before_vif_detach crash"),
    # the node was deleted under the server and the notice to compute died in the crash
    ("delete-races-maintenance-and-node-delete",
     "operator@task.start operator-2@task.start operator-2@baremetal.vif_detach.before_unbind crash"),
    # the undeploy's tear-down forgot the server once the control plane was back
    ("delete-races-undeploy-and-node-delete", "operator@task.start crash"),
])
async def test_found_schedule_now_recovers_without_a_reconciler(scenario: str, trace: str) -> None:
    replayed = await replay(SCENARIOS[scenario], Trace.parse(trace))
    assert replayed.trace == trace
    assert replayed.violations == []
    assert replayed.mended == []


async def _expect_lost(env: Env) -> list[str]:
    instance = await env.cloud.compute.live_instance(env.id("server1"))
    if instance is None or instance.vm_state != "error" or instance.node is not None:
        return [f"server1 should be in ERROR without a node, is {instance}"]
    # what GET /servers/{id} shows of it: the latest fault, there since the server is in ERROR
    fault = (await env.cloud.compute.server_record(env.ctx, instance.uuid)).fault
    if fault is None or env.id("node-1") not in fault.message:
        return [f"server1's fault should name the lost node: {fault and fault.message}"]
    return []


async def _undeploy(env: Env) -> None:
    await env.undeploy("node-1")
    await env.wait_node("node-1", bms.AVAILABLE)


@pytest.mark.parametrize("operator", [_undeploy, lambda env: env.delete_node("node-1")])
async def test_a_node_taken_from_under_a_running_server_ends_it_at_once(operator) -> None:  # type: ignore[no-untyped-def]
    scenario = Scenario(name="node-taken", seed="003", summary="an operator takes the node of a running server",
                        prepare=lambda env: env.boot("server1"),
                        timeline=(Timed(0.0, "operator", operator, ("node-undeploy",)),), expect=_expect_lost)
    async with fresh_database(None) as database:
        run = ScenarioRun(scenario, database, bugs=Bugs(), faults=FaultPlan())
        result = await run.run()
    assert result.unmet == [], result.unmet
    assert result.violations == [] and result.leftovers == [] and result.errors == []
    assert result.mended == [], [v.evidence for v in result.mended]  # not left to the reconciler
