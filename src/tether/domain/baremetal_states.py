"""Ironic's provision states and the transitions between them, as one table."""

from __future__ import annotations

from tether.domain.state_machine import State, StateMachine

ENROLL = "enroll"
MANAGEABLE = "manageable"
AVAILABLE = "available"
DEPLOYING = "deploying"
DEPLOYWAIT = "wait call-back"
DEPLOYFAIL = "deploy failed"
ACTIVE = "active"
DELETING = "deleting"
CLEANING = "cleaning"
CLEANWAIT = "clean wait"
CLEANFAIL = "clean failed"
INSPECTING = "inspecting"
INSPECTFAIL = "inspect failed"
ERROR = "error"

# How long a transient state may last before a reconciler fails it (seconds).
DEPLOY_TIMEOUT = 1800.0
CALLBACK_TIMEOUT = 1800.0
TEARDOWN_TIMEOUT = 600.0
CLEAN_TIMEOUT = 1800.0
INSPECT_TIMEOUT = 1800.0

PROVISION_STATES = StateMachine(
    "node provision state",
    [
        State(ENROLL, "Registered; the conductor has not verified its driver yet."),
        State(MANAGEABLE, "Verified and under the operator's control; not offered for use."),
        State(AVAILABLE, "Clean and free: the scheduler may place an instance on it."),
        State(DEPLOYING, "Being deployed.", False, DEPLOY_TIMEOUT, "fail", ACTIVE),
        State(DEPLOYWAIT, "Waiting for the deploy ramdisk to call back.", False,
              CALLBACK_TIMEOUT, "fail", ACTIVE),
        State(DEPLOYFAIL, "The last deploy failed; rebuild or tear it down."),
        State(ACTIVE, "Deployed and running an instance."),
        State(DELETING, "Being torn down: VIFs detached, instance forgotten.", False,
              TEARDOWN_TIMEOUT, "fail", AVAILABLE),
        State(CLEANING, "Being cleaned.", False, CLEAN_TIMEOUT, "fail", AVAILABLE),
        State(CLEANWAIT, "Waiting for the cleaning ramdisk.", False, CLEAN_TIMEOUT, "fail",
              AVAILABLE),
        State(CLEANFAIL, "Cleaning failed; the operator must look at it."),
        State(INSPECTING, "Having its hardware inspected.", False, INSPECT_TIMEOUT, "fail", MANAGEABLE),
        State(INSPECTFAIL, "Inspection failed; inspect again or manage it."),
        State(ERROR, "Tear-down failed; the operator must look at it."),
    ],
    {
        (ENROLL, "manage"): MANAGEABLE,
        (MANAGEABLE, "provide"): CLEANING,
        (MANAGEABLE, "clean"): CLEANING,
        (AVAILABLE, "manage"): MANAGEABLE,
        (AVAILABLE, "deploy"): DEPLOYING,
        (DEPLOYING, "wait"): DEPLOYWAIT,
        (DEPLOYING, "done"): ACTIVE,
        (DEPLOYING, "fail"): DEPLOYFAIL,
        (DEPLOYWAIT, "resume"): DEPLOYING,
        (DEPLOYWAIT, "fail"): DEPLOYFAIL,
        (DEPLOYWAIT, "abort"): DEPLOYFAIL,
        (DEPLOYWAIT, "delete"): DELETING,
        (DEPLOYFAIL, "deploy"): DEPLOYING,
        (DEPLOYFAIL, "rebuild"): DEPLOYING,
        (DEPLOYFAIL, "delete"): DELETING,
        (ACTIVE, "rebuild"): DEPLOYING,
        (ACTIVE, "delete"): DELETING,
        (ERROR, "rebuild"): DEPLOYING,
        (ERROR, "delete"): DELETING,
        (DELETING, "clean"): CLEANING,
        (DELETING, "fail"): ERROR,
        (CLEANING, "done"): AVAILABLE,
        # Manual cleaning (the "clean" verb from manageable) ends where it began.
        (CLEANING, "manage"): MANAGEABLE,
        (CLEANING, "wait"): CLEANWAIT,
        (CLEANING, "fail"): CLEANFAIL,
        (CLEANWAIT, "resume"): CLEANING,
        (CLEANWAIT, "fail"): CLEANFAIL,
        (CLEANWAIT, "abort"): CLEANFAIL,
        (CLEANFAIL, "manage"): MANAGEABLE,
        (MANAGEABLE, "inspect"): INSPECTING,
        (INSPECTING, "done"): MANAGEABLE,
        (INSPECTING, "fail"): INSPECTFAIL,
        (INSPECTFAIL, "inspect"): INSPECTING,
        (INSPECTFAIL, "manage"): MANAGEABLE,
    },
)

# The states a conductor job is working through; after a restart each is resumed.
TRANSIENT_STATES = tuple(
    name for name, state in PROVISION_STATES.states.items() if not state.stable
)

# The API's provision targets and the event each one means.
VERBS: dict[str, str] = {
    "manage": "manage",
    "provide": "provide",
    "active": "deploy",
    "deploy": "deploy",
    "deleted": "delete",
    "undeploy": "delete",
    "abort": "abort",
    "rebuild": "rebuild",
    "clean": "clean",
    "inspect": "inspect",
}

# States in which a node may be deleted without maintenance mode.
DELETE_ALLOWED_STATES = (ENROLL, MANAGEABLE, AVAILABLE, CLEANFAIL)

# Where nova's driver tears a node down rather than only cleaning up (nova's _UNPROVISION_STATES).
UNPROVISION_STATES = (ACTIVE, DEPLOYFAIL, ERROR, DEPLOYWAIT, DEPLOYING)

POWER_ON = "power on"
POWER_OFF = "power off"
POWER_TARGETS = {"power on": POWER_ON, "power off": POWER_OFF, "rebooting": POWER_ON,
                 "reboot": POWER_ON, "soft power off": POWER_OFF, "soft rebooting": POWER_ON}
