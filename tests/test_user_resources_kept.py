"""The invariant user-resources-kept: what a user created is deleted only at a user's request, and a port
a user brought to a server comes back unbound once the server is gone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from tether.domain import compute_states as vm
from tether.domain.compute import Instance
from tether.domain.invariants import INVARIANTS, Snapshot, check_all, user_resources_kept
from tether.domain.network import CREATED_BY_COMPUTE, Port
from tether.seeding import DemoShape
from tether.services.compute.port_ownership import PortOwnership
from tether.services.context import RequestContext
from tether.sim.explore import ExploreOptions, Trace, explore, replay
from tether.sim.scenarios.env import Env
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.model import Scenario, Timed
from tether.sim.scenarios.runner import run_scenario

# A VM with a user's port attached is deleted while another user's port is attached to it.
SCENARIO = "delete-races-interface-attach-detach"


def _port(ident: str, **fields: object) -> Port:
    return Port(id=ident, name=ident, project_id="p", network_id="net", mac_address=f"fa:16:3e:00:00:{ident[-2:]}",
                **fields)  # type: ignore[arg-type]


def test_it_is_one_of_the_invariants() -> None:
    assert INVARIANTS["user-resources-kept"] is user_resources_kept


def test_a_user_made_port_gone_without_a_request_is_a_violation_and_with_one_is_not() -> None:
    snap = Snapshot(now=0.0, ports=[_port("p-01")], network_ids={"net"}, image_ids=set(),
                    user_made={"p-01": "port", "p-02": "port", "net": "network", "img": "image"},
                    deleted_on_request={"p-02"})
    found = {(v.invariant, tuple(v.resources.items())) for v in check_all(snap)}
    assert found == {("user-resources-kept", (("image", "img"),))}


def test_a_user_port_left_bound_to_a_gone_server_is_a_violation() -> None:
    gone = Instance(uuid="i-1", name="vm", project_id="p", user_id="u", flavor_id="f", image_id="img",
                    vm_state=vm.DELETED, deleted=True)
    bound = _port("p-01", device_id="i-1", device_owner="compute:nova")
    made = _port("p-02", device_id="i-1", device_owner="compute:nova", created_by=CREATED_BY_COMPUTE)
    violations = user_resources_kept(Snapshot(now=0.0, instances=[gone], ports=[bound, made]))
    assert [v.resources for v in violations] == [{"port": "p-01", "instance": "i-1"}]
    assert "cannot be used again" in violations[0].evidence


@pytest.fixture
def release_deleting_what_the_user_brought(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: compute deletes every port of a deleted server, the user's too (rule 2)."""
    async def delete_all(self: PortOwnership, port: Port) -> None:
        await self.network.delete_port(RequestContext.internal(port.project_id), port.id)

    monkeypatch.setattr(PortOwnership, "hand_back", delete_all)


@pytest.fixture
def release_leaving_the_user_port_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: compute forgets to give back a port the user brought."""
    hand_back = PortOwnership.hand_back

    async def keep_users(self: PortOwnership, port: Port) -> None:
        if port.created_by == CREATED_BY_COMPUTE:
            await hand_back(self, port)

    monkeypatch.setattr(PortOwnership, "hand_back", keep_users)


async def test_the_explorer_turns_red_when_a_users_port_is_deleted_with_the_server(
        release_deleting_what_the_user_brought: None) -> None:
    scenario = SCENARIOS[SCENARIO]
    report = await explore(scenario, ExploreOptions(max_schedules=3))
    assert "user-resources-kept" in report.violations, sorted(report.violations)
    finding = report.violations["user-resources-kept"]
    assert "no user asked to delete it" in finding.evidence
    replayed = await replay(scenario, Trace.parse(finding.trace))
    assert "user-resources-kept" in {invariant for invariant, _ in replayed.violations}


async def test_the_scenario_turns_red_when_a_users_port_stays_bound(release_leaving_the_user_port_bound: None) -> None:
    result = await run_scenario(SCENARIOS[SCENARIO])
    assert "user-resources-kept" in {v.invariant for v in result.violations}, [v.evidence for v in result.violations]


async def test_a_port_the_user_deletes_is_no_violation() -> None:
    report = await explore(SCENARIOS["interface-attach-detach-port-delete"], ExploreOptions(max_schedules=5,
                                                                                            crashes=True))
    assert report.clean, sorted(report.violations)


def test_a_user_made_keypair_gone_without_a_request_is_a_violation() -> None:
    snap = Snapshot(now=0.0, keypair_ids={"7"}, user_made={"7": "keypair", "8": "keypair", "9": "keypair"},
                    deleted_on_request={"9"})
    assert [v.resources for v in user_resources_kept(snap)] == [{"keypair": "8"}]


async def _keypair_and_vm(env: Env) -> None:
    await env.create_keypair("mykey")
    await env.boot("myvm", flavor="m1.tiny")


async def _delete_keypair_behind_the_users_back(env: Env) -> None:
    """The planted mistake: something other than the user deletes the user's keypair."""
    await env.cloud.compute.delete_keypair(env.ctx, "mykey")


async def _expect_nothing(env: Env) -> list[str]:
    return []


def _keypair_scenario(action: Callable[[Env], Awaitable[None]]) -> Scenario:
    return Scenario(name="keypair-kept", seed="-", summary="a user's keypair, and a server deleted",
                    shape=DemoShape(nodes=0, hypervisors=1), prepare=_keypair_and_vm,
                    timeline=(Timed(0.0, "user", lambda env: env.delete_server("myvm"), ("delete",)),
                              Timed(0.0, "other", action, ("out-of-band",))),
                    expect=_expect_nothing)


async def test_a_keypair_deleted_but_by_its_user_fails_the_scenario_and_by_its_user_does_not() -> None:
    broken = await run_scenario(_keypair_scenario(_delete_keypair_behind_the_users_back))
    assert any(v.invariant == "user-resources-kept" and "keypair" in v.resources for v in broken.violations)
    asked = await run_scenario(_keypair_scenario(lambda env: env.delete_keypair("mykey")))
    assert asked.passed, [v.evidence for v in asked.violations]
