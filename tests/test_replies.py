"""The reply checker (``domain.replies``) at the edges its scenario tests do not reach.

``test_explore_replies`` shows the checker on the explorer's runs; these pin
the parts of a verdict a changed condition would get wrong: which host or node
an ACTIVE server lacks, which operations excuse a node that does not name its
server, what a call says of itself, and bare metal's VIFs counted as plugged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.equal_copies import fresh
from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain import replies as rp
from tether.domain.baremetal import TENANT_VIF_KEY, Node, NodePort
from tether.domain.compute import GuestInterface, Instance, VifEntry
from tether.domain.invariants import Snapshot
from tether.domain.network import Port

MAC = "fa:16:3e:00:00:01"



def server(uuid: str = "s-1", **fields: Any) -> Instance:
    values: dict[str, Any] = {"name": "vm", "project_id": "p", "user_id": "u", "flavor_id": "f", "image_id": "i",
                              "vm_state": vm.ACTIVE, "host": "hv-1"}
    values.update(fields)
    return Instance(uuid=uuid, **values)


def port(ident: str = "p-1", device_id: str = "") -> Port:
    return Port(id=ident, name=ident, project_id="p", network_id="net", mac_address=MAC, device_id=device_id,
                device_owner="compute:nova" if device_id else "")


def metal(node_state: str = bms.ACTIVE, names: str | None = "s-1", vif: str | None = "p-1") -> Snapshot:
    return Snapshot(now=0.0, instances=[server(is_baremetal=True, node="n-1", host="ironic")],
                    ports=[port(device_id="s-1")], vifs=[VifEntry("s-1", "p-1", "net", MAC)],
                    nodes=[Node(uuid="n-1", name="n-1", provision_state=node_state, instance_uuid=names)],
                    node_ports=[NodePort(uuid="nic", address="52:54:00:00:00:01", node_uuid="n-1",
                                         internal_info={TENANT_VIF_KEY: vif} if vif else {})])


LOOK = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1", for_boot=True)


def active(snap: Snapshot, *others: rp.Call) -> list[str]:
    return [v.evidence for v in rp.check_replies([LOOK, *others, rp.Reply(LOOK, True, "ACTIVE", rp.facts_of(snap))])]


def test_a_bare_metal_servers_vif_on_its_node_counts_as_plugged() -> None:
    facts = rp.facts_of(metal())
    assert ("s-1", "p-1") in facts.plugged and facts.attached("s-1", "p-1")
    assert active(metal()) == []
    assert rp.facts_of(metal(names=None)).plugged == frozenset()
    assert facts.port_named["p-1"] == ("node n-1 lists it as a VIF", "the network info of s-1 lists it")


def test_an_active_answer_names_the_host_or_node_the_server_lacks() -> None:
    homeless = Snapshot(now=0.0, instances=[server(host=None)])
    assert active(homeless) == ["user's show-server server s-1: answered that server s-1 is ACTIVE, but when it "
                                "answered: it has no host; it has no port"]
    nodeless = Snapshot(now=0.0, instances=[server(is_baremetal=True, node=None, host="ironic")])
    assert "it has no node;" in active(nodeless)[0]
    assert active(Snapshot(now=0.0)) == ["user's show-server server s-1: answered that server s-1 is ACTIVE, but "
                                         "when it answered: it is not live"]


def test_an_active_bare_metal_server_needs_its_node_active_and_naming_it() -> None:
    assert active(metal(bms.DEPLOYING)) == ["user's show-server server s-1: answered that server s-1 is ACTIVE, "
                                            f"but when it answered: its node n-1 is {bms.DEPLOYING}, naming it"]
    # a node state read from a store is equal to the constant, not the same object
    assert active(metal(fresh(bms.ACTIVE))) == []


def test_only_a_change_of_that_node_or_a_delete_of_that_server_excuses_its_node() -> None:
    deploying = metal(bms.DEPLOYING)
    assert active(deploying, rp.Call(1, "op", rp.CHANGE_NODE, node="n-1")) == []
    assert active(deploying, rp.Call(1, "op", rp.CHANGE_NODE, node=fresh("n-1"))) == []  # read from a store
    assert active(deploying, rp.Call(1, "op", rp.OUT_OF_BAND, node="n-1")) == []
    assert active(deploying, rp.Call(1, "user", rp.DELETE_SERVER, server="s-1")) == []
    # a delete read from a store names the server by an equal string, not the same object
    assert active(deploying, rp.Call(1, "user", rp.DELETE_SERVER, server=fresh("s-1"))) == []
    for unrelated in (rp.Call(1, "op", rp.CHANGE_NODE, node="n-0"), rp.Call(1, "op", rp.CHANGE_NODE, node="n-2"),
                      rp.Call(1, "user", rp.DELETE_SERVER, server="s-0"),
                      rp.Call(1, "user", rp.DELETE_SERVER, server="s-2"),
                      rp.Call(1, "user", rp.ATTACH, server="s-1", port="p-2", node="n-1")):
        assert active(deploying, unrelated), unrelated


def test_a_ports_binding_read_from_a_store_still_makes_it_the_servers() -> None:
    snap = Snapshot(now=0.0, instances=[server()], ports=[port(device_id=fresh("s-1"))])
    # bound but neither cached nor plugged: it is the server's, and not attached
    assert active(snap) == ["user's show-server server s-1: answered that server s-1 is ACTIVE, but when it "
                            "answered: its port p-1 is not attached (the server's network info does not list it)"]
    elsewhere = Snapshot(now=0.0, instances=[server("s-2")], ports=[port(device_id="s-0")])
    assert rp.facts_of(elsewhere).ports == {"p-1": "s-0"}


def test_a_look_at_the_server_excuses_nothing() -> None:
    snap = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")])
    other_look = rp.Call(1, "user-2", rp.SHOW_SERVER, server="s-1", port="p-1")
    assert "its port p-1 is not attached" in active(snap, other_look)[0]
    stored_look = rp.Call(1, "user-2", fresh(rp.SHOW_SERVER), server="s-1", port="p-1")  # read from a store
    assert "its port p-1 is not attached" in active(snap, stored_look)[0]
    # while a detach by the server, or a delete of the port, does
    assert active(snap, rp.Call(1, "user-2", rp.DETACH, server="s-1", port="p-1")) == []
    assert active(snap, rp.Call(1, "user-2", rp.DELETE_PORT, port="p-1")) == []
    # and so does a change of that server (a rebuild) that names it by value only
    assert active(snap, rp.Call(1, "user-2", rp.CHANGE_SERVER, server=fresh("s-1"))) == []
    for other in ("s-0", "s-2"):  # a change of another server excuses nothing
        assert active(snap, rp.Call(1, "user-2", rp.CHANGE_SERVER, server=other)), other


def test_an_attach_compares_its_operation_by_value() -> None:
    attach = rp.Call(0, "user", fresh(rp.ATTACH), server="s-1", port="p-1")
    (lie,) = rp.check_replies([attach, rp.Reply(attach, True, "ok", rp.facts_of(Snapshot(now=0.0)))])
    assert "was not attached" in lie.evidence


def test_a_call_describes_itself_by_what_it_names_and_is_a_value() -> None:
    assert rp.Call(0, "user", rp.DETACH, server="s-1", port="p-1").describe() == "user's detach server s-1 port p-1"
    assert rp.Call(0, "op", rp.CHANGE_NODE, node="n-1").describe() == "op's change-node node n-1"
    assert rp.Call(0, "user", rp.DELETE_PORT, port="p-1").describe() == "user's delete-port port p-1"
    assert rp.Call(0, "user", rp.BOOT).describe() == "user's boot"
    assert len({rp.Call(0, "user", rp.BOOT), rp.Call(0, "user", rp.BOOT)}) == 1  # histories are keyed by calls


def test_attached_needs_the_binding_the_cache_and_a_live_server_and_plugged_only_at_rest() -> None:
    both = frozenset({("s-1", "p-1")})
    live = {"s-1": (vm.ACTIVE, None, False, "hv-1")}
    assert rp.Facts(ports={"p-1": "s-1"}, cached=both, plugged=both, servers=live).attached("s-1", "p-1")
    # bound elsewhere, though cached and plugged here
    assert not rp.Facts(ports={"p-1": "s-2"}, cached=both, plugged=both, servers=live).attached("s-1", "p-1")
    # the server is gone
    assert not rp.Facts(ports={"p-1": "s-1"}, cached=both, plugged=both, servers={}).attached("s-1", "p-1")
    # a stopped server has nothing plugged, and is no less attached
    stopped = {"s-1": (vm.STOPPED, None, False, "hv-1")}
    assert rp.Facts(ports={"p-1": "s-1"}, cached=both, servers=stopped).attached("s-1", "p-1")
    assert not rp.Facts(ports={"p-1": "s-1"}, cached=both, servers=live).attached("s-1", "p-1")
    stored = {"s-1": (fresh(vm.ACTIVE), None, False, "hv-1")}  # a state read from a store is equal, not the same
    assert not rp.Facts(ports={"p-1": "s-1"}, cached=both, servers=stored).attached("s-1", "p-1")


def test_only_an_active_answer_promises_a_working_server() -> None:
    for answer in ("BUILD", "ERROR", "SHUTOFF"):
        assert rp.check_replies([LOOK, rp.Reply(LOOK, True, answer, rp.facts_of(Snapshot(now=0.0)))]) == [], answer
    assert active(Snapshot(now=0.0))  # and ACTIVE does
    # nor does any other answer claim the server is gone: a live server that answered it is no lie
    live = rp.facts_of(Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")]))
    for answer in ("ERROR", "SHUTOFF", "SUSPENDED", "BUILD"):
        assert rp.check_replies([LOOK, rp.Reply(LOOK, True, answer, live)]) == [], answer
    told = rp.Reply(LOOK, True, fresh("ACTIVE"), rp.facts_of(Snapshot(now=0.0)))
    assert rp.check_replies([LOOK, told])


def test_a_delete_of_that_server_read_from_a_store_excuses_its_missing_port() -> None:
    portless = Snapshot(now=0.0, instances=[server()])
    assert active(portless, rp.Call(1, "user", rp.DELETE_SERVER, server=fresh("s-1"))) == []
    for other in ("s-0", "s-2"):  # a delete of another server excuses nothing
        assert active(portless, rp.Call(1, "user", rp.DELETE_SERVER, server=other)), other
    bound = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")])
    assert active(bound, rp.Call(1, "user-2", rp.DELETE_PORT, port=fresh("p-1"))) == []


def test_replies_and_looks_are_values() -> None:
    reply = rp.Reply(LOOK, True, "ACTIVE")
    assert len({reply, rp.Reply(LOOK, True, "ACTIVE")}) == 1


def test_what_another_server_caches_is_not_this_ones() -> None:
    snap = Snapshot(now=0.0, instances=[server(), server("s-2")], ports=[port(device_id="s-1"), port("p-2")],
                    vifs=[VifEntry("s-1", "p-1", "net", MAC), VifEntry("s-2", "p-2", "net", MAC)],
                    guest_devices=[rp_device("s-1", "p-1")])
    assert active(snap) == []


def rp_device(instance: str, port_id: str) -> GuestInterface:
    return GuestInterface("hv-1", instance, "tap" + port_id, MAC, port_id)


def test_a_later_state_is_held_against_an_attach_read_from_a_store_but_not_against_a_look() -> None:
    attach = rp.Call(0, "user", fresh(rp.ATTACH), server="s-1", port="p-1")
    attached = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")],
                        vifs=[VifEntry("s-1", "p-1", "net", MAC)], guest_devices=[rp_device("s-1", "p-1")])
    later = rp.Observed(rp.facts_of(Snapshot(now=0.0, instances=[server()])))
    (lie,) = rp.check_replies([attach, rp.Reply(attach, True, "ok", rp.facts_of(attached)), later])
    assert "no later operation removed it" in lie.evidence
    # a look that answered ACTIVE promised nothing about later states
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1")
    assert rp.check_replies([look, rp.Reply(look, True, "ACTIVE", rp.facts_of(attached)),
                             rp.Observed(rp.facts_of(Snapshot(now=0.0)))]) == []


def test_a_server_deleted_in_its_state_is_not_live_and_a_live_one_is_named_first() -> None:
    gone = rp.facts_of(Snapshot(now=0.0, instances=[server(vm_state=fresh(vm.DELETED))]))
    assert gone.servers == {}
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1")
    left = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")])
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE, rp.facts_of(left))])
    assert lie.evidence.endswith("but when it answered: it is live; port p-1 is bound to it")
    (lie,) = rp.check_replies([look, rp.Reply(look, True, fresh(rp.GONE), rp.facts_of(left))])  # read from a store
    assert lie.evidence.endswith("but when it answered: it is live; port p-1 is bound to it")
    cached = dataclasses.replace(left, vifs=[VifEntry("s-1", "p-1", "net", MAC)])
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE, rp.facts_of(cached))])
    assert lie.evidence.endswith("but when it answered: it is live; port p-1 is bound to it; "
                                 "its network info lists port p-1")


def test_an_observed_state_is_not_changed_after_the_fact() -> None:
    observed = rp.Observed(rp.Facts())
    with pytest.raises(dataclasses.FrozenInstanceError):
        observed.label = "another"  # type: ignore[misc]


def test_a_server_answered_gone_is_named_by_no_node() -> None:
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1")
    named = Snapshot(now=0.0, nodes=[Node(uuid="n-1", name="n-1", provision_state=bms.ACTIVE, instance_uuid="s-1")])
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE, rp.facts_of(named))])
    assert lie.evidence.endswith("but when it answered: node n-1 names it")


def test_only_a_looks_answer_promises_a_server_gone_in_later_states() -> None:
    """A delete's reply acknowledges the request (the delete goes on after it): whatever its text, it
    promises nothing about later states; a look that answered DELETED does."""
    still = rp.Observed(rp.facts_of(Snapshot(now=0.0, instances=[server()])))
    delete = rp.Call(0, "user", rp.DELETE_SERVER, server="s-1")
    assert rp.check_replies([delete, rp.Reply(delete, True, rp.GONE), still]) == []
    look = rp.Call(1, "user", rp.SHOW_SERVER, server="s-1")
    (lie,) = rp.check_replies([look, rp.Reply(look, True, rp.GONE), still])
    assert lie.evidence.endswith("but in the end state: it is live")


def test_a_server_in_any_state_but_deleted_is_live() -> None:
    states = (vm.ACTIVE, vm.BUILDING, vm.ERROR, vm.STOPPED, vm.SUSPENDED, vm.RESIZED)
    snap = Snapshot(now=0.0, instances=[server(f"s-{n}", vm_state=state) for n, state in enumerate(states)]
                    + [server("s-gone", vm_state=vm.DELETED), server("s-flagged", deleted=True)])
    assert set(rp.facts_of(snap).servers) == {f"s-{n}" for n in range(len(states))}


def test_an_attach_to_a_port_bound_elsewhere_says_where() -> None:
    for elsewhere in ("s-0", "s-2", ""):
        snap = Snapshot(now=0.0, instances=[server()], ports=[port(device_id=elsewhere)],
                        vifs=[VifEntry("s-1", "p-1", "net", MAC)], guest_devices=[rp_device("s-1", "p-1")])
        attach = rp.Call(0, "user", rp.ATTACH, server="s-1", port="p-1")
        (lie,) = rp.check_replies([attach, rp.Reply(attach, True, "ok", rp.facts_of(snap))])
        assert lie.evidence.endswith(f"(the port is bound to {elsewhere or 'nothing'})"), elsewhere


def test_facts_are_not_changed_after_the_fact() -> None:
    facts = rp.facts_of(Snapshot(now=0.0, instances=[server()]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.servers = {}  # type: ignore[misc]


def test_a_look_and_a_port_delete_read_from_a_store_compare_their_operation_by_value() -> None:
    look = rp.Call(0, "user", fresh(rp.SHOW_SERVER), server="s-1")
    (lie,) = rp.check_replies([look, rp.Reply(look, True, "ACTIVE", rp.facts_of(Snapshot(now=0.0)))])
    assert lie.evidence.endswith("it is not live")
    delete = rp.Call(0, "user", fresh(rp.DELETE_PORT), port="p-1")
    (lie,) = rp.check_replies([delete, rp.Reply(delete, True, "ok", rp.facts_of(Snapshot(now=0.0, ports=[port()])))])
    assert lie.evidence.endswith("port p-1 still existed when it answered")


def test_a_look_not_made_by_a_boot_does_not_need_a_port() -> None:
    portless = rp.facts_of(Snapshot(now=0.0, instances=[server()]))
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1")
    assert rp.check_replies([look, rp.Reply(look, True, "ACTIVE", portless)]) == []
    boots = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1", for_boot=True)
    assert rp.check_replies([boots, rp.Reply(boots, True, "ACTIVE", portless)])


def test_only_a_look_that_answered_deleted_is_held_to_later_states() -> None:
    live = rp.Observed(rp.facts_of(Snapshot(now=0.0, instances=[server()])))
    look = rp.Call(0, "user", rp.SHOW_SERVER, server="s-1")
    for answer in ("ERROR", "SHUTOFF", "SUSPENDED", "VERIFY_RESIZE", "BUILD", "ACTIVE"):
        assert rp.check_replies([look, rp.Reply(look, True, answer), live]) == [], answer
    assert rp.check_replies([look, rp.Reply(look, True, rp.GONE), live])
    stored = rp.Call(0, "user", fresh(rp.SHOW_SERVER), server="s-1")  # read from a store
    assert rp.check_replies([stored, rp.Reply(stored, True, rp.GONE), live])
    assert rp.check_replies([look, rp.Reply(look, True, fresh(rp.GONE)), live])  # its answer read from a store


def test_only_a_port_delete_is_held_to_the_port_being_gone() -> None:
    """A boot given a port (``Call`` can name it; the scenarios' recorder does not yet) answered, and the
    port is the server's at the end: nothing is contradicted."""
    kept = rp.Observed(rp.facts_of(Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")],
                                            vifs=[VifEntry("s-1", "p-1", "net", MAC)])))
    for op in (rp.BOOT, rp.CHANGE_SERVER, rp.CHANGE_NODE):
        call = rp.Call(0, "user", op, server="s-1", port="p-1")
        assert rp.check_replies([call, rp.Reply(call, True, "accepted"), kept]) == [], op
    delete = rp.Call(0, "user", rp.DELETE_PORT, port="p-1")
    stored = rp.Call(0, "user", fresh(rp.DELETE_PORT), port="p-1")  # read from a store
    for call in (delete, stored):
        (lie,) = rp.check_replies([call, rp.Reply(call, True, "ok"), kept])
        assert lie.evidence.endswith("port p-1 is not gone: the port exists; the network info of s-1 lists it")


def test_a_detach_that_answered_while_its_port_still_exists_is_no_lie() -> None:
    detach = rp.Call(0, "user", rp.DETACH, server="s-1", port="p-1")
    unbound = rp.facts_of(Snapshot(now=0.0, instances=[server()], ports=[port()]))
    assert rp.check_replies([detach, rp.Reply(detach, True, "ok", unbound)]) == []


def test_the_ports_bound_to_other_servers_are_not_this_ones() -> None:
    snap = Snapshot(now=0.0, instances=[server("s-0"), server(), server("s-2")],
                    ports=[port("p-0", device_id="s-0"), port(device_id="s-1"), port("p-2", device_id="s-2")],
                    vifs=[VifEntry("s-0", "p-0", "net", MAC), VifEntry("s-1", "p-1", "net", MAC),
                          VifEntry("s-2", "p-2", "net", MAC)], guest_devices=[rp_device("s-1", "p-1")])
    assert active(snap) == []


def test_an_attach_that_is_not_plugged_or_whose_server_is_gone_says_which() -> None:
    attach = rp.Call(0, "user", rp.ATTACH, server="s-1", port="p-1")
    listed = Snapshot(now=0.0, instances=[server()], ports=[port(device_id="s-1")],
                      vifs=[VifEntry("s-1", "p-1", "net", MAC)])
    gone = dataclasses.replace(listed, instances=[])
    for snap, why in ((listed, "it is not plugged"), (gone, "the server is gone")):
        (lie,) = rp.check_replies([attach, rp.Reply(attach, True, "ok", rp.facts_of(snap))])
        assert lie.evidence.endswith(f"({why})"), why


def test_a_port_the_servers_network_info_lists_read_from_a_store_is_its_own() -> None:
    snap = Snapshot(now=0.0, instances=[server()], ports=[port()], vifs=[VifEntry(fresh("s-1"), "p-1", "net", MAC)])
    assert active(snap) == ["user's show-server server s-1: answered that server s-1 is ACTIVE, but when it "
                            "answered: its port p-1 is not attached (the port is bound to nothing)"]
