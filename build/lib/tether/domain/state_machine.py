"""A state machine built from a table, after ironic's ``state_machine.py``.

A machine is a set of named states, each stable or transient, and a table of
``(state, event) -> state``. Every transient state must declare a deadline and
a failure event that leads out of it (design rule 3); ``validate()`` checks it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class State:
    name: str
    doc: str
    stable: bool = True
    deadline: float | None = None  # seconds a transient state may last
    on_timeout: str | None = None  # the event that leads out when it does
    target: str | None = None  # the stable state this transient one heads for


class IllegalTransition(Exception):
    def __init__(self, machine: str, state: str, event: str) -> None:
        super().__init__(f"{machine}: no '{event}' from state '{state}'")
        self.machine, self.state, self.event = machine, state, event


class StateMachine:
    def __init__(
        self, name: str, states: list[State], transitions: dict[tuple[str, str], str]
    ) -> None:
        self.name = name
        self.states = {state.name: state for state in states}
        self.transitions = dict(transitions)

    def next_state(self, state: str, event: str) -> str:
        try:
            return self.transitions[(state, event)]
        except KeyError:
            raise IllegalTransition(self.name, state, event) from None

    def can(self, state: str, event: str) -> bool:
        return (state, event) in self.transitions

    def is_transient(self, state: str) -> bool:
        return not self.states[state].stable

    def events_from(self, state: str) -> list[str]:
        return sorted(event for (source, event) in self.transitions if source == state)

    def validate(self) -> list[str]:
        """Every problem with the table; an empty list when it is sound."""
        problems: list[str] = []
        for (source, event), target in self.transitions.items():
            for name in (source, target):
                if name not in self.states:
                    problems.append(f"{source} --{event}--> {target}: unknown state {name!r}")
        for state in self.states.values():
            if state.stable:
                continue
            if state.deadline is None or state.on_timeout is None:
                problems.append(f"transient state {state.name!r} has no deadline and exit")
            elif not self.can(state.name, state.on_timeout):
                problems.append(
                    f"transient state {state.name!r}: timeout event {state.on_timeout!r} "
                    "leads nowhere"
                )
            else:
                exit_state = self.transitions[(state.name, state.on_timeout)]
                if not self.states[exit_state].stable:
                    problems.append(f"{state.name!r} times out into transient {exit_state!r}")
        return problems
