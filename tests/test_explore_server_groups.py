"""The explorer on the server-group race: anti-affinity members booting at once never share a host."""

from __future__ import annotations

from dataclasses import replace

from tether.sim.explore import ExploreOptions, explore
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.model import Timed


async def test_anti_affinity_boots_racing_each_other_land_apart_in_every_schedule_explored() -> None:
    report = await explore(SCENARIOS["anti-affinity-boot-races-boot"],
                           ExploreOptions(exhaustive=True, max_schedules=40))
    assert report.schedules >= 10
    assert report.clean, [finding.as_dict() for finding in report.violations.values()]


async def _one_left_out(env: Env) -> list[str]:
    outcomes = [env.outcomes.get(name) for name in ("vm-a", "vm-b", "vm-c")]
    unmet = []
    if sorted(map(str, outcomes)) != ["ACTIVE", "ACTIVE", "ERROR"]:
        unmet.append(f"two of three members fit two hypervisors, outcomes {outcomes}")
    hosts = []
    for name, outcome in zip(("vm-a", "vm-b", "vm-c"), outcomes, strict=True):
        record = await env.cloud.compute.server_record(env.ctx, env.id(name))
        if outcome == "ACTIVE":
            hosts.append(record.instance.host)
        elif record.fault is None or not record.fault.message.startswith("No valid host was found."):
            unmet.append(f"{name} failed without NoValidHost: {record.fault}")
    if len(set(hosts)) != len(hosts):
        unmet.append(f"members share a host: {hosts}")
    return unmet


async def test_a_third_racing_member_is_the_one_that_finds_no_valid_host() -> None:
    base = SCENARIOS["anti-affinity-boot-races-boot"]
    three = replace(base, name="anti-affinity-three-boots", timeline=(
        *base.timeline,
        Timed(0.0, "user-3", lambda env: env.boot("vm-c", flavor="m1.tiny", group="spread"), ("boot",))),
        expect=_one_left_out)
    report = await explore(three, ExploreOptions(exhaustive=False, runs=15, seed=7))
    assert report.schedules == 15
    assert report.clean, [finding.as_dict() for finding in report.violations.values()]
