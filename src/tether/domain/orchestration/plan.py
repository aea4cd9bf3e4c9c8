"""What a stack action does next, decided from the resources' states alone.

The engine asks this after every change and acts on the answer, so an action resumes from
whatever its resources' rows say: after a crash, a restart asks the same question of the
same rows (design rule 5). A create goes dependencies first, a delete dependents first;
every resource whose turn has come starts at once (heat creates independent resources
concurrently).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tether.domain.orchestration.stack_states import (
    COMPLETE,
    CREATE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    INIT_COMPLETE,
    UPDATE,
    state,
)

# A resource in one of these has a physical resource the stack can use.
USABLE = frozenset({state(CREATE, COMPLETE), state(UPDATE, COMPLETE), "CHECK_COMPLETE"})
# A resource in one of these has nothing left to delete.
GONE = frozenset({INIT_COMPLETE, state(DELETE, COMPLETE)})


@dataclass(frozen=True)
class Step:
    """Start these resources (names) now; the action is over when ``finished`` (``failed`` says how)."""

    start: tuple[str, ...] = ()
    finished: bool = False
    failed: tuple[str, ...] = ()


def create_step(dependencies: Mapping[str, frozenset[str]], states: Mapping[str, str]) -> Step:
    """The next step of a create: each resource once everything it needs is usable."""
    failed = tuple(name for name in dependencies if states.get(name, INIT_COMPLETE).endswith(FAILED))
    running = any(states.get(name, INIT_COMPLETE).endswith(IN_PROGRESS) for name in dependencies)
    if failed:
        # heat stops starting resources once one has failed, and fails the stack when the rest settle
        return Step(finished=not running, failed=failed)
    start = tuple(name for name, needs in dependencies.items()
                  if states.get(name, INIT_COMPLETE) == INIT_COMPLETE
                  and all(states.get(need) in USABLE for need in needs))
    finished = not start and not running and all(states.get(name) in USABLE for name in dependencies)
    return Step(start=start, finished=finished)


def delete_step(dependencies: Mapping[str, frozenset[str]], states: Mapping[str, str]) -> Step:
    """The next step of a delete: each resource once nothing that needs it is left."""
    needed_by: dict[str, set[str]] = {name: set() for name in states}
    for name, needs in dependencies.items():
        for need in needs:
            needed_by.setdefault(need, set()).add(name)
    failed = tuple(name for name, current in states.items() if current == state(DELETE, FAILED))
    running = any(current == state(DELETE, IN_PROGRESS) for current in states.values())
    if failed:
        return Step(finished=not running, failed=failed)
    start = tuple(name for name, current in states.items()
                  if current not in GONE and current != state(DELETE, IN_PROGRESS)
                  and all(states.get(user, INIT_COMPLETE) in GONE for user in needed_by.get(name, ())))
    finished = not start and not running and all(current in GONE for current in states.values())
    return Step(start=start, finished=finished)


def update_step(dependencies: Mapping[str, frozenset[str]], states: Mapping[str, str], done: frozenset[str]) -> Step:
    """The next step of an update: each resource of the new template once everything it needs has
    been dealt with in this update (kept, updated, replaced or made) and is usable.

    ``done`` names the resources this update has dealt with; the others are still to look at,
    whatever state an earlier action left them in (a FAILED one is replaced).
    """
    failed = tuple(name for name in dependencies if name in done and states.get(name, "").endswith(FAILED))
    running = any(states.get(name, "").endswith(IN_PROGRESS) for name in dependencies)
    if failed:
        return Step(finished=not running, failed=failed)
    start = tuple(name for name, needs in dependencies.items()
                  if name not in done and not states.get(name, "").endswith(IN_PROGRESS)
                  and all(need in done and states.get(need) in USABLE for need in needs))
    finished = not start and not running and all(name in done and states.get(name) in USABLE
                                                  for name in dependencies)
    return Step(start=start, finished=finished)


def needs_replacement(current_state: str, same_type: bool, properties_need_it: bool) -> bool:
    """heat's rule: a resource whose last action failed (or that never finished) is replaced, as is one
    whose type changed or whose changed properties cannot be updated in place."""
    return not same_type or current_state not in USABLE or properties_need_it
