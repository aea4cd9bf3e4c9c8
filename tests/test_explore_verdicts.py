"""What fails a schedule: an invariant, an unmet expectation, and a mend the scenario does not expect.

The reconcilers are the backstop. A primary path that leaves something for
them to mend is broken even when the end state is clean, so each test here
plants such a mistake (an upstream step put in place of Tether's, with the
reconciler that would hide it left on) and shows that the explorer and the
scenario run turn red, and that ``allow_mended`` is what lets it pass.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tether.cloud
from tether.emulation import mac_kept_on_unbind, zombie_interface_on_attach_race
from tether.seeding import DemoShape
from tether.sim.explore import ExploreOptions, Trace, explore, replay
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.model import ExpectedMend, Scenario, Timed
from tether.sim.scenarios.runner import run_scenario

ZOMBIE = "zombie-interface-on-attach-race"


@pytest.fixture
def zombie_step_with_its_reconciler_on(monkeypatch: pytest.MonkeyPatch) -> str:
    """The planted mistake: upstream's attach and port-deleted handling, and the reconciler still mending."""
    monkeypatch.setattr(zombie_interface_on_attach_race, "SILENCED", frozenset())
    return ZOMBIE


async def test_a_mend_fails_the_schedule_though_the_end_state_is_clean(zombie_step_with_its_reconciler_on: str) -> None:
    scenario = SCENARIOS["port-deleted-during-attach"]
    bugs = (zombie_step_with_its_reconciler_on,)
    report = await explore(scenario, ExploreOptions(bugs=bugs))
    # the reconciler leaves no zombie and the expectations hold: the mend tells (and the attach's
    # 200 for a port deleted during it, which the replies' checker judges apart)
    assert set(report.violations) == {"mended:zombie-interface", "inconsistent-reply"}, sorted(report.violations)
    assert "zombie-interface" in report.mended
    finding = report.violations["mended:zombie-interface"]
    assert not finding.crash
    replayed = await replay(scenario, Trace.parse(finding.trace), bugs)
    assert ("mended:zombie-interface", finding.evidence) in replayed.violations
    allowed = await explore(scenario, ExploreOptions(bugs=bugs, allow_mended=True))
    assert set(allowed.violations) == {"inconsistent-reply"} and "zombie-interface" in allowed.mended


async def test_a_scenario_run_fails_on_a_mend_unless_mends_are_allowed(zombie_step_with_its_reconciler_on: str) -> None:
    scenario = SCENARIOS["port-deleted-during-attach"]
    result = await run_scenario(scenario, bugs=[zombie_step_with_its_reconciler_on])
    assert result.violations == [] and result.unmet == []
    assert not result.passed
    assert [v.invariant for v in result.unexpected_mends] == ["zombie-interface"]
    allowed = await run_scenario(scenario, bugs=[zombie_step_with_its_reconciler_on], allow_mended=True)
    assert allowed.mended and not allowed.unexpected_mends
    # what still fails it are the false replies (the attach's 200; the port delete that left a device), not the mend
    assert "attach" in [v.resources["operation"] for v in allowed.inconsistent_replies]


async def test_seed_001s_mac_reset_broken_is_red_though_a_reconciler_resets_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mac_kept_on_unbind, "SILENCED", frozenset())
    report = await explore(SCENARIOS["reuse-precreated-port-on-baremetal"],
                           ExploreOptions(bugs=("mac-kept-on-unbind",)))
    assert "mended:mac-conflict" in report.violations, sorted(report.violations)


async def test_what_the_reconcilers_mend_after_a_crash_is_a_failure_of_recovery(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def forgets_its_intents(self: tether.cloud.Cloud) -> None:
        """The planted mistake: a restart that resumes nothing."""

    monkeypatch.setattr(tether.cloud.Cloud, "recover", forgets_its_intents)
    report = await explore(SCENARIOS["port-deleted-during-attach"], ExploreOptions(crashes=True))
    unrecovered = {name for name in report.violations if name.startswith("unrecovered:")}
    assert unrecovered, sorted(report.violations)
    assert all(report.violations[name].crash for name in unrecovered)
    assert not any(name.startswith("mended:") for name in report.violations)  # no crash, nothing to mend


async def _unmet_when_detached(env: Env) -> list[str]:
    record = await env.cloud.compute.server_record(env.ctx, env.id("myvm"))
    if env.id("port-a") not in {vif.port_id for vif in record.vifs}:
        return ["port-a should still be attached"]
    return []


async def _vm_with_port_a(env: Env) -> None:
    await env.boot("myvm", flavor="m1.small")
    await env.create_port("port-a")
    await env.attach_port("myvm", "port-a")


async def test_an_unmet_expectation_fails_the_schedule_and_replays() -> None:
    # A planted expectation the operation breaks: the explorer judges it, as the scenario run does.
    scenario = Scenario(
        name="detach-races-attach-check", seed="-", summary="a detach, and a look that expects the port attached",
        shape=DemoShape(nodes=0, hypervisors=1), prepare=_vm_with_port_a,
        timeline=(Timed(0.0, "user", lambda env: env.detach_port("myvm", "port-a"), ("detach",)),),
        expect=_unmet_when_detached)
    report = await explore(scenario, ExploreOptions())
    assert set(report.violations) == {"unmet-expectation"}
    finding = report.violations["unmet-expectation"]
    assert finding.evidence == "port-a should still be attached"
    replayed = await replay(scenario, Trace.parse(finding.trace))
    assert replayed.violations == [("unmet-expectation", "port-a should still be attached")]


async def _unplug_behind_computes_back(env: Env) -> None:
    hypervisor = env.cloud.world.hypervisor
    (device,) = [d for d in hypervisor.interfaces(instance_uuid=env.id("myvm")) if d.port_id == env.id("port-a")]
    hypervisor.unplug(device.host, device.instance_uuid, device.port_id)


def _drifted_guest(expected: tuple[ExpectedMend, ...]) -> Scenario:
    return Scenario(
        name="guest-device-unplugged-out-of-band", seed="004",
        summary="the hypervisor loses a guest device behind compute's back",
        shape=DemoShape(nodes=0, hypervisors=1), prepare=_vm_with_port_a,
        timeline=(Timed(0.0, "hypervisor", _unplug_behind_computes_back),),
        expect=_nothing, expected_mends=expected)


async def _nothing(env: Env) -> list[str]:
    return []


async def test_a_mend_the_scenario_declares_does_not_fail_it() -> None:
    undeclared = await explore(_drifted_guest(()), ExploreOptions())
    assert set(undeclared.violations) == {"mended:zombie-interface"}
    declared = await explore(_drifted_guest((ExpectedMend("zombie-interface", "the device is lost out of band"),)),
                             ExploreOptions(crashes=True))
    assert declared.clean, sorted(declared.violations)
    assert "zombie-interface" in declared.mended
    only_after_crash = ExpectedMend("zombie-interface", "recovery does not look at devices", after_crash_only=True)
    not_without_a_crash = await explore(_drifted_guest((only_after_crash,)), ExploreOptions())
    assert set(not_without_a_crash.violations) == {"mended:zombie-interface"}


def _tether_with_the_mistake(*args: str) -> subprocess.CompletedProcess[str]:
    """`tether ARGS` in a process where a planted scenario's mend is not declared (the planted mistake)."""
    plant = ("import dataclasses; from tether.sim.scenarios import library as l; "
             f"s = l.SCENARIOS[{LOST!r}]; l.SCENARIOS[s.name] = dataclasses.replace(s, expected_mends=()); "
             "from tether.cli import app; app(prog_name='tether')")
    return subprocess.run([sys.executable, "-c", plant, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})


LOST = "guest-device-lost-out-of-band"  # the hypervisor loses a device behind compute's back


@pytest.mark.parametrize("command", [("scenario", "run"), ("explore",)])
def test_the_cli_fails_on_a_mend_and_allow_mended_lets_it_pass(command: tuple[str, ...]) -> None:
    args = (*command, LOST)
    failed = _tether_with_the_mistake(*args)
    assert failed.returncode == 3, (failed.stdout, failed.stderr)
    assert "MENDED" in failed.stdout or "mended:zombie-interface" in failed.stdout, failed.stdout
    allowed = _tether_with_the_mistake(*args, "--allow-mended")
    assert allowed.returncode == 0, (allowed.stdout, allowed.stderr)
    assert "zombie-interface" in allowed.stdout
