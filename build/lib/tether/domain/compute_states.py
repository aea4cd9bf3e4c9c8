"""Nova's instance states, the API status they show as, and the transitions between them."""

from __future__ import annotations

from tether.domain.state_machine import State, StateMachine

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

BUILD_TIMEOUT = 3600.0
DELETE_TIMEOUT = 1800.0

VM_STATES = StateMachine(
    "instance vm_state",
    [
        State(BUILDING, "Being scheduled, networked and spawned.", False, BUILD_TIMEOUT, "fail",
              ACTIVE),
        State(ACTIVE, "Running."),
        State(STOPPED, "Powered off."),
        State(ERROR, "Failed; the fault says why. Only delete helps."),
        State(DELETED, "Gone."),
    ],
    {
        (BUILDING, "built"): ACTIVE,
        (BUILDING, "fail"): ERROR,
        (BUILDING, "delete"): DELETED,
        (ACTIVE, "delete"): DELETED,
        (ACTIVE, "fail"): ERROR,
        (ACTIVE, "stop"): STOPPED,
        (STOPPED, "start"): ACTIVE,
        (STOPPED, "delete"): DELETED,
        (ERROR, "delete"): DELETED,
    },
)


def api_status(vm_state: str, task_state: str | None) -> str:
    """The ``status`` field the compute API shows for a vm_state and task_state."""
    if vm_state == BUILDING:
        return "BUILD"
    if vm_state == DELETED:
        return "DELETED"
    if vm_state == ERROR:
        return "ERROR"
    if vm_state == STOPPED:
        return "SHUTOFF"
    return "ACTIVE"
