"""The reconcilers' own decisions, without a cloud: when StuckTransients comes back for a key, and what
ZombieInterfaces clears once the instance is gone.

tests/test_reconcilers.py plants each disagreement in a live cloud; the explorer's protection tests
mend each out-of-band scenario. Neither asks for the seconds until a node's deadline, nor for
another instance's domain left alone; these do (the oracle of ``bench/mutations.py`` for
reconcile/transients.py and reconcile/instances.py).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from tether.domain import baremetal_states as bms
from tether.domain import compute_states as vm
from tether.domain.baremetal import Node
from tether.domain.compute import Instance
from tether.domain.invariants import Snapshot, Violation
from tether.drivers.hypervisor import FakeHypervisor
from tether.reconcile.instances import ZombieInterfaces
from tether.reconcile.queue import Key
from tether.reconcile.transients import StuckTransients

WAIT = bms.PROVISION_STATES.states[bms.DEPLOYWAIT].deadline
assert WAIT is not None


def server(uuid: str = "vm-1", **fields: Any) -> Instance:
    values: dict[str, Any] = {"name": uuid, "project_id": "p", "user_id": "u", "flavor_id": "f", "image_id": "i",
                              "vm_state": vm.BUILDING, "host": "hv-1", "deadline": 100.0}
    values.update(fields)
    return Instance(uuid=uuid, **values)


def node(uuid: str = "node-1", **fields: Any) -> Node:
    values: dict[str, Any] = {"provision_state": bms.DEPLOYWAIT, "provision_updated_at": 10.0}
    values.update(fields)
    return Node(uuid=uuid, name=uuid, **values)


def next_look(snapshot: Snapshot, key: Key) -> float | None:
    return StuckTransients(None).next_look(snapshot, key)  # type: ignore[arg-type]


def test_an_instance_in_flight_is_looked_at_again_when_its_deadline_passes() -> None:
    snap = Snapshot(now=40.0, instances=[server("vm-0", deadline=50.0), server(), server("vm-2", deadline=45.0)])
    assert next_look(snap, Key("instance", "vm-1")) == 60.0
    acting = replace(snap, instances=[server(vm_state=vm.ACTIVE, task_state=vm.REBOOTING)])
    assert next_look(acting, Key("instance", "vm-1")) == 60.0
    # at rest, deleted, without a deadline, or past it already: nothing to wait for
    for instance in (server(vm_state=vm.ACTIVE), server(vm_state=vm.STOPPED), server(vm_state=vm.ERROR),
                     server(deleted=True), server(deadline=None), server(deadline=40.0),
                     server(deadline=30.0)):
        assert next_look(replace(snap, instances=[instance]), Key("instance", "vm-1")) is None, instance


def test_a_node_in_flight_is_looked_at_again_when_its_states_deadline_passes() -> None:
    nodes = [node("node-0", provision_updated_at=20.0), node(), node("node-2", provision_updated_at=15.0)]
    snap = Snapshot(now=40.0, nodes=nodes)
    assert next_look(snap, Key("node", "node-1")) == 10.0 + WAIT - 40.0
    assert next_look(snap, Key("node", "node-0")) == 20.0 + WAIT - 40.0
    # a stable state, one the table does not know, or a deadline passed: nothing to wait for
    for state in (bms.ACTIVE, bms.AVAILABLE, "no such state"):
        assert next_look(replace(snap, nodes=[node(provision_state=state)]), Key("node", "node-1")) is None, state
    assert next_look(replace(snap, now=10.0 + WAIT), Key("node", "node-1")) is None
    assert next_look(replace(snap, now=11.0 + WAIT, nodes=[node()]), Key("node", "node-1")) is None
    # the earliest of two waits
    assert next_look(Snapshot(now=40.0, nodes=[node(), node(provision_updated_at=12.0)]),
                     Key("node", "node-1")) == 10.0 + WAIT - 40.0


def fresh(text: str) -> str:
    """An equal string that is another object, as one read from a database is."""
    return "".join(list(text))


def test_a_key_read_from_a_store_compares_by_value() -> None:
    snap = Snapshot(now=40.0, instances=[server(vm_state=fresh(vm.BUILDING))], nodes=[node()])
    assert next_look(snap, Key("instance", fresh("vm-1"))) == 60.0
    assert next_look(snap, Key("node", fresh("node-1"))) == 10.0 + WAIT - 40.0
    assert next_look(snap, Key(fresh("instance"), "vm-1")) == 60.0


def test_an_instance_key_never_reads_the_nodes_nor_a_node_key_the_instances() -> None:
    snap = Snapshot(now=40.0, instances=[server("node-1")], nodes=[node("vm-1")])
    assert next_look(snap, Key("instance", "vm-1")) is None
    assert next_look(snap, Key("node", "node-1")) is None


async def test_zombie_interfaces_of_a_gone_instance_clear_its_devices_and_domain_only() -> None:
    hypervisor = FakeHypervisor()
    for uuid in ("vm-0", "vm-1", "vm-2"):
        hypervisor.create_domain("hv-1", uuid)
        hypervisor.plug("hv-1", uuid, f"port-{uuid}", "fa:16:3e:00:00:01")

    async def live_instance(uuid: str) -> None:
        return None

    cloud = SimpleNamespace(compute=SimpleNamespace(live_instance=live_instance),
                            world=SimpleNamespace(hypervisor=hypervisor))
    reconciler = ZombieInterfaces(cloud)  # type: ignore[arg-type]
    violation = Violation("zombie-interface", {"instance": fresh("vm-1")}, "its instance is gone")
    assert await reconciler.mend(violation) is True
    assert [i.instance_uuid for i in hypervisor.interfaces()] == ["vm-0", "vm-2"]
    assert sorted(hypervisor.domains()) == [("hv-1", "vm-0"), ("hv-1", "vm-2")]
    # nothing plugged any more: nothing changed, though a domain may be cleared
    assert await reconciler.mend(violation) is False


async def test_zombie_interfaces_of_a_gone_instance_without_a_domain_are_unplugged() -> None:
    # a device left on a host where the instance has no domain (a destroy that did not take its devices)
    hypervisor = FakeHypervisor()
    hypervisor.plug("hv-2", "vm-1", "port-1", "fa:16:3e:00:00:01")

    async def live_instance(uuid: str) -> None:
        return None

    cloud = SimpleNamespace(compute=SimpleNamespace(live_instance=live_instance),
                            world=SimpleNamespace(hypervisor=hypervisor))
    violation = Violation("zombie-interface", {"instance": "vm-1"}, "its instance is gone")
    assert await ZombieInterfaces(cloud).mend(violation) is True  # type: ignore[arg-type]
    assert hypervisor.interfaces() == []
