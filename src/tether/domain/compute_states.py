"""Nova's instance states, the transitions between them, and the API status they show as.

An instance's state is a pair: its ``vm_state`` (where it is in its life) and
its ``task_state`` (what is being done to it now, if anything). Every change
of either goes through ``next_state`` over the table below, which is the one
place that says what may follow what, as ironic's provision states go through
their own table. The status the API shows is read from ``STATUS``, as nova's
``common.status_from_state`` reads its own map.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.domain.state_machine import IllegalTransition

# vm_state values
BUILDING = "building"
ACTIVE = "active"
ERROR = "error"
DELETED = "deleted"
STOPPED = "stopped"

# task_state values
SCHEDULING = "scheduling"
NETWORKING = "networking"
SPAWNING = "spawning"
DELETING = "deleting"

# power_state values, as nova numbers them
NOSTATE = 0
RUNNING = 1
SHUTDOWN = 4

# Rule 3: how long an instance may be building, or deleting, before a reconciler ends it.
BUILD_TIMEOUT = 3600.0
DELETE_TIMEOUT = 1800.0

VM_STATES: dict[str, str] = {
    BUILDING: "Being scheduled, networked and spawned; ends ACTIVE, ERROR or deleted (rule 3).",
    ACTIVE: "Running.",
    STOPPED: "Powered off.",
    ERROR: "Failed; the fault says why. Only delete helps.",
    DELETED: "Gone.",
}

TASK_STATES: dict[str | None, str] = {
    None: "Nothing is being done to the instance.",
    SCHEDULING: "A host or node is being chosen.",
    NETWORKING: "Its ports are being allocated and bound.",
    SPAWNING: "Its guest or node is being brought up.",
    DELETING: "It is being deleted; nothing else may start on it.",
}

InstanceState = tuple[str, str | None]

SETTLED = (ACTIVE, STOPPED, ERROR)
_BUILD_STEPS = (SCHEDULING, NETWORKING, SPAWNING)

# (vm_state, task_state, event) -> (vm_state, task_state)
TRANSITIONS: dict[tuple[str, str | None, str], InstanceState] = {
    # a build, step by step
    (BUILDING, SCHEDULING, "network"): (BUILDING, NETWORKING),
    (BUILDING, NETWORKING, "spawn"): (BUILDING, SPAWNING),
    (BUILDING, SCHEDULING, "spawn"): (BUILDING, SPAWNING),
    **{(BUILDING, step, "built"): (ACTIVE, None) for step in _BUILD_STEPS},
    # rule 3 (seed 003): every build step has a way out; a failure while deleting keeps the delete going
    **{(BUILDING, step, "fail"): (ERROR, None) for step in _BUILD_STEPS},
    (ACTIVE, None, "fail"): (ERROR, None),
    (STOPPED, None, "fail"): (ERROR, None),
    (ERROR, None, "fail"): (ERROR, None),
    **{(vm_state, DELETING, "fail"): (ERROR, DELETING) for vm_state in (BUILDING, *SETTLED)},
    # a delete is accepted in any state short of gone, and wins over a build
    **{(BUILDING, step, "delete"): (BUILDING, DELETING) for step in _BUILD_STEPS},
    **{(vm_state, None, "delete"): (vm_state, DELETING) for vm_state in SETTLED},
    **{(vm_state, DELETING, "deleted"): (DELETED, None) for vm_state in (BUILDING, *SETTLED)},
    **{(vm_state, DELETING, "delete_failed"): (ERROR, None) for vm_state in (BUILDING, *SETTLED)},
}


class IllegalInstanceTransition(IllegalTransition):
    """An instance was asked to do what its current state does not allow."""

    def __init__(self, vm_state: str, task_state: str | None, event: str) -> None:
        super().__init__("instance state", f"{vm_state}/{task_state or '-'}", event)
        self.vm_state, self.task_state = vm_state, task_state


def next_state(vm_state: str, task_state: str | None, event: str) -> InstanceState:
    """The state that ``event`` leads to from (``vm_state``, ``task_state``), or IllegalInstanceTransition."""
    try:
        return TRANSITIONS[(vm_state, task_state, event)]
    except KeyError:
        raise IllegalInstanceTransition(vm_state, task_state, event) from None


def can(vm_state: str, task_state: str | None, event: str) -> bool:
    return (vm_state, task_state, event) in TRANSITIONS


@dataclass(frozen=True)
class Transient:
    """A state that must end by itself (rule 3): its deadline and the event that ends it."""

    deadline: float
    on_timeout: str


# What a reconciler does with an instance that sat in one of these past its deadline.
TRANSIENT: dict[InstanceState, Transient] = {
    **{(BUILDING, step): Transient(BUILD_TIMEOUT, "fail") for step in _BUILD_STEPS},
    **{(vm_state, DELETING): Transient(DELETE_TIMEOUT, "deleted") for vm_state in (BUILDING, *SETTLED)},
}

# nova's api/openstack/common.py _STATE_MAP: vm_state -> task_state (or "default") -> status
STATUS: dict[str, dict[str | None, str]] = {
    BUILDING: {"default": "BUILD"},
    ACTIVE: {"default": "ACTIVE"},
    STOPPED: {"default": "SHUTOFF"},
    ERROR: {"default": "ERROR"},
    DELETED: {"default": "DELETED"},
}


def api_status(vm_state: str, task_state: str | None) -> str:
    """The ``status`` field the compute API shows for a vm_state and task_state."""
    by_task = STATUS.get(vm_state, {"default": "UNKNOWN"})
    return by_task.get(task_state, by_task["default"])
