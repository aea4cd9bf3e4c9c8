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
PAUSED = "paused"
SUSPENDED = "suspended"
RESCUED = "rescued"
RESIZED = "resized"

# task_state values
SCHEDULING = "scheduling"
NETWORKING = "networking"
SPAWNING = "spawning"
DELETING = "deleting"
POWERING_OFF = "powering-off"
POWERING_ON = "powering-on"
REBOOTING = "rebooting"
REBOOTING_HARD = "rebooting_hard"
PAUSING = "pausing"
UNPAUSING = "unpausing"
SUSPENDING = "suspending"
RESUMING = "resuming"
REBUILDING = "rebuilding"
REBUILD_SPAWNING = "rebuild_spawning"
RESIZE_PREP = "resize_prep"
RESIZE_MIGRATING = "resize_migrating"
RESIZE_FINISH = "resize_finish"
RESIZE_REVERTING = "resize_reverting"
RESIZE_CONFIRMING = "resize_confirming"
RESCUING = "rescuing"
UNRESCUING = "unrescuing"
IMAGE_SNAPSHOT = "image_snapshot"
IMAGE_UPLOADING = "image_uploading"
IMAGE_BACKUP = "image_backup"

# power_state values, as nova numbers them
NOSTATE = 0
RUNNING = 1
PAUSED_POWER = 3
SHUTDOWN = 4
SUSPENDED_POWER = 7

# Rule 3: how long an instance may be building, or deleting, before a reconciler ends it.
BUILD_TIMEOUT = 3600.0
DELETE_TIMEOUT = 1800.0
# Rule 3: how long a server action (power, rebuild, resize, rescue, snapshot) may run.
ACTION_TIMEOUT = 1800.0

VM_STATES: dict[str, str] = {
    BUILDING: "Being scheduled, networked and spawned; ends ACTIVE, ERROR or deleted (rule 3).",
    ACTIVE: "Running.",
    STOPPED: "Powered off.",
    PAUSED: "Paused: its guest is frozen in memory.",
    SUSPENDED: "Suspended: its guest's memory is saved and the guest is off.",
    RESCUED: "Running a rescue image, its own disk attached beside it.",
    RESIZED: "Running on its new flavor, waiting for the user to confirm or revert the resize (VERIFY_RESIZE).",
    ERROR: "Failed; the fault says why. Only delete helps.",
    DELETED: "Gone.",
}

TASK_STATES: dict[str | None, str] = {
    None: "Nothing is being done to the instance.",
    SCHEDULING: "A host or node is being chosen.",
    NETWORKING: "Its ports are being allocated and bound.",
    SPAWNING: "Its guest or node is being brought up.",
    DELETING: "It is being deleted; nothing else may start on it.",
    POWERING_OFF: "Its guest or node is being powered off (stop).",
    POWERING_ON: "Its guest or node is being powered on (start).",
    REBOOTING: "Its guest is being rebooted softly.",
    REBOOTING_HARD: "Its guest or node is being power-cycled.",
    PAUSING: "Its guest is being paused.",
    UNPAUSING: "Its guest is being unpaused.",
    SUSPENDING: "Its guest is being suspended.",
    RESUMING: "Its guest is being resumed.",
    REBUILDING: "Its disk is being replaced with an image (a bare-metal node is redeployed).",
    REBUILD_SPAWNING: "Its rebuilt guest or node is being brought up.",
    RESIZE_PREP: "A resize is checking the new flavor.",
    RESIZE_MIGRATING: "A resize is powering off the guest to move it onto the new flavor.",
    RESIZE_FINISH: "A resize is bringing the guest up on its new flavor.",
    RESIZE_REVERTING: "A resize is being undone: the guest goes back to its old flavor.",
    RESIZE_CONFIRMING: "A resize is being confirmed: the old flavor's resources are let go.",
    RESCUING: "Its guest is being booted from a rescue image.",
    UNRESCUING: "Its guest is being booted from its own disk again.",
    IMAGE_SNAPSHOT: "A snapshot of its disk is being taken.",
    IMAGE_UPLOADING: "Its snapshot is being written to the image service.",
    IMAGE_BACKUP: "A backup of its disk is being taken (a snapshot that rotates out older backups).",
}

InstanceState = tuple[str, str | None]

SETTLED = (ACTIVE, STOPPED, ERROR, PAUSED, SUSPENDED, RESCUED, RESIZED)
_BUILD_STEPS = (SCHEDULING, NETWORKING, SPAWNING)


@dataclass(frozen=True)
class ServerAction:
    """A server action as nova's compute API allows it (``check_instance_state``) and its manager runs it.

    ``begin`` moves a settled instance into ``steps[0]``; ``step`` moves it on
    through ``steps``; ``done`` ends it in ``ends[vm_state it began in]``
    (``done_off`` in STOPPED, where nova keeps a powered-off guest off);
    ``abandon`` gives up leaving the vm_state as it was (nova's
    ``reverts_task_state``); ``fail`` leaves it in ERROR.
    """

    name: str  # the action's name in nova's 409: "Cannot 'stop' instance ..."
    event: str
    from_vm: tuple[str, ...]
    steps: tuple[str, ...]
    ends: dict[str, str]
    from_task: tuple[str | None, ...] = (None,)
    may_end_off: bool = False


def _same(*states: str) -> dict[str, str]:
    return {state: state for state in states}


ACTIONS: dict[str, ServerAction] = {action.event: action for action in (
    ServerAction("stop", "stop", (ACTIVE, ERROR), (POWERING_OFF,), {ACTIVE: STOPPED, ERROR: STOPPED}),
    ServerAction("start", "start", (STOPPED,), (POWERING_ON,), {STOPPED: ACTIVE}),
    ServerAction("reboot", "reboot", (ACTIVE,), (REBOOTING,), {ACTIVE: ACTIVE}),
    ServerAction("reboot", "reboot_hard", (ACTIVE, STOPPED, PAUSED, SUSPENDED, ERROR), (REBOOTING_HARD,),
                 dict.fromkeys((ACTIVE, STOPPED, PAUSED, SUSPENDED, ERROR), ACTIVE), from_task=(None, REBOOTING)),
    ServerAction("pause", "pause", (ACTIVE,), (PAUSING,), {ACTIVE: PAUSED}),
    ServerAction("unpause", "unpause", (PAUSED,), (UNPAUSING,), {PAUSED: ACTIVE}),
    ServerAction("suspend", "suspend", (ACTIVE,), (SUSPENDING,), {ACTIVE: SUSPENDED}),
    ServerAction("resume", "resume", (SUSPENDED,), (RESUMING,), {SUSPENDED: ACTIVE}),
    ServerAction("rebuild", "rebuild", (ACTIVE, STOPPED, ERROR), (REBUILDING, REBUILD_SPAWNING),
                 {ACTIVE: ACTIVE, STOPPED: STOPPED, ERROR: ACTIVE}),
    ServerAction("resize", "resize", (ACTIVE, STOPPED), (RESIZE_PREP, RESIZE_MIGRATING, RESIZE_FINISH),
                 {ACTIVE: RESIZED, STOPPED: RESIZED}),
    ServerAction("confirmResize", "confirm_resize", (RESIZED,), (RESIZE_CONFIRMING,), {RESIZED: ACTIVE},
                 may_end_off=True),
    ServerAction("revertResize", "revert_resize", (RESIZED,), (RESIZE_REVERTING,), {RESIZED: ACTIVE},
                 may_end_off=True),
    ServerAction("rescue", "rescue", (ACTIVE, STOPPED, ERROR), (RESCUING,), dict.fromkeys((ACTIVE, STOPPED, ERROR),
                                                                                          RESCUED)),
    ServerAction("unrescue", "unrescue", (RESCUED,), (UNRESCUING,), {RESCUED: ACTIVE}),
    ServerAction("createImage", "snapshot", (ACTIVE, STOPPED, PAUSED, SUSPENDED), (IMAGE_SNAPSHOT, IMAGE_UPLOADING),
                 _same(ACTIVE, STOPPED, PAUSED, SUSPENDED)),
    ServerAction("createBackup", "backup", (ACTIVE, STOPPED, PAUSED, SUSPENDED), (IMAGE_BACKUP, IMAGE_UPLOADING),
                 _same(ACTIVE, STOPPED, PAUSED, SUSPENDED)),
)}


# Every task state a server action passes through.
ACTION_STEPS = frozenset(step for action in ACTIONS.values() for step in action.steps)


def _action_transitions() -> dict[tuple[str, str | None, str], InstanceState]:
    table: dict[tuple[str, str | None, str], InstanceState] = {}
    for action in ACTIONS.values():
        for vm_state in action.from_vm:
            for task in action.from_task:
                table[(vm_state, task, action.event)] = (vm_state, action.steps[0])
            for here, then in zip(action.steps, action.steps[1:], strict=False):
                table[(vm_state, here, "step")] = (vm_state, then)
            for step in action.steps:
                table[(vm_state, step, "done")] = (action.ends[vm_state], None)
                if action.may_end_off:
                    table[(vm_state, step, "done_off")] = (STOPPED, None)
                # rule 3: every action's task state has a way out, and a delete wins over it
                table[(vm_state, step, "abandon")] = (vm_state, None)
                table[(vm_state, step, "fail")] = (ERROR, None)
                table[(vm_state, step, "delete")] = (vm_state, DELETING)
    return table


# (vm_state, task_state, event) -> (vm_state, task_state)
TRANSITIONS: dict[tuple[str, str | None, str], InstanceState] = {
    # a build, step by step
    (BUILDING, SCHEDULING, "network"): (BUILDING, NETWORKING),
    (BUILDING, NETWORKING, "spawn"): (BUILDING, SPAWNING),
    (BUILDING, SCHEDULING, "spawn"): (BUILDING, SPAWNING),
    **{(BUILDING, step, "built"): (ACTIVE, None) for step in _BUILD_STEPS},
    # rule 3 (seed 003): every build step has a way out; a failure while deleting keeps the delete going
    **{(BUILDING, step, "fail"): (ERROR, None) for step in _BUILD_STEPS},
    **{(vm_state, None, "fail"): (ERROR, None) for vm_state in SETTLED},
    **{(vm_state, DELETING, "fail"): (ERROR, DELETING) for vm_state in (BUILDING, *SETTLED)},
    # a delete is accepted in any state short of gone, and wins over a build
    **{(BUILDING, step, "delete"): (BUILDING, DELETING) for step in _BUILD_STEPS},
    **{(vm_state, None, "delete"): (vm_state, DELETING) for vm_state in SETTLED},
    **{(vm_state, DELETING, "deleted"): (DELETED, None) for vm_state in (BUILDING, *SETTLED)},
    **{(vm_state, DELETING, "delete_failed"): (ERROR, None) for vm_state in (BUILDING, *SETTLED)},
    # server actions (start, stop, reboot, rebuild, resize, ...), from ACTIONS
    **_action_transitions(),
    # an admin's os-resetState: out of any settled state or action, never out of a delete
    **{(vm_state, task, f"reset_{target}"): (target, None)
       for vm_state in SETTLED for task in (None, *{s for a in ACTIONS.values() for s in a.steps})
       for target in (ACTIVE, ERROR)},
}


def refusal(vm_state: str, task_state: str | None, event: str) -> tuple[str, str | None] | None:
    """Why nova refuses ``event`` here: ("vm_state", state) or ("task_state", state), or None if it may run."""
    action = ACTIONS[event]
    if vm_state not in action.from_vm:
        return "vm_state", vm_state
    if task_state not in action.from_task:
        return "task_state", task_state
    return None


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
    # an action nothing drives any more is given up; the power state is then read from the driver
    **{(vm_state, step): Transient(ACTION_TIMEOUT, "abandon")
       for action in ACTIONS.values() for vm_state in action.from_vm for step in action.steps},
}

# nova's api/openstack/common.py _STATE_MAP: vm_state -> task_state (or "default") -> status
_REBOOT = {REBOOTING: "REBOOT", REBOOTING_HARD: "HARD_REBOOT"}
_REBUILD = {REBUILDING: "REBUILD", REBUILD_SPAWNING: "REBUILD"}
_RESIZE = {RESIZE_PREP: "RESIZE", RESIZE_MIGRATING: "RESIZE", RESIZE_FINISH: "RESIZE"}
STATUS: dict[str, dict[str | None, str]] = {
    BUILDING: {"default": "BUILD"},
    ACTIVE: {"default": "ACTIVE", **_REBOOT, **_REBUILD, **_RESIZE},
    STOPPED: {"default": "SHUTOFF", **_REBOOT, **_REBUILD, **_RESIZE},
    RESIZED: {"default": "VERIFY_RESIZE", RESIZE_REVERTING: "REVERT_RESIZE"},
    PAUSED: {"default": "PAUSED", REBOOTING_HARD: "HARD_REBOOT"},
    SUSPENDED: {"default": "SUSPENDED", REBOOTING_HARD: "HARD_REBOOT"},
    RESCUED: {"default": "RESCUE"},
    ERROR: {"default": "ERROR", **_REBUILD, REBOOTING_HARD: "HARD_REBOOT"},
    DELETED: {"default": "DELETED"},
}


def api_status(vm_state: str, task_state: str | None) -> str:
    """The ``status`` field the compute API shows for a vm_state and task_state."""
    by_task = STATUS.get(vm_state, {"default": "UNKNOWN"})
    return by_task.get(task_state, by_task["default"])
