"""Ironic's provision-state table: every transient state has a deadline and a way out."""

from __future__ import annotations

import pytest

from tether.domain import baremetal_states as bms
from tether.domain.state_machine import IllegalTransition


def test_the_table_is_sound() -> None:
    assert bms.PROVISION_STATES.validate() == []


def test_every_transient_state_has_a_deadline_and_a_failure_edge_to_a_stable_state() -> None:
    machine = bms.PROVISION_STATES
    assert set(bms.TRANSIENT_STATES) == {
        bms.DEPLOYING, bms.DEPLOYWAIT, bms.DELETING, bms.CLEANING, bms.CLEANWAIT, bms.INSPECTING,
    }
    for name in bms.TRANSIENT_STATES:
        state = machine.states[name]
        assert state.deadline is not None and state.deadline > 0
        exit_state = machine.next_state(name, state.on_timeout)
        assert machine.states[exit_state].stable, name


@pytest.mark.parametrize(
    ("state", "event", "expected"),
    [
        (bms.AVAILABLE, "deploy", bms.DEPLOYING),
        (bms.DEPLOYWAIT, "delete", bms.DELETING),
        (bms.MANAGEABLE, "inspect", bms.INSPECTING),
        (bms.INSPECTING, "done", bms.MANAGEABLE),
        (bms.INSPECTFAIL, "inspect", bms.INSPECTING),
        (bms.DEPLOYWAIT, "abort", bms.DEPLOYFAIL),
        (bms.DEPLOYFAIL, "deploy", bms.DEPLOYING),
        (bms.ERROR, "delete", bms.DELETING),
        (bms.DELETING, "fail", bms.ERROR),
        (bms.CLEANING, "done", bms.AVAILABLE),
        (bms.CLEANING, "manage", bms.MANAGEABLE),
        (bms.MANAGEABLE, "provide", bms.CLEANING),
    ],
)
def test_transitions_follow_ironic(state: str, event: str, expected: str) -> None:
    assert bms.PROVISION_STATES.next_state(state, event) == expected


@pytest.mark.parametrize(("state", "event"), [(bms.AVAILABLE, "delete"), (bms.ACTIVE, "deploy"),
                                              (bms.CLEANING, "delete"), (bms.ENROLL, "provide")])
def test_what_the_table_lacks_is_an_illegal_transition(state: str, event: str) -> None:
    with pytest.raises(IllegalTransition) as raised:
        bms.PROVISION_STATES.next_state(state, event)
    assert (raised.value.state, raised.value.event) == (state, event)


def test_every_api_verb_names_an_event_of_the_table() -> None:
    events = {event for (_, event) in bms.PROVISION_STATES.transitions}
    assert set(bms.VERBS.values()) <= events
    assert bms.VERBS["deleted"] == bms.VERBS["undeploy"] == "delete"
    assert bms.VERBS["active"] == bms.VERBS["deploy"] == "deploy"
