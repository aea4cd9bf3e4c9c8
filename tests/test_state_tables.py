"""An instance's vm_state and task_state, and a port's binding and status, change only through their tables."""

from __future__ import annotations

import pytest

from tether.domain import compute_states as vm
from tether.domain import port_states
from tether.domain.compute import Instance
from tether.domain.network import ACTIVE, DOWN
from tether.runtime.runtime import Runtime
from tether.services.compute import instance_state
from tether.store.database import Store

EVERY_STATE = [(vm_state, task) for vm_state in vm.VM_STATES for task in vm.TASK_STATES]
EVENTS = sorted({event for (_, _, event) in vm.TRANSITIONS})


def test_every_transient_state_has_a_deadline_and_a_way_out() -> None:
    # rule 3: no transient state without an exit.
    transient = {state for state in EVERY_STATE if state[0] == vm.BUILDING or state[1] is not None}
    reachable = {target for target in vm.TRANSITIONS.values()} | {(vm.BUILDING, vm.SCHEDULING)}
    for state in sorted(transient & reachable, key=str):
        assert state in vm.TRANSIENT, f"{state} has no deadline"
        ending = vm.TRANSIENT[state]
        assert vm.can(*state, ending.on_timeout), f"{state} cannot {ending.on_timeout}"
        vm_state, task = vm.next_state(*state, ending.on_timeout)
        assert vm_state != vm.BUILDING and task in (None, vm.DELETING), f"{state} times out into {vm_state}/{task}"


def test_a_delete_wins_over_a_build_and_a_built_instance_cannot_be_built_again() -> None:
    assert vm.next_state(vm.BUILDING, vm.SPAWNING, "delete") == (vm.BUILDING, vm.DELETING)
    for illegal in ((vm.BUILDING, vm.DELETING, "built"), (vm.ACTIVE, None, "built"), (vm.DELETED, None, "delete"),
                    (vm.ACTIVE, vm.DELETING, "delete"), (vm.ACTIVE, None, "deleted")):
        with pytest.raises(vm.IllegalInstanceTransition) as raised:
            vm.next_state(*illegal)
        assert (raised.value.vm_state, raised.value.task_state, raised.value.event) == illegal


@pytest.mark.parametrize(("vm_state", "task_state", "status"), [
    (vm.BUILDING, vm.SCHEDULING, "BUILD"), (vm.BUILDING, vm.DELETING, "BUILD"), (vm.ACTIVE, None, "ACTIVE"),
    (vm.ACTIVE, vm.DELETING, "ACTIVE"), (vm.STOPPED, None, "SHUTOFF"), (vm.ERROR, vm.DELETING, "ERROR"),
    (vm.DELETED, None, "DELETED")])
def test_the_api_status_is_read_from_nova_s_map(vm_state: str, task_state: str | None, status: str) -> None:
    assert vm.api_status(vm_state, task_state) == status


async def test_an_illegal_transition_is_a_typed_error_and_writes_nothing(database) -> None:
    runtime = Runtime()
    store = Store(database, runtime)
    instance = Instance(uuid="7c1d0a2e-0000-4000-8000-000000000001", name="done", project_id="p", user_id="u",
                        flavor_id="1", image_id=None, vm_state=vm.ACTIVE, task_state=None)
    async with store.begin() as uow:
        await uow.instances.add(instance)
    with pytest.raises(vm.IllegalInstanceTransition):
        async with store.begin() as uow:
            await instance_state.move(uow, instance, "built", runtime.now(), launched_at=1.0)
    async with store.begin() as uow:
        unchanged = await uow.instances.get(instance.uuid)
    assert unchanged is not None
    assert (unchanged.vm_state, unchanged.task_state, unchanged.launched_at) == (vm.ACTIVE, None, instance.launched_at)


async def test_a_guarded_move_loses_to_a_delete_that_came_first(database) -> None:
    runtime = Runtime()
    store = Store(database, runtime)
    seen = Instance(uuid="7c1d0a2e-0000-4000-8000-000000000002", name="racing", project_id="p", user_id="u",
                    flavor_id="1", image_id=None, vm_state=vm.BUILDING, task_state=vm.SCHEDULING)
    async with store.begin() as uow:
        await uow.instances.add(seen)
        await instance_state.move(uow, seen, "delete", runtime.now())
    async with store.begin() as uow:
        assert not await instance_state.move(uow, seen, "network", runtime.now(), unless_changed=True)
        current = await uow.instances.get(seen.uuid)
    assert current is not None and (current.vm_state, current.task_state) == (vm.BUILDING, vm.DELETING)


def test_a_port_is_active_only_while_bound_and_plugged() -> None:
    host = "compute-1"
    assert port_states.next_state("", DOWN, "bind") == (port_states.BOUND, DOWN)
    assert port_states.next_state(host, DOWN, "plugged") == (port_states.BOUND, ACTIVE)
    assert port_states.next_state(host, ACTIVE, "rebind") == (port_states.BOUND, ACTIVE)
    assert port_states.next_state(host, ACTIVE, "bind") == (port_states.BOUND, DOWN)
    assert port_states.next_state(host, ACTIVE, "unbind") == (port_states.UNBOUND, DOWN)
    assert port_states.next_state(host, ACTIVE, "unplugged") == (port_states.BOUND, DOWN)
    with pytest.raises(port_states.IllegalPortTransition):
        port_states.next_state("", DOWN, "plugged")  # an unbound port's device is nobody's to report
