"""Replies judged: every operation's answer is checked against the history of states (issue 17 item 2).

The checker is pure (``domain.replies``); the scenario runner, the explorer
and the chaos runs record the calls, the replies with the state each was
given in, and the end state. A planted mistake that answers success for an
attach whose port was deleted during it leaves a clean end state (it undoes
its plug), so only the reply can tell: the explorer must turn red on it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import tether.cloud
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain import replies as rp
from tether.domain.baremetal import Node
from tether.domain.compute import GuestInterface, Instance, VifEntry
from tether.domain.invariants import Snapshot
from tether.domain.network import Port
from tether.emulation import Emulation, emulate
from tether.services.compute import network_info
from tether.services.compute.attach import Attach
from tether.services.compute.recovery import Recovery
from tether.sim.explore import ExploreOptions, Trace, explore, replay
from tether.sim.scenarios.library import SCENARIOS
from tether.sim.scenarios.runner import run_scenario
from tether.store import repos


def _instance(uuid: str = "s-1", **fields: object) -> Instance:
    values: dict[str, object] = {"name": "vm", "project_id": "p", "user_id": "u", "flavor_id": "f",
                                 "image_id": "img", "vm_state": vm.ACTIVE, "host": "hv-1"}
    values.update(fields)
    return Instance(uuid=uuid, **values)  # type: ignore[arg-type]


def _port(ident: str = "p-1", device_id: str = "") -> Port:
    return Port(id=ident, name=ident, project_id="p", network_id="net", mac_address="fa:16:3e:00:00:01",
                device_id=device_id, device_owner="compute:nova" if device_id else "")


def _attached() -> Snapshot:
    return Snapshot(now=0.0, instances=[_instance()], ports=[_port(device_id="s-1")],
                    vifs=[VifEntry("s-1", "p-1", "net", "fa:16:3e:00:00:01")],
                    guest_devices=[GuestInterface("hv-1", "s-1", "tap0", "fa:16:3e:00:00:01", "p-1")])


def _detached() -> Snapshot:
    return Snapshot(now=0.0, instances=[_instance()], ports=[_port()])


ATTACH = rp.Call(0, "user", rp.ATTACH, server="s-1", port="p-1")


def test_an_attach_that_answered_success_must_have_attached() -> None:
    assert rp.check_replies([ATTACH, rp.Reply(ATTACH, True, "ok", rp.facts_of(_attached()))]) == []
    (lie,) = rp.check_replies([ATTACH, rp.Reply(ATTACH, True, "ok", rp.facts_of(_detached()))])
    assert lie.invariant == rp.INVARIANT and lie.resources == {"operation": "attach", "server": "s-1", "port": "p-1"}
    assert "was not attached" in lie.evidence and "bound to nothing" in lie.evidence
    # a concurrent port delete does not excuse it: the attach answered in that very state
    delete = rp.Call(1, "user-2", rp.DELETE_PORT, port="p-1")
    assert rp.check_replies([ATTACH, delete, rp.Reply(ATTACH, True, "ok", rp.facts_of(_detached()))])
    # an attach that failed claims nothing
    assert rp.check_replies([ATTACH, rp.Reply(ATTACH, False, "PortNotFound: ...")]) == []


def test_an_attached_interface_stays_until_a_later_operation_removes_it() -> None:
    answered = [ATTACH, rp.Reply(ATTACH, True, "ok", rp.facts_of(_attached()))]
    (lie,) = rp.check_replies([*answered, rp.Observed(rp.facts_of(_detached()))])
    assert "no later operation removed it" in lie.evidence
    for remover in (rp.Call(2, "user-2", rp.DETACH, server="s-1", port="p-1"),
                    rp.Call(2, "user-2", rp.DELETE_PORT, port="p-1"),
                    rp.Call(2, "user-2", rp.DELETE_SERVER, server="s-1")):
        assert rp.check_replies([*answered, remover, rp.Observed(rp.facts_of(_detached()))]) == []
    # a port delete that answered before the attach was invoked does not excuse it; one still under way does
    early = rp.Call(-1, "user-2", rp.DELETE_PORT, port="p-1")
    assert rp.check_replies([early, rp.Reply(early, False, "PortInUse"), *answered,
                             rp.Observed(rp.facts_of(_detached()))])
    assert rp.check_replies([early, *answered, rp.Observed(rp.facts_of(_detached()))]) == []
    # a detach of another port of the server does not remove this one
    other = rp.Call(2, "user-2", rp.DETACH, server="s-2", port="p-9")
    assert rp.check_replies([*answered, other, rp.Observed(rp.facts_of(_detached()))])


def test_a_delete_that_succeeded_leaves_nothing_behind() -> None:
    delete = rp.Call(0, "user", rp.DELETE_PORT, port="p-1")
    gone = Snapshot(now=0.0)
    answered = [delete, rp.Reply(delete, True, "ok", rp.facts_of(gone))]
    assert rp.check_replies([*answered, rp.Observed(rp.facts_of(gone))]) == []
    (lie,) = rp.check_replies([delete, rp.Reply(delete, True, "ok", rp.facts_of(_attached()))])
    assert "still existed" in lie.evidence
    # the guest device of a deleted port, still there at the end
    zombie = Snapshot(now=0.0, instances=[_instance()],
                      guest_devices=[GuestInterface("hv-1", "s-1", "tap0", "fa:16:3e:00:00:01", "p-1")])
    (lie,) = rp.check_replies([delete, rp.Reply(delete, True, "ok", rp.facts_of(gone)),
                               rp.Observed(rp.facts_of(zombie))])
    assert "guest device tap0" in lie.evidence
    look = rp.Call(1, "user", rp.SHOW_SERVER, server="s-1")
    left = Snapshot(now=0.0, ports=[_port(device_id="s-1")])
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE, rp.facts_of(left))])
    assert "port p-1 is bound to it" in lie.evidence
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE, rp.facts_of(gone)), rp.Observed(rp.facts_of(left))])
    assert "the end state" in lie.evidence


def test_a_boot_answered_active_had_its_ports_and_its_node() -> None:
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1", for_boot=True)
    assert rp.check_replies([look, rp.Reply(look, True, "ACTIVE", rp.facts_of(_attached()))]) == []
    (lie,) = rp.check_replies([look, rp.Reply(look, True, "ACTIVE", rp.facts_of(
        Snapshot(now=0.0, instances=[_instance()])))])
    assert "it has no port" in lie.evidence
    # its port deleted meanwhile (as port-deleted-during-boot does), it may have none
    delete = rp.Call(1, "operator", rp.DELETE_PORT, port="p-1")
    assert rp.check_replies([look, delete, rp.Reply(look, True, "ACTIVE", rp.facts_of(
        Snapshot(now=0.0, instances=[_instance()])))]) == []
    metal = _instance(node="n-1", host="ironic", flavor_id="bm", is_baremetal=True)
    bound = _port(device_id="s-1")
    node = Node(uuid="n-1", name="node-1", driver="fake", provision_state=bms.AVAILABLE)
    snap = Snapshot(now=0.0, instances=[metal], ports=[bound], nodes=[node],
                    vifs=[VifEntry("s-1", "p-1", "net", "fa:16:3e:00:00:01")])
    (lie,) = rp.check_replies([look, rp.Reply(look, True, "ACTIVE", rp.facts_of(snap))])
    assert "its node n-1 is not naming it" in lie.evidence
    # an operator undeploying that node meanwhile excuses the node (not the ports)
    undeploy = rp.Call(1, "operator", rp.CHANGE_NODE, node="n-1")
    (still,) = rp.check_replies([look, undeploy, rp.Reply(look, True, "ACTIVE", rp.facts_of(snap))])
    assert "node" not in still.evidence.split("but", 1)[1] and "p-1 is not attached" in still.evidence


async def test_a_correct_build_runs_a_scenario_with_every_reply_recorded_and_consistent() -> None:
    result = await run_scenario(SCENARIOS["interface-attach-detach-port-delete"])
    assert result.passed and result.inconsistent_replies == []


@pytest.fixture
def attach_that_answers_200_for_a_deleted_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: the attach notices its port was deleted, undoes its plug, and answers success."""
    async def plug_then_pretend(attach: Attach, instance: Instance, port: Port, preserve: bool,
                                tag: str | None) -> VifEntry:
        await attach.rt.checkpoint("compute.attach_interface.before_driver_attach")
        await attach.plugging.plug(instance, port)
        await attach.rt.checkpoint("compute.attach_interface.before_cache_update")
        current = await attach.network.find_port(port.id)
        if current is None or current.device_id != instance.uuid:
            await attach.plugging.unplug(instance, port.id)
            await attach.ownership.give_back(port)
            return VifEntry(instance.uuid, port.id, port.network_id, port.mac_address)  # the lie
        async with attach.store.begin() as conn:
            return await network_info.add_vif(conn, instance.uuid, current, preserve, tag)

    def planted(bugs: object = ()) -> Emulation:
        emulation = emulate(bugs)  # type: ignore[arg-type]
        return replace(emulation, compute=replace(emulation.compute, plug_and_record=plug_then_pretend))

    monkeypatch.setattr(tether.cloud, "emulate", planted)


async def test_the_explorer_turns_red_on_an_attach_that_answers_200_for_a_deleted_port(
        attach_that_answers_200_for_a_deleted_port: None) -> None:
    scenario = SCENARIOS["port-deleted-during-attach"]
    report = await explore(scenario, ExploreOptions())
    # the end state is clean: the undo left nothing; only the reply was false
    assert set(report.violations) == {rp.INVARIANT}, sorted(report.violations)
    finding = report.violations[rp.INVARIANT]
    assert "answered success" in finding.evidence and "was not attached" in finding.evidence
    replayed = await replay(scenario, Trace.parse(finding.trace))
    assert (rp.INVARIANT, finding.evidence) in replayed.violations


async def test_the_scenario_run_turns_red_on_it_too(attach_that_answers_200_for_a_deleted_port: None) -> None:
    result = await run_scenario(SCENARIOS["port-deleted-during-attach"])
    assert not result.passed
    assert [v.resources["operation"] for v in result.inconsistent_replies] == ["attach"]


@pytest.fixture
def recovery_that_forgets_every_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted mistake: a restart treats every cached interface as stale, and detaches it cleanly.

    What it leaves is clean (nothing plugged, nothing bound, nothing cached), so only the replies
    given before the crash can tell that users were told of interfaces that recovery then took away.
    """
    async def forget_every_interface(self: Recovery) -> None:
        async with self.store.begin() as conn:
            live = await repos.instances.find(conn, deleted=False)
        for instance in live:
            async with self.rt.locks.hold("instance", instance.uuid):
                async with self.store.begin() as conn:
                    cached = [entry.port_id for entry in await network_info.cached_vifs(conn, instance.uuid)]
                for port_id in cached:
                    await self.plugging.unplug(instance, port_id)
                    port = await self.sync.network.find_port(port_id)
                    if port is not None and port.device_id == instance.uuid:
                        await self.sync.ownership.hand_back(port)
                    async with self.store.begin() as conn:
                        await network_info.drop_vif(conn, instance.uuid, port_id)

    monkeypatch.setattr(Recovery, "_resync_suspects", forget_every_interface)


async def test_a_correct_recovery_keeps_what_the_replies_before_the_crash_promised() -> None:
    report = await explore(SCENARIOS["interface-attach-detach-port-delete"], ExploreOptions(crashes=True))
    assert report.crash_states > 0 and not report.violations, sorted(report.violations)


async def test_the_explorer_judges_the_replies_given_before_a_crash_after_recovery(
        recovery_that_forgets_every_interface: None) -> None:
    scenario = SCENARIOS["interface-attach-detach-port-delete"]
    report = await explore(scenario, ExploreOptions(crashes=True))
    # every invariant holds after this recovery; only a promise made before the crash is broken
    assert set(report.violations) == {rp.INVARIANT}, sorted(report.violations)
    finding = report.violations[rp.INVARIANT]
    assert "attach" in finding.evidence and "crash" in finding.trace
    replayed = await replay(scenario, Trace.parse(finding.trace))
    assert (rp.INVARIANT, finding.evidence) in replayed.violations
