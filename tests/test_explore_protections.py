"""Every protection shown alone (issue 17 item 4).

Two layers guard seed 000's invariant (compute detaching a node's VIFs from
the node's own list, and the node's tear-down doing the same): each scenario
switches one off with a fault rule, the other must hold, and a mistake
planted in the layer left on turns it red. Each reconciler has a scenario
that plants its disagreement out of band and expects its mend: explored
exhaustively, crashes included, it is clean with the mend reported, and a
reconciler that does nothing, or that takes its locks out of order, turns it red.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import tether.cloud
from tether.domain.compute import Instance
from tether.emulation import Emulation, emulate
from tether.emulation.stale_vif_on_terminate import leave_vifs_on_teardown
from tether.reconcile.controller import RECONCILERS
from tether.reconcile.nodes import StaleVifs
from tether.runtime.faults import FaultRule, FaultRuleError
from tether.services.compute.release import Release
from tether.sim.explore import ExploreOptions, Trace, explore, replay
from tether.sim.explore.report import Exploration, Finding
from tether.sim.scenarios import protections
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import run_scenario

COMPUTE_ALONE = protections.COMPUTE_DETACH_ALONE
TEARDOWN_ALONE = protections.TEARDOWN_DETACH_ALONE
PLANTED = sorted(protections.RECONCILER_OF)


def test_a_protection_is_switched_off_by_name_and_only_a_protection() -> None:
    rule = FaultRule.parse("baremetal.teardown.detach_vifs=off")
    assert (rule.point, rule.action) == ("baremetal.teardown.detach_vifs", "off")
    with pytest.raises(FaultRuleError, match="Unknown protection"):
        FaultRule.parse("compute.delete.before_unplug=off")
    with pytest.raises(FaultRuleError, match="Unknown checkpoint"):
        FaultRule.parse("baremetal.teardown.detach_vifs=crash")


def test_every_layer_and_every_reconciler_has_its_scenario() -> None:
    assert {SCENARIOS[COMPUTE_ALONE].protections_off, SCENARIOS[TEARDOWN_ALONE].protections_off} == {
        ("baremetal.teardown.detach_vifs",), ("compute.delete.detach_node_vifs",)}
    assert set(protections.RECONCILER_OF.values()) == {reconciler.invariant for reconciler in RECONCILERS}
    for name in PLANTED:
        assert SCENARIOS[name] is next(s for s in protections.PLANTED if s.name == name)


@pytest.mark.parametrize("name", [COMPUTE_ALONE, TEARDOWN_ALONE])
async def test_each_layer_holds_alone(name: str) -> None:
    report = await explore(SCENARIOS[name], ExploreOptions(crashes=True))
    assert report.clean and report.complete, sorted(report.violations)
    assert not report.mended


async def test_with_both_layers_off_the_race_leaves_a_vif_behind() -> None:
    both = replace(SCENARIOS[COMPUTE_ALONE], name="both-layers-off",
                   protections_off=("baremetal.teardown.detach_vifs", "compute.delete.detach_node_vifs"))
    result = await run_scenario(both)
    assert not result.passed
    # seed 000's symptom: the VIF left on the node takes its only NIC, so the next boot there fails
    found = {v.invariant for v in result.violations} | {v.invariant for v in result.unexpected_mends}
    assert "stale-vif" in found or any("server2 should be ACTIVE" in unmet for unmet in result.unmet), (
        found, result.unmet)


@pytest.fixture
def compute_detaching_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake in compute's layer: a delete that tears the node down without detaching its VIFs."""
    async def unprovision_only(release: Release, instance: Instance, unplug_point: str | None) -> None:
        for node in await release.nodes_of(instance):
            await release.rt.checkpoint("compute.delete.before_node_teardown")
            await release.unprovision(instance, node)

    def planted(bugs: object = ()) -> Emulation:
        emulation = emulate(bugs)  # type: ignore[arg-type]
        return replace(emulation, compute=replace(emulation.compute, release_nodes=unprovision_only))

    monkeypatch.setattr(tether.cloud, "emulate", planted)


@pytest.fixture
def teardown_detaching_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake in the node's layer: a tear-down that leaves the node's VIFs."""
    def planted(bugs: object = ()) -> Emulation:
        emulation = emulate(bugs)  # type: ignore[arg-type]
        baremetal = replace(emulation.baremetal, detach_vifs_on_teardown=leave_vifs_on_teardown)
        return replace(emulation, baremetal=baremetal)

    monkeypatch.setattr(tether.cloud, "emulate", planted)


def _vif_left(report: Exploration) -> Finding | None:
    """The finding that shows a VIF left on the node: stale-vif, or the next boot there failing for it."""
    for name, finding in sorted(report.violations.items()):
        if name.endswith("stale-vif") or "server2 should be ACTIVE" in finding.evidence:
            return finding
    return None


@pytest.mark.parametrize(("name", "mistake"), [(COMPUTE_ALONE, "compute_detaching_nothing"),
                                              (TEARDOWN_ALONE, "teardown_detaching_nothing")])
async def test_a_mistake_in_the_layer_left_on_turns_its_scenario_red(
        name: str, mistake: str, request: pytest.FixtureRequest) -> None:
    """With the other layer off, a mistake in the layer the scenario leaves on can no longer hide."""
    request.getfixturevalue(mistake)
    scenario = SCENARIOS[name]
    report = await explore(scenario, ExploreOptions(max_schedules=5))
    finding = _vif_left(report)
    assert finding is not None, sorted(report.violations)
    replayed = await replay(scenario, Trace.parse(finding.trace))
    assert (finding.invariant, finding.evidence) in replayed.violations


@pytest.mark.parametrize("name", PLANTED)
async def test_each_reconciler_mends_what_is_planted_out_of_band(name: str) -> None:
    report = await explore(SCENARIOS[name], ExploreOptions(crashes=True))
    assert report.clean and report.complete, sorted(report.violations)
    assert protections.RECONCILER_OF[name] in report.mended  # the reconciler ran, and was expected to


@pytest.mark.parametrize("name", PLANTED)
async def test_a_reconciler_that_does_nothing_turns_its_scenario_red(name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    invariant = protections.RECONCILER_OF[name]
    (reconciler,) = [kind for kind in RECONCILERS if kind.invariant == invariant]

    async def does_nothing(self: object, violation: object) -> bool:
        return False

    monkeypatch.setattr(reconciler, "mend", does_nothing)
    report = await explore(SCENARIOS[name], ExploreOptions())
    assert invariant in report.violations, sorted(report.violations)
    finding = report.violations[invariant]
    replayed = await replay(SCENARIOS[name], Trace.parse(finding.trace))
    assert invariant in {found for found, _ in replayed.violations}


async def test_a_reconciler_that_takes_the_node_lock_before_the_instance_lock_turns_red(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mend = StaleVifs.mend

    async def node_first(self: StaleVifs, violation: object) -> bool:
        locks = self.cloud.rt.locks
        async with locks.hold("node", violation.resources["node"]):  # type: ignore[attr-defined]
            return await mend(self, violation)  # type: ignore[arg-type]

    monkeypatch.setattr(StaleVifs, "mend", node_first)
    report = await explore(SCENARIOS["port-deleted-event-lost"], ExploreOptions())
    assert not report.clean
    shown = " ".join(finding.evidence for finding in report.violations.values())
    assert "taken while holding node lock" in shown, shown
